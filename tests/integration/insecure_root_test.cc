// An agent started with --insecure as root answers only root's (and its own
// account's) connections: loopback keeps the network out, not the host's
// other users, and the owner of each call's socket is read from the
// kernel's socket table (agent/loopback_peer.h). A real agent process, a
// real controller as root and one as nobody (setpriv).
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "integration/test_cluster.h"
#include "test_util.h"

namespace lockstep::testing {
namespace {

using ::testing::HasSubstr;

TEST(InsecureAsRoot, OnlyRootsConnectionsAreAnswered) {
  if (::geteuid() != 0) GTEST_SKIP() << "the agent must run as root";
  if (::access("/usr/bin/setpriv", X_OK) != 0) GTEST_SKIP() << "no /usr/bin/setpriv";
  TestCluster cluster;
  ASSERT_OK(cluster.Start({.agents = {{}}}));  // --insecure on 127.0.0.1, as root
  RunResult root = cluster.Lockstep({"agents", "--agents", cluster.address(0), "--insecure"});
  EXPECT_EQ(root.exit_code, 0) << root.Output();
  EXPECT_THAT(root.out, HasSubstr("1 of 1 agents answered"));

  // The controller binary where nobody may run it.
  TempDir bin;
  ASSERT_EQ(::chmod(bin.path().c_str(), 0755), 0);
  const std::string lockstep = bin / "lockstep";
  std::filesystem::copy_file(std::string(LOCKSTEP_BIN_DIR) + "/lockstep", lockstep);
  ASSERT_EQ(::chmod(lockstep.c_str(), 0755), 0);
  CommandResult nobody = RunCommand({"/usr/bin/setpriv", "--reuid=65534", "--regid=65534",
                                     "--clear-groups", lockstep, "agents", "--agents",
                                     cluster.address(0), "--insecure"},
                                    std::chrono::seconds(30));
  EXPECT_NE(nobody.exit_code, 0) << nobody.out << nobody.err;
  EXPECT_THAT(nobody.out + nobody.err, HasSubstr("came from uid 65534"));
  EXPECT_THAT(nobody.out + nobody.err, HasSubstr("other accounts need mutual TLS"));
}

}  // namespace
}  // namespace lockstep::testing
