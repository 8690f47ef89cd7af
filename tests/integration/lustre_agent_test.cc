// The Lustre hooks end to end: real lockstep-agent processes started with
// --allow_lustre and fake lfs/lctl programs (tests/lustre_fakes.h), a real
// `lockstep run` of a plan with striping, client checksums and the lock LRU
// flush. What the tools were asked, in which order and on which directory, is
// read back from the fakes' argv log; what the run recorded from run.json.
#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "common/files.h"
#include "integration/test_cluster.h"
#include "lustre_fakes.h"

namespace lockstep::testing {
namespace {

using ::testing::AllOf;
using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::Not;

// Agent flags for fakes in `dir`: the tools by absolute path (as a site
// whose lfs is not on PATH would give them), and directories on any file
// system accepted as Lustre.
std::vector<std::string> LustreFlags(const std::string& dir) {
  return {"--allow_lustre", "--lfs", dir + "/bin/lfs", "--lctl", dir + "/bin/lctl",
          "--test_lustre_any_fs"};
}

// The lines of `log` that start with `prefix` ("lfs\tsetstripe").
std::vector<std::string> Lines(const std::vector<std::string>& log, const std::string& prefix) {
  std::vector<std::string> out;
  for (const std::string& l : log) {
    if (l.rfind(prefix, 0) == 0) out.push_back(l);
  }
  return out;
}

TEST(LustreAgent, StripingChecksumsAndLruThroughTheAgentBinary) {
  TestCluster cluster;
  const std::string fakes0 = cluster / "fakes0", fakes1 = cluster / "fakes1";
  ASSERT_TRUE(WriteFakeLustreTools(fakes0));
  ASSERT_TRUE(WriteFakeLustreTools(fakes1));
  ASSERT_OK(cluster.Start({.agents = {{.flags = LustreFlags(fakes0)},
                                      {.flags = LustreFlags(fakes1)}}}));
  const std::string plan = cluster.WritePlan(
      cluster.Plan()
          .Set("name", "lustre-e2e")
          .Set("lustre_lru_clear", true)
          .Set("cache", "clients")
          .AddPhase(FilePerProcess("w", "write", "64k", "256k")
                        .Set("stripe_count", 4)
                        .Set("stripe_size", "1m")
                        .Set("stripe_index", 2)
                        .Set("checksums", false))
          .AddPhase(FilePerProcess("r", "read", "64k", "256k").Set("checksums", true)));
  RunResult r = cluster.Run(plan);
  ASSERT_EQ(r.exit_code, 0) << r.Output();
  const v1::RunRecord rec = r.Record();
  ASSERT_EQ(rec.status(), "complete") << r.Output();

  for (int i = 0; i < 2; ++i) {
    const std::string fakes = i == 0 ? fakes0 : fakes1;
    const std::vector<std::string> log = FakeLustreLog(fakes);
    SCOPED_TRACE(absl::StrCat("agent ", i, " asked:\n", absl::StrJoin(log, "\n")));
    // The version, asked once when the agent started, reaches run.json.
    EXPECT_EQ(rec.agents(i).facts().lustre_version(), "2.15.3");
    // setstripe on this agent's own phase directory, before the files,
    // through the directory the agent holds (its /proc link, which lfs
    // resolved to the phase directory), then getstripe -d of it, recorded
    // in the phase's agent record.
    const std::string dir = cluster.dir(i);
    EXPECT_THAT(Lines(log, "lfs\tsetstripe"),
                ::testing::ElementsAre(::testing::StartsWith(
                    "lfs\tsetstripe\t-c\t4\t-S\t1048576\t-i\t2\t/proc/")));
    auto resolved = ReadFileToString(fakes + "/resolved.log");
    ASSERT_OK(resolved);
    EXPECT_EQ(*resolved, std::filesystem::canonical(dir).string() + "\n");
    EXPECT_THAT(Lines(log, "lfs\tgetstripe"),
                Contains(absl::StrCat("lfs\tgetstripe\t-d\t", dir)));
    // Checksums: off for the write, on for the read, each OSC back to its own
    // value at the end (OST0000 was 1, OST0001 was 0).
    EXPECT_THAT(log, Contains("lctl\tset_param\tosc.*.checksums=0"));
    EXPECT_THAT(log, Contains("lctl\tset_param\tosc.*.checksums=1"));
    EXPECT_EQ(ReadFileToString(fakes + "/state/osc.lustre-OST0000-osc-ffff8803.checksums")
                  .value_or("?"),
              "1\n");
    EXPECT_EQ(ReadFileToString(fakes + "/state/osc.lustre-OST0001-osc-ffff8803.checksums")
                  .value_or("?"),
              "0\n");
    // The lock LRU flushed in each client's cache barrier (2 phases).
    EXPECT_EQ(Lines(log, "lctl\tset_param\tldlm.namespaces.*.lru_size=clear").size(), 2u);
  }
  ASSERT_GE(rec.tests_size(), 1);
  bool saw_layout = false;
  for (const v1::PhaseRecord& p : rec.tests(0).phases()) {
    if (p.phase() != "w") continue;
    for (const v1::AgentPhaseRecord& a : p.agents()) {
      EXPECT_THAT(a.stripe_layout(), AllOf(HasSubstr("stripe_count:  4"), HasSubstr("flash")))
          << a.address();
      saw_layout = true;
    }
  }
  EXPECT_TRUE(saw_layout);
}

TEST(LustreAgent, AgentWithoutLustrePermissionRefusesStripingNamingTheFlag) {
  TestCluster cluster;
  ASSERT_OK(cluster.Start(1));
  RunResult r = cluster.Run(cluster.WritePlan(cluster.Plan().AddPhase(
      FilePerProcess("w", "write", "64k", "64k").Set("stripe_count", 2))));
  EXPECT_NE(r.exit_code, 0) << r.Output();
  EXPECT_THAT(r.Output(), AllOf(HasSubstr("--allow_lustre"), HasSubstr("stripe")));
}

TEST(LustreAgent, StripingOnANonLustreDirectoryIsRefusedNamingIt) {
  TestCluster cluster;
  const std::string fakes = cluster / "fakes";
  ASSERT_TRUE(WriteFakeLustreTools(fakes));
  // Real tools' rules: no --test_lustre_any_fs, so the agent checks statfs.
  ASSERT_OK(cluster.Start(
      {.agents = {{.flags = {"--allow_lustre", "--lfs", fakes + "/bin/lfs", "--lctl",
                             fakes + "/bin/lctl"}}}}));
  RunResult r = cluster.Run(cluster.WritePlan(cluster.Plan().AddPhase(
      FilePerProcess("w", "write", "64k", "64k").Set("stripe_count", 2))));
  EXPECT_NE(r.exit_code, 0) << r.Output();
  // Refused by the controller from the root's declared capabilities.
  EXPECT_THAT(r.Output(), AllOf(HasSubstr(cluster.dir(0)), HasSubstr("takes no per-directory "
                                                                     "layout")));
  EXPECT_THAT(FakeLustreLog(fakes), Not(Contains(HasSubstr("setstripe"))));
}

TEST(LustreAgent, RelativeToolPathIsRefusedAtStart) {
  TestCluster cluster;
  absl::Status s = cluster.Start({.agents = {{.flags = {"--allow_lustre", "--lfs", "bin/lfs"}}}});
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(std::string(s.message()), HasSubstr("absolute path"));
}

}  // namespace
}  // namespace lockstep::testing
