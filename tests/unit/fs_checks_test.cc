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

// A plan of one write phase in one test, resolved as a run resolves it.
ResolvedPlan OnePhase(const std::string& dir, bool stripe, v1::ChecksumMode checksums) {
  Plan plan;
  PhasePlan p;
  p.name = "w";
  p.kind = v1::WRITE;
  p.dir = dir;
  p.set_stripe = stripe;
  p.stripe_count = stripe ? 4 : 0;
  p.checksums = checksums;
  plan.phases.push_back(p);
  return ResolvePlan(plan);
}

TEST(FsChecks, RootsOnFileSystemsWithoutLayoutsAreRefusedBeforeTheRun) {
  auto ext4 = Agent("a:1", "/data", "ext4");
  auto fuse = Agent("b:1", "/mnt/cephfs", "fuse");
  auto lustre = Agent("c:1", "/lustre", "lustre");
  RunError e = CheckFsSettings(OnePhase("/data/x", true, v1::CHECKSUMS_UNCHANGED),
                               {ext4.get(), fuse.get(), lustre.get()});
  ASSERT_TRUE(e);
  EXPECT_EQ(e.kind, RunFailure::kBadPlan);
  // The refusal names the keys as the plan set them.
  EXPECT_THAT(e.message, HasSubstr("phase 'w' on agent a:1 (n-a:1): stripe_count = 4: the file "
                                   "system of /data/x there is ext4, which takes no per-directory "
                                   "layout"));
  EXPECT_THAT(e.message, ::testing::Not(HasSubstr("b:1")));
  EXPECT_THAT(e.message, ::testing::Not(HasSubstr("c:1")));
  // A relative dir is below the first root; checksums are refused the same way.
  auto tmpfs = Agent("d:1", "/dev/shm/l", "tmpfs");
  e = CheckFsSettings(OnePhase("run1", false, v1::CHECKSUMS_OFF), {tmpfs.get()});
  ASSERT_TRUE(e);
  EXPECT_THAT(e.message, HasSubstr("on agent d:1 (n-d:1): checksums = false: the file system of "
                                   "/dev/shm/l/run1 there is tmpfs, which has no client data "
                                   "checksums to switch"));
  // Nothing asked: nothing refused.
  EXPECT_FALSE(CheckFsSettings(OnePhase("/data/x", false, v1::CHECKSUMS_UNCHANGED), {ext4.get()}));
}

TEST(FsChecks, TheRootThatHoldsTheDirectoryCounts) {
  auto c = Agent("a:1", "/scratch", "ext4");
  v1::RootFacts* r = c->facts.add_roots();
  r->set_path("/scratch/lustre");
  r->set_fs_type("lustre");
  EXPECT_EQ(RootOf("/scratch/lustre/d", c->facts)->fs_type(), "lustre");
  EXPECT_EQ(RootOf("/scratch/lustrex", c->facts)->fs_type(), "ext4");
  EXPECT_EQ(RootOf("rel", c->facts)->fs_type(), "ext4");
  EXPECT_EQ(RootOf("/elsewhere", c->facts), nullptr);
}

// An agent of wire minor 10 declares what its root's file system can do
// (agent/fs/): the controller follows that, not the statfs name; an older
// agent's roots are judged by name as before.
TEST(FsChecks, DeclaredCapabilitiesDecideNotNames) {
  auto cephfs = Agent("a:1", "/mnt/cephfs", "fuse");
  v1::RootFacts* r = cephfs->facts.mutable_roots(0);
  r->set_fs_name("cephfs");
  r->set_fs_version("ceph-fuse");
  r->mutable_capabilities()->set_layouts(true);
  r->mutable_capabilities()->set_shared(true);
  EXPECT_FALSE(CheckFsSettings(OnePhase("/mnt/cephfs/x", true, v1::CHECKSUMS_UNCHANGED),
                               {cephfs.get()}));
  RunError e = CheckFsSettings(OnePhase("/mnt/cephfs/x", false, v1::CHECKSUMS_ON), {cephfs.get()});
  ASSERT_TRUE(e);
  EXPECT_THAT(e.message, HasSubstr("checksums = true: the file system of /mnt/cephfs/x there is "
                                   "cephfs (ceph-fuse), which has no client data checksums to "
                                   "switch at run time"));
  EXPECT_THAT(e.message, HasSubstr("ms_crc_data"));
  // Both keys of one phase are judged, each on its own.
  ResolvedPlan both = OnePhase("/data/x", true, v1::CHECKSUMS_OFF);
  auto ext4 = Agent("g:1", "/data", "ext4");
  e = CheckFsSettings(both, {ext4.get()});
  ASSERT_TRUE(e);
  EXPECT_THAT(e.message, HasSubstr("stripe_count = 4: "));
  EXPECT_THAT(e.message, HasSubstr("checksums = false"));
  // A plain FUSE mount: by name an old agent's might take layouts; the
  // agent that knows it is plain FUSE says it cannot.
  auto fuse = Agent("b:1", "/mnt/sshfs", "fuse");
  fuse->facts.mutable_roots(0)->set_fs_name("posix");
  fuse->facts.mutable_roots(0)->mutable_capabilities()->set_shared(true);
  e = CheckFsSettings(OnePhase("/mnt/sshfs/x", true, v1::CHECKSUMS_UNCHANGED), {fuse.get()});
  ASSERT_TRUE(e);
  EXPECT_THAT(e.message, HasSubstr("/mnt/sshfs/x there is fuse, which takes no per-directory"));
  auto old_fuse = Agent("c:1", "/mnt/sshfs", "fuse");
  EXPECT_FALSE(CheckFsSettings(OnePhase("/mnt/sshfs/x", true, v1::CHECKSUMS_UNCHANGED),
                               {old_fuse.get()}));
  EXPECT_TRUE(CapabilitiesOf(old_fuse->facts.roots(0)).shared());
  EXPECT_FALSE(CapabilitiesOf(Agent("d:1", "/data", "ext4")->facts.roots(0)).shared());
  EXPECT_TRUE(CapabilitiesOf(Agent("e:1", "/gpfs", "gpfs")->facts.roots(0)).shared());
  // What the agent declares wins over the name.
  auto declared = Agent("f:1", "/data", "ext4");
  declared->facts.mutable_roots(0)->mutable_capabilities()->set_shared(true);
  EXPECT_TRUE(CapabilitiesOf(declared->facts.roots(0)).shared());
}

}  // namespace
}  // namespace lockstep
