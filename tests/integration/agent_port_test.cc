// One agent per port: a second lockstep-agent on the port a running agent
// holds must refuse to start (gRPC's default SO_REUSEPORT would let it share
// the port and take some of the first agent's connections).
#include <filesystem>

#include <grpcpp/grpcpp.h>

#include "absl/strings/str_format.h"
#include "common/net.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "integration/test_cluster.h"
#include "lockstep/v1/agent.grpc.pb.h"
#include "test_util.h"

namespace lockstep::testing {
namespace {

using ::testing::HasSubstr;

// Identify over a fresh channel (a new connection each time, so a second
// listener on the port would get its share); the answering agent's facts.
absl::StatusOr<v1::HostFacts> Identify(const std::string& address) {
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);  // no connection reuse across channels
  auto channel =
      grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(), args);
  auto stub = v1::Agent::NewStub(channel);
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
  v1::HostFacts facts;
  grpc::Status s = stub->Identify(&ctx, v1::IdentifyRequest(), &facts);
  if (!s.ok()) {
    return absl::UnavailableError(
        absl::StrFormat("Identify on %s: %s", address, s.error_message()));
  }
  return facts;
}

TEST(AgentPortTest, ASecondAgentOnATakenPortRefusesAndTheFirstKeepsServing) {
  TestCluster cluster;
  ASSERT_OK(cluster.Start({.agents = {AgentSpec{}}, .dirs = {"data", "second"}}));
  const std::string first = cluster.address(0);
  auto hostport = SplitHostPort(first);
  ASSERT_OK(hostport);
  const int port = hostport->second;
  ASSERT_GT(port, 0);

  CommandResult second = RunCommand(
      {BinDir() + "/lockstep-agent", "--listen", first, "--root", cluster.dir(0, "second"),
       "--insecure"},
      std::chrono::seconds(20));
  EXPECT_FALSE(second.timed_out) << "the second agent kept running on a taken port:\n"
                                 << second.out << second.err;
  EXPECT_NE(second.exit_code, 0) << second.out << second.err;
  EXPECT_THAT(second.out, ::testing::Not(HasSubstr("listening on")));
  EXPECT_THAT(second.err, HasSubstr(absl::StrFormat("port %d is taken", port))) << second.err;
  EXPECT_THAT(second.err, HasSubstr("cannot listen on " + first)) << second.err;
  // Only our message: not gRPC's raw log line before it.
  EXPECT_THAT(second.err, ::testing::Not(HasSubstr("Address already in use"))) << second.err;
  // Same user: the holder is visible in /proc.
  EXPECT_THAT(second.err,
              HasSubstr(absl::StrFormat("%s is held by pid %d (", first, cluster.pid(0))))
      << second.err;
  EXPECT_THAT(second.err, HasSubstr("lockstep-agent --listen 127.0.0.1:0")) << second.err;

  // The first agent still answers, on every fresh connection, as itself.
  for (int i = 0; i < 8; ++i) {
    auto facts = Identify(first);
    ASSERT_OK(facts);
    EXPECT_EQ(static_cast<int>(facts->pid()), cluster.pid(0));
    ASSERT_EQ(facts->roots_size(), 1);
    EXPECT_EQ(facts->roots(0).path(), std::filesystem::canonical(cluster.root(0)).string());
  }
}

TEST(AgentPortTest, PortZeroStillPicksAFreePort) {
  TestCluster cluster;
  ASSERT_OK(cluster.Start(2));
  EXPECT_NE(cluster.address(0), cluster.address(1));
  EXPECT_THAT(cluster.address(0), ::testing::StartsWith("127.0.0.1:"));
  auto facts = Identify(cluster.address(1));
  ASSERT_OK(facts);
  EXPECT_EQ(static_cast<int>(facts->pid()), cluster.pid(1));
}

}  // namespace
}  // namespace lockstep::testing
