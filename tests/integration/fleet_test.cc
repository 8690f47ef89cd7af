// A fleet without typed addresses: agents that announce themselves
// (--announce, --once), `lockstep run --agents-from/--hostfile` on a plan
// without [[agent]] tables, `lockstep agents`, `lockstep check --dirs`,
// certificates for a hostfile, and the TLS mistakes a fleet makes (a
// certificate for another name, one about to expire). Real agent processes
// on loopback, the real CLI.
#include <signal.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "assert_eventually.h"
#include "common/files.h"
#include "common/tls_inspect.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "integration/test_cluster.h"
#include "test_util.h"

namespace lockstep::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::UnorderedElementsAre;

const std::string kBin = LOCKSTEP_BIN_DIR;


// A plan without [[agent]] tables: one write, one verified read.
std::string PlanWithoutAgents(TestCluster& cluster) {
  return cluster.WritePlan(PlanBuilder()
                               .Set("name", "fleet")
                               .AddPhase(FilePerProcess("w", "write", "64k", "256k"))
                               .AddPhase(FilePerProcess("r", "read", "64k", "256k")
                                             .Set("verify", true)));
}

class AnnounceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    announce_ = cluster_ / "announce";
    ASSERT_EQ(::mkdir(announce_.c_str(), 0700), 0);
  }
  AgentSpec Announcing(const std::string& node, const std::string& role = "") {
    return {.role = role, .flags = {"--announce", announce_, "--node", node, "--once"}};
  }

  TestCluster cluster_;
  std::string announce_;
};

TEST_F(AnnounceTest, AnnouncedAgentsRunAPlanWithoutAgentTablesAndExitAfterIt) {
  ASSERT_OK(cluster_.Start({.agents = {Announcing("n1"), Announcing("n2"),
                                       Announcing("s1", "oss")},
                            .tls = true}));
  EXPECT_THAT(ListFiles(announce_),
              UnorderedElementsAre("n1.agent", "n2.agent", "s1.agent"));
  RunResult r = cluster_.Run(PlanWithoutAgents(cluster_),
                             {"--agents-from", announce_, "--expect", "3"});
  ASSERT_EQ(r.exit_code, 0) << r.Output();
  v1::RunRecord rec = r.Record();
  ASSERT_EQ(rec.agents_size(), 3);
  std::map<std::string, v1::Role> roles;
  for (const v1::AgentRecord& a : rec.agents()) roles[a.address()] = a.role();
  EXPECT_EQ(roles[cluster_.address(0)], v1::CLIENT);
  EXPECT_EQ(roles[cluster_.address(1)], v1::CLIENT);
  EXPECT_EQ(roles[cluster_.address(2)], v1::OSS);  // announced as such
  // Clients did the I/O; the server took part in barriers only.
  EXPECT_THAT(r.out, HasSubstr("#Tasks"));
  // --once: every agent exits when the controller detached, and takes its
  // announcement with it.
  ASSERT_EVENTUALLY([&] {
    EXPECT_THAT(ListFiles(announce_), ::testing::IsEmpty());
    for (int i = 0; i < 3; ++i) EXPECT_TRUE(Exited(cluster_.pid(i))) << "agent " << i;
  });
}

TEST_F(AnnounceTest, OnceAgentExitsWhenItsControllerDiesAndItsLeaseExpires) {
  AgentSpec slow = Announcing("n1");
  slow.flags.insert(slow.flags.end(), {"--test_delay_per_transfer_us", "20000"});
  ASSERT_OK(cluster_.Start({.agents = {slow}}));
  const std::string plan = cluster_.WritePlan(
      PlanBuilder()
          .Set("lease_ms", 1000)
          .AddPhase(FilePerProcess("w", "write", "4k", "4m")));  // 1024 × 20 ms: 20 s
  auto ctl = cluster_.StartRun(plan, {"--agents-from", announce_, "--expect", "1"});
  ASSERT_EVENTUALLY_WITHIN(std::chrono::seconds(15), [&] {
    ASSERT_GT(cluster_.FileBytes(0), 0u) << ctl->Output();
  });
  ctl->Signal(SIGKILL);
  ASSERT_GE(ctl->Wait(std::chrono::seconds(10)), 0);
  ASSERT_EVENTUALLY_WITHIN(std::chrono::seconds(8), [&] {
    EXPECT_TRUE(Exited(cluster_.pid(0)));
    EXPECT_THAT(ListFiles(announce_), ::testing::IsEmpty());
    EXPECT_THAT(cluster_.Files(0), ::testing::IsEmpty());  // the lease's cleanup ran first
  });
}

TEST_F(AnnounceTest, NodeThatNeverAnnouncedIsNamed) {
  ASSERT_OK(cluster_.Start({.agents = {Announcing("n1")}}));
  RunResult r = cluster_.Run(PlanWithoutAgents(cluster_),
                             {"--agents-from", announce_, "--expect_nodes", "n1,n2,n3",
                              "--wait_ms", "300"});
  EXPECT_EQ(r.exit_code, 3) << r.Output();
  EXPECT_THAT(r.err, HasSubstr("1 of 3 agents announced"));
  EXPECT_THAT(r.err, HasSubstr("never announced: n2, n3"));
  EXPECT_THAT(r.err, HasSubstr("announced: n1"));
}

TEST_F(AnnounceTest, NodeOfAnotherJobIsRefused) {
  ASSERT_OK(cluster_.Start({.agents = {Announcing("n1"), Announcing("stranger")}}));
  RunResult r = cluster_.Run(PlanWithoutAgents(cluster_),
                             {"--agents-from", announce_, "--expect_nodes", "n1"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.err, HasSubstr("announces node stranger"));
  EXPECT_THAT(r.err, HasSubstr("not one of the expected nodes (n1)"));
}

TEST_F(AnnounceTest, SecondAgentForTheSameNodeIsRefused) {
  ASSERT_OK(cluster_.Start({.agents = {Announcing("n1")}}));
  CommandResult second = RunCommand(
      {kBin + "/lockstep-agent", "--listen", "127.0.0.1:0", "--insecure", "--root",
       cluster_.root(0), "--announce", announce_, "--node", "n1"},
      std::chrono::seconds(20));
  EXPECT_EQ(second.exit_code, 2) << second.err;
  EXPECT_THAT(second.err, HasSubstr("node n1 is already announced"));
  EXPECT_THAT(second.err, HasSubstr(cluster_.address(0)));
  EXPECT_THAT(second.err, HasSubstr("--node"));
  // The first agent's file is intact.
  EXPECT_THAT(ListFiles(announce_), UnorderedElementsAre("n1.agent"));
}

TEST_F(AnnounceTest, DirectoryOthersCanWriteIsRefusedOnBothSides) {
  ASSERT_EQ(::chmod(announce_.c_str(), 0777), 0);
  CommandResult agent = RunCommand(
      {kBin + "/lockstep-agent", "--listen", "127.0.0.1:0", "--insecure", "--root",
       cluster_.path(), "--announce", announce_},
      std::chrono::seconds(20));
  EXPECT_EQ(agent.exit_code, 2);
  EXPECT_THAT(agent.err, HasSubstr("writable by every user"));
  EXPECT_THAT(agent.err, HasSubstr("chmod 0700 " + announce_));
  CommandResult ctl = RunCommand(
      {kBin + "/lockstep", "agents", "--agents-from", announce_, "--insecure"},
      std::chrono::seconds(20));
  EXPECT_EQ(ctl.exit_code, 2);
  EXPECT_THAT(ctl.err, HasSubstr("writable by every user"));
}

TEST(FleetTest, HostfileAgentsTakeTheirOwnRolesAndAgentsListsThem) {
  TestCluster cluster;
  ASSERT_OK(cluster.Start({.agents = {{}, {.role = "mds"}}, .tls = true}));
  const std::string hostfile = cluster / "hosts";
  ASSERT_OK(WriteFileAtomically(hostfile, absl::StrFormat("# two agents\n%s\n%s  # the MDS\n",
                                                          cluster.address(0), cluster.address(1))));
  RunResult r = cluster.Run(PlanWithoutAgents(cluster), {"--hostfile", hostfile});
  ASSERT_EQ(r.exit_code, 0) << r.Output();
  v1::RunRecord rec = r.Record();
  ASSERT_EQ(rec.agents_size(), 2);
  EXPECT_EQ(rec.agents(0).role(), v1::CLIENT);
  EXPECT_EQ(rec.agents(1).role(), v1::MDS);

  std::vector<std::string> args = {"agents", "--hostfile", hostfile};
  for (const std::string& c : cluster.ControllerCredentials()) args.push_back(c);
  RunResult listed = cluster.Lockstep(args);
  ASSERT_EQ(listed.exit_code, 0) << listed.Output();
  EXPECT_THAT(listed.out, HasSubstr("2 of 2 agents answered"));
  EXPECT_THAT(listed.out, HasSubstr(cluster.address(1)));
  EXPECT_THAT(listed.out, HasSubstr(" mds "));
  EXPECT_THAT(listed.out, HasSubstr(cluster.root(0)));

  cluster.Kill(1);
  RunResult one_gone = cluster.Lockstep(args);
  EXPECT_EQ(one_gone.exit_code, 3) << one_gone.Output();
  EXPECT_THAT(one_gone.out, HasSubstr("NOT ANSWERING: agent " + cluster.address(1)));
  EXPECT_THAT(one_gone.out, HasSubstr("1 of 2 agents answered"));
}

TEST(FleetTest, SameAgentUnderTwoNamesIsRefused) {
  TestCluster cluster;
  ASSERT_OK(cluster.Start(1));
  const std::string port = cluster.address(0).substr(cluster.address(0).rfind(':') + 1);
  RunResult r = cluster.Run(PlanWithoutAgents(cluster),
                            {"--agents", "127.0.0.1:" + port + ",localhost:" + port});
  EXPECT_EQ(r.exit_code, 2) << r.Output();
  EXPECT_THAT(r.err, HasSubstr("the same agent"));
  EXPECT_THAT(r.err, HasSubstr("listed twice"));
}

TEST(FleetTest, PlanWithAgentTablesAndAgentFlagsIsRefused) {
  TestCluster cluster;
  ASSERT_OK(cluster.Start(1));
  std::string plan = cluster.WritePlan(
      cluster.Plan().AddPhase(FilePerProcess("w", "write", "64k", "256k")));
  RunResult r = cluster.Run(plan, {"--agents", cluster.address(0)});
  EXPECT_EQ(r.exit_code, 2) << r.Output();
  EXPECT_THAT(r.err, HasSubstr("remove the tables or the flags"));
}

TEST(FleetTest, CertificateForAnotherNameIsExplained) {
  TestCluster cluster;
  ASSERT_OK(cluster.Start({.agents = {{}}, .tls = true}));
  // Agent 0 gets a certificate (from the right CA) that names another host.
  CommandResult issued =
      RunCommand({kBin + "/lockstep", "certs", "issue", "--dir", cluster.pki_dir(), "--agent",
                  "agent0,elsewhere.example,10.9.9.9", "--force"});
  ASSERT_EQ(issued.exit_code, 0) << issued.err;
  ASSERT_OK(cluster.Restart(0));
  std::vector<std::string> args = {"agents", "--agents", cluster.address(0), "--timeout_ms",
                                   "1500"};
  for (const std::string& c : cluster.ControllerCredentials()) args.push_back(c);
  RunResult r = cluster.Lockstep(args);
  EXPECT_EQ(r.exit_code, 3) << r.Output();
  EXPECT_THAT(r.out, HasSubstr("presents a certificate for [agent0, elsewhere.example, "
                               "10.9.9.9]"));
  EXPECT_THAT(r.out, HasSubstr("which does not name 127.0.0.1"));
  EXPECT_THAT(r.out, HasSubstr("lockstep certs issue"));
}

TEST(FleetTest, CertificatesAboutToExpireAreWarnedAbout) {
  TestCluster cluster;
  ASSERT_OK(cluster.Start({.agents = {{}}, .tls = true}));
  const std::string host = cluster.address(0).substr(0, cluster.address(0).rfind(':'));
  for (const std::string& who : {std::string("--controller"), std::string("--agent")}) {
    CommandResult issued = RunCommand(
        {kBin + "/lockstep", "certs", "issue", "--dir", cluster.pki_dir(), who,
         who == "--agent" ? "agent0," + host : "controller", "--days", "10", "--force"});
    ASSERT_EQ(issued.exit_code, 0) << issued.err;
  }
  ASSERT_OK(cluster.Restart(0));
  RunResult r = cluster.Run(cluster.WritePlan(
      cluster.Plan().AddPhase(FilePerProcess("w", "write", "64k", "256k"))));
  ASSERT_EQ(r.exit_code, 0) << r.Output();
  EXPECT_THAT(r.err, HasSubstr("controller.pem (CN controller) expires on"));
  EXPECT_THAT(r.err, HasSubstr("lockstep certs issue"));
  EXPECT_THAT(r.out, HasSubstr("warning: agent " + cluster.address(0) +
                               ": its certificate expires on"));
  // The translated front ends set up TLS the same way (one function,
  // TlsFromDir): the controller's warning, and the agent's.
  std::filesystem::create_directories(cluster.dir(0));
  const std::vector<std::vector<std::string>> front_ends = {
      {"ior", "-w", "-t", "64k", "-b", "256k", "-o", cluster.dir(0) + "/f"},
      {"iozone", "-i", "0", "-r", "64k", "-s", "256k", "-t", "1", "-F", cluster.dir(0) + "/z"}};
  for (std::vector<std::string> args : front_ends) {
    for (const std::string& a : {std::string("--agents"), cluster.address(0),
                                 std::string("--tls_dir"), cluster.pki_dir(), std::string("--out"),
                                 cluster.results_dir()}) {
      args.push_back(a);
    }
    RunResult fe = cluster.Lockstep(args);
    ASSERT_EQ(fe.exit_code, 0) << args[0] << "\n" << fe.Output();
    EXPECT_THAT(fe.err, HasSubstr("controller.pem (CN controller) expires on")) << args[0];
    EXPECT_THAT(fe.Output(), HasSubstr("its certificate expires on")) << args[0];
  }
}

TEST(FleetTest, CertsForEveryLineOfAHostfile) {
  TempDir tmp;
  const std::string hosts = tmp / "hosts";
  ASSERT_OK(WriteFileAtomically(hosts, "# the cluster\nn1 n1.ib 10.0.0.1\nn2:7070\n\n"
                                       "n3,n3.ib  # a comment\n"));
  CommandResult r = RunCommand({kBin + "/lockstep", "certs", "init", "--dir", tmp / "pki",
                                "--hostfile", hosts});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto names = [&](const std::string& node) {
    auto pem = ReadFileToString(tmp / ("pki/agent-" + node + ".pem"));
    EXPECT_TRUE(pem.ok()) << node;
    auto info = InspectCertificate(pem.ok() ? *pem : "", node);
    return info.ok() ? info->sans : std::vector<std::string>{};
  };
  EXPECT_THAT(names("n1"), UnorderedElementsAre("n1", "n1.ib", "10.0.0.1"));
  EXPECT_THAT(names("n2"), UnorderedElementsAre("n2"));
  EXPECT_THAT(names("n3"), UnorderedElementsAre("n3", "n3.ib"));

  ASSERT_OK(WriteFileAtomically(hosts, "n1\nbad/name\n"));
  CommandResult bad = RunCommand({kBin + "/lockstep", "certs", "issue", "--dir", tmp / "pki",
                                  "--hostfile", hosts, "--force"});
  EXPECT_NE(bad.exit_code, 0);
  EXPECT_THAT(bad.err, HasSubstr(hosts + ":2"));
  EXPECT_THAT(bad.err, HasSubstr("bad/name"));
}

TEST(FleetTest, CheckPrintsThePlansDirectories) {
  TempDir tmp;
  const std::string plan = tmp / "plan.toml";
  ASSERT_OK(WriteFileAtomically(
      plan, PlanBuilder()
                .AddPhase(FilePerProcess("w", "write", "64k", "256k").Set("dir", "/scratch/a/"))
                .AddPhase(FilePerProcess("r", "read", "64k", "256k").Set("dir", "/scratch/a"))
                .AddPhase(FilePerProcess("w2", "write", "64k", "256k").Set("dir", "/b"))
                .Toml()));
  CommandResult r = RunCommand({kBin + "/lockstep", "check", "--dirs", plan});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "/b\n/scratch/a\n");
  ASSERT_OK(WriteFileAtomically(
      plan, PlanBuilder().AddPhase(FilePerProcess("w", "write", "64k", "256k")).Toml()));
  CommandResult rel = RunCommand({kBin + "/lockstep", "check", "--dirs", plan});
  EXPECT_EQ(rel.exit_code, 2);
  EXPECT_THAT(rel.err, HasSubstr("phase 'w' has the relative dir"));
  CommandResult summary = RunCommand({kBin + "/lockstep", "check", plan});
  EXPECT_EQ(summary.exit_code, 0);
  EXPECT_THAT(summary.out, HasSubstr("valid: 1 test(s)"));
}

}  // namespace
}  // namespace lockstep::testing
