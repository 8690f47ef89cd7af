#include "agent/config.h"

#include "common/files.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test_util.h"

namespace lockstep {
namespace {

using ::testing::HasSubstr;

TEST(AgentConfig, TheShippedExampleParses) {
  auto text = ReadFileToString(std::string(LOCKSTEP_SOURCE_DIR) + "/deploy/agent.toml.example");
  ASSERT_OK(text);
  auto c = ParseAgentConfig(*text, "agent.toml.example");
  ASSERT_OK(c);
  EXPECT_EQ(c->listen, "0.0.0.0:7070");
  EXPECT_EQ(c->options.role, v1::CLIENT);
  EXPECT_EQ(c->options.roots, std::vector<std::string>{"/lustre/scratch/lockstep"});
  EXPECT_EQ(c->tls_ca, "/etc/lockstep/ca.pem");
  EXPECT_EQ(c->tls_allow, std::vector<std::string>{"controller"});
  EXPECT_TRUE(c->options.allow_drop_caches);
  EXPECT_FALSE(c->options.allow_lustre);
  EXPECT_EQ(c->options.max_tasks, 256u);
  EXPECT_EQ(c->options.max_bytes_per_phase, 10ULL << 40);
  EXPECT_EQ(c->options.telemetry_options.interval_ms, 1000u);
  EXPECT_TRUE(c->options.telemetry_options.process_cpu);
}

TEST(AgentConfig, PerProcessCpuCanBeSwitchedOff) {
  auto c = ParseAgentConfig("[telemetry]\nprocesses = false\n", "a.toml");
  ASSERT_OK(c);
  EXPECT_FALSE(c->options.telemetry_options.process_cpu);
  auto bad = ParseAgentConfig("[telemetry]\nprocesses = \"no\"\n", "a.toml");
  EXPECT_THAT(bad.status().message(), ::testing::AllOf(HasSubstr("a.toml:2:"),
                                                       HasSubstr("processes")));
}

TEST(AgentConfig, BadInputNamesThePlaceAndTheKey) {
  auto unknown = ParseAgentConfig("[permissions]\ndrop_cache = true\n", "a.toml");
  EXPECT_THAT(unknown.status().message(),
              ::testing::AllOf(HasSubstr("a.toml:2:"), HasSubstr("unknown key 'drop_cache'"),
                               HasSubstr("drop_caches, lustre")));
  auto type = ParseAgentConfig("roots = \"/x\"\n", "a.toml");
  EXPECT_THAT(type.status().message(), HasSubstr("key 'roots': expected a list of strings"));
  auto role = ParseAgentConfig("role = \"boss\"\n", "a.toml");
  EXPECT_THAT(role.status().message(), HasSubstr("use client, oss or mds"));
  auto size = ParseAgentConfig("[limits]\nmax_bytes_per_phase = \"1x\"\n", "a.toml");
  EXPECT_THAT(size.status().message(), HasSubstr("unknown unit"));
  auto toml = ParseAgentConfig("listen = \n", "a.toml");
  EXPECT_THAT(toml.status().message(), HasSubstr("a.toml:1:"));
  EXPECT_THAT(toml.status().message(), HasSubstr("malformed TOML"));
}

}  // namespace
}  // namespace lockstep
