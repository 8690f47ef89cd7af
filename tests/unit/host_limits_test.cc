// controller/run/host_limits.h: a phase's threads over all the agents of a
// host, against the limit its agents reported.
#include "controller/run/host_limits.h"

#include <memory>

#include <grpcpp/grpcpp.h>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace lockstep {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

std::unique_ptr<AgentClient> Agent(const std::string& address, const std::string& host,
                                   const std::string& boot, uint64_t limit, uint64_t in_use) {
  auto c = std::make_unique<AgentClient>(address, v1::CLIENT, grpc::InsecureChannelCredentials());
  c->facts.set_hostname(host);
  c->facts.set_clock_id(boot);
  c->facts.set_thread_limit(limit);
  c->facts.set_thread_limit_name("kernel.pid_max");
  c->facts.set_threads_in_use(in_use);
  return c;
}

TEST(HostLimits, AHostsAgentsTogetherAreCheckedAgainstItsLimit) {
  // 16 agents on n1 with 31,000 threads in use and pid_max 32,768: 64
  // tasks each adds 16 x 65 = 1,040 threads: 32,040 fits; 128 tasks each
  // (16 x 129 = 2,064: 33,064) does not. n2 has room either way.
  std::vector<std::unique_ptr<AgentClient>> owned;
  std::vector<AgentClient*> clients;
  for (int i = 0; i < 16; ++i) {
    owned.push_back(Agent("n1:" + std::to_string(7000 + i), "n1", "boot-1", 32768, 31000));
    clients.push_back(owned.back().get());
  }
  owned.push_back(Agent("n2:7000", "n2", "boot-2", 32768, 500));
  clients.push_back(owned.back().get());
  EXPECT_FALSE(CheckHostThreads("0/0/w", clients, 64));
  RunError e = CheckHostThreads("0/0/w", clients, 128);
  ASSERT_TRUE(e);
  EXPECT_EQ(e.kind, RunFailure::kBadPlan);
  EXPECT_THAT(e.message,
              AllOf(HasSubstr("phase 0/0/w: host n1 would start 2064 threads (16 agents x "
                              "(128 tasks + 1)) with 31000 in use"),
                    HasSubstr("33064 in all, past its limit of 32768 (kernel.pid_max)"),
                    HasSubstr("sysctl -w kernel.pid_max=66128"), HasSubstr("fewer tasks or agents on n1")));
  EXPECT_THAT(e.message, ::testing::Not(HasSubstr("host n2")));
  // Containers on one host, each in its own cgroup of 200 pids with 100 in
  // use: each agent's 64 tasks fit its own, whatever the others do.
  std::vector<std::unique_ptr<AgentClient>> pods;
  std::vector<AgentClient*> pod_clients;
  for (int i = 0; i < 8; ++i) {
    pods.push_back(Agent("n4:" + std::to_string(7000 + i), "n4", "boot-4", 200, 100));
    pods.back()->facts.set_thread_limit_name("pids.max of cgroup /");
    pod_clients.push_back(pods.back().get());
  }
  EXPECT_FALSE(CheckHostThreads("0/0/w", pod_clients, 64));
  e = CheckHostThreads("0/0/w", pod_clients, 128);
  ASSERT_TRUE(e);
  EXPECT_THAT(e.message, AllOf(HasSubstr("host n4 would start 129 threads (1 agents x (128 "
                                         "tasks + 1)) with 100 in use"),
                               HasSubstr("set that cgroup's pids.max to 65536")));
  // Agents that report no limit (older ones) are not checked.
  auto old = Agent("n3:7000", "n3", "boot-3", 0, 0);
  EXPECT_FALSE(CheckHostThreads("0/0/w", {old.get()}, 1'000'000));
}

}  // namespace
}  // namespace lockstep
