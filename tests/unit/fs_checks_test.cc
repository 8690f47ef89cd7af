// controller/run/fs_checks.h: layouts and checksums against the roots the
// agents reported, before the first phase.
#include "controller/run/fs_checks.h"

#include <memory>

#include <grpcpp/grpcpp.h>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace lockstep {
namespace {

using ::testing::HasSubstr;

std::unique_ptr<AgentClient> Agent(const std::string& address, const std::string& root,
                                   const std::string& fs_type) {
  auto c = std::make_unique<AgentClient>(address, v1::CLIENT, grpc::InsecureChannelCredentials());
  c->facts.set_hostname("n-" + address);
  v1::RootFacts* r = c->facts.add_roots();
  r->set_path(root);
  r->set_fs_type(fs_type);
  return c;
}

Plan OnePhase(const std::string& dir, bool stripe, v1::ChecksumMode checksums) {
  Plan plan;
  PhasePlan p;
  p.name = "w";
  p.kind = v1::WRITE;
  p.dir = dir;
  p.set_stripe = stripe;
  p.stripe_count = stripe ? 4 : 0;
  p.checksums = checksums;
  plan.phases.push_back(p);
  return plan;
}

TEST(FsChecks, RootsOnFileSystemsWithoutLayoutsAreRefusedBeforeTheRun) {
  auto ext4 = Agent("a:1", "/data", "ext4");
  auto fuse = Agent("b:1", "/mnt/cephfs", "fuse");
  auto lustre = Agent("c:1", "/lustre", "lustre");
  RunError e = CheckFsSettings(OnePhase("/data/x", true, v1::CHECKSUMS_UNCHANGED),
                               {ext4.get(), fuse.get(), lustre.get()});
  ASSERT_TRUE(e);
  EXPECT_EQ(e.kind, RunFailure::kBadPlan);
  EXPECT_THAT(e.message, HasSubstr("phase 'w': stripe_count/stripe_size/stripe_index/stripe_pool/"
                                   "object_size on agent a:1 (n-a:1): the file system of /data/x "
                                   "there is ext4, not Lustre or CephFS"));
  EXPECT_THAT(e.message, ::testing::Not(HasSubstr("b:1")));
  EXPECT_THAT(e.message, ::testing::Not(HasSubstr("c:1")));
  // A relative dir is below the first root; checksums are refused the same way.
  auto tmpfs = Agent("d:1", "/dev/shm/l", "tmpfs");
  e = CheckFsSettings(OnePhase("run1", false, v1::CHECKSUMS_OFF), {tmpfs.get()});
  ASSERT_TRUE(e);
  EXPECT_THAT(e.message, HasSubstr("checksums on agent d:1 (n-d:1): the file system of "
                                   "/dev/shm/l/run1 there is tmpfs"));
  // Nothing asked: nothing refused.
  EXPECT_FALSE(CheckFsSettings(OnePhase("/data/x", false, v1::CHECKSUMS_UNCHANGED), {ext4.get()}));
}

TEST(FsChecks, TheRootThatHoldsTheDirectoryCounts) {
  auto c = Agent("a:1", "/scratch", "ext4");
  v1::RootFacts* r = c->facts.add_roots();
  r->set_path("/scratch/lustre");
  r->set_fs_type("lustre");
  EXPECT_EQ(RootFsTypeOf("/scratch/lustre/d", c->facts), "lustre");
  EXPECT_EQ(RootFsTypeOf("/scratch/lustrex", c->facts), "ext4");
  EXPECT_EQ(RootFsTypeOf("rel", c->facts), "ext4");
  EXPECT_EQ(RootFsTypeOf("/elsewhere", c->facts), "");
}

}  // namespace
}  // namespace lockstep
