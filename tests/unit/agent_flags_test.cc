// lockstep-agent's flags and how they combine with --config.
#include "agent/agent_flags.h"

#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "common/files.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test_util.h"

namespace lockstep {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

absl::StatusOr<AgentConfig> FromLine(const std::string& line) {
  std::vector<std::string> args = absl::StrSplit(line, ' ', absl::SkipEmpty());
  auto flags = ParseFlags(args, AgentCommandSpec());
  if (!flags.ok()) return flags.status();
  return AgentConfigFromFlags(*flags);
}

TEST(AgentFlags, WithoutAConfigEveryFlagApplies) {
  auto c = FromLine("--listen 127.0.0.1:0 --root /a --root=/b,/c --insecure --role oss "
                    "--devices sda,sdb --tls_allow ops --default_lease_ms 700 "
                    "--test_delay_per_transfer_us 5 --allow_drop_caches=false");
  ASSERT_OK(c);
  EXPECT_EQ(c->listen, "127.0.0.1:0");
  EXPECT_THAT(c->options.roots, ElementsAre("/a", "/b", "/c"));
  EXPECT_TRUE(c->insecure);
  EXPECT_EQ(c->options.role, v1::OSS);
  EXPECT_THAT(c->options.telemetry_options.devices, ElementsAre("sda", "sdb"));
  EXPECT_THAT(c->tls_allow, ElementsAre("ops"));
  EXPECT_EQ(c->options.default_lease_ms, 700u);
  EXPECT_EQ(c->options.runner.test_delay_per_transfer, absl::Microseconds(5));
  EXPECT_FALSE(c->options.allow_drop_caches);
  EXPECT_EQ(c->options.telemetry_options.interval_ms, 1000u);  // the flag's default

  auto defaults = FromLine("");
  ASSERT_OK(defaults);
  EXPECT_EQ(defaults->listen, "0.0.0.0:7070");
  EXPECT_THAT(defaults->tls_allow, ElementsAre("controller"));
  EXPECT_TRUE(defaults->options.allow_drop_caches);
  EXPECT_EQ(defaults->options.role, v1::CLIENT);
}

TEST(AgentFlags, TheConfigGivesDefaultsFlagsGivenWin) {
  testing::TempDir dir;
  ASSERT_OK(WriteFileAtomically(dir / "agent.toml",
                                "listen = \"10.0.0.1:7070\"\nrole = \"mds\"\nroots = [\"/cfg\"]\n"
                                "[permissions]\ndrop_caches = false\n"
                                "[limits]\nmax_tasks = 16\ndefault_lease_ms = 900\n"));
  auto c = FromLine("--config " + (dir / "agent.toml") + " --listen 127.0.0.1:9");
  ASSERT_OK(c);
  EXPECT_EQ(c->listen, "127.0.0.1:9");            // given
  EXPECT_EQ(c->options.role, v1::MDS);           // from the config, not the flag's default
  EXPECT_THAT(c->options.roots, ElementsAre("/cfg"));
  EXPECT_FALSE(c->options.allow_drop_caches);
  EXPECT_EQ(c->options.max_tasks, 16u);          // config only
  EXPECT_EQ(c->options.default_lease_ms, 900u);
  c = FromLine("--config " + (dir / "agent.toml") +
               " --root /x --allow_drop_caches --default_lease_ms 5000");
  ASSERT_OK(c);
  EXPECT_THAT(c->options.roots, ElementsAre("/x"));
  EXPECT_TRUE(c->options.allow_drop_caches);
  EXPECT_EQ(c->options.default_lease_ms, 5000u);  // equal to the default, but given
}

TEST(AgentFlags, ErrorsNameTheValue) {
  EXPECT_EQ(FromLine("--role boss").status().message(), "--role boss is not one of client, oss, mds");
  EXPECT_EQ(FromLine("--telemetry_interval_ms 10").status().message(),
            "--telemetry_interval_ms 10: out of range; use 50 to 3600000 (see lockstep-agent "
            "--help)");
  EXPECT_EQ(FromLine("--rot /x").status().message(),
            "--rot: unknown flag; did you mean --root? (see lockstep-agent --help)");
  EXPECT_THAT(FromLine("--config /nonexistent/agent.toml").status().message(),
              HasSubstr("/nonexistent/agent.toml"));
}

}  // namespace
}  // namespace lockstep
