// Hostfiles: "HOST:PORT [ROLE]" lines (controller/cli/reach_agents.h).
#include "controller/cli/reach_agents.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test_util.h"

namespace lockstep {
namespace {

using ::testing::HasSubstr;

TEST(Hostfile, RolesAreOptionalAndNamed) {
  auto agents = ParseHostfileAgents(
      "127.0.0.31:7070  client   # client1\n127.0.0.11:7070 oss\n\n# a comment\n"
      "  127.0.0.20:7070\tmds\nn7:7070\n",
      "hosts");
  ASSERT_OK(agents.status());
  ASSERT_EQ(agents->size(), 4u);
  EXPECT_EQ((*agents)[0].role, v1::CLIENT);
  EXPECT_EQ((*agents)[1].role, v1::OSS);
  EXPECT_EQ((*agents)[2].address, "127.0.0.20:7070");
  EXPECT_EQ((*agents)[2].role, v1::MDS);
  EXPECT_EQ((*agents)[3].role, v1::ROLE_UNSPECIFIED);  // the agent's own --role
  auto addresses = ParseHostfile("a:1 oss\nb:2\n", "h");
  ASSERT_OK(addresses.status());
  EXPECT_THAT(*addresses, ::testing::ElementsAre("a:1", "b:2"));
}

TEST(Hostfile, BadLinesNameTheFileLineAndFix) {
  EXPECT_THAT(ParseHostfileAgents("a:1\nb:2 storage\n", "hosts").status().message(),
              HasSubstr("--hostfile hosts:2: role \"storage\" of b:2: use client, oss or mds"));
  EXPECT_THAT(ParseHostfileAgents("a:1 oss extra\n", "hosts").status().message(),
              HasSubstr("--hostfile hosts:1: \"a:1 oss extra\": write HOST:PORT and optionally"));
  EXPECT_THAT(ParseHostfileAgents("a:1\na:1 oss\n", "h").status().message(),
              HasSubstr("listed twice"));
}

}  // namespace
}  // namespace lockstep
