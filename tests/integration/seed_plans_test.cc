// The seed plans (deploy/plans/seeds/, one per report in shared/seeds/) as a
// user checks them on one machine: `lockstep run --dry-run` and `lockstep run
// --smoke --local 2`, with the real binaries and real local agents. A plan
// that no longer parses, or no longer runs, fails here.
#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "integration/process_util.h"
#include "test_util.h"

namespace lockstep::testing {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

std::string Seed(const std::string& name) {
  return std::string(LOCKSTEP_SOURCE_DIR) + "/deploy/plans/seeds/" + name;
}

std::vector<std::string> SeedPlans() {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(Seed(""))) {
    if (e.path().extension() == ".toml") out.push_back(e.path().filename().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

TEST(SeedPlans, OnePerReport) {
  EXPECT_THAT(SeedPlans(),
              ::testing::ElementsAre("000-ior-scaling.toml", "001-iozone-nton.toml",
                                     "002-flash-dd-tar-make.toml", "003-lmdd-checksums.toml",
                                     "004-stripe-size.toml"));
}

TEST(SeedPlans, DryRunOfTheIorScalingAtFullSize) {
  CommandResult r = RunLockstep({"run", "--dry-run", "--agents",
                                 "n1:7070,n2:7070,n3:7070,n4:7070,n5:7070,n6:7070,n7:7070,"
                                 "n8:7070",
                                 Seed("000-ior-scaling.toml")});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  // The report's six configurations at its own sizes: 60 GiB on one node,
  // 32 processes x 20 GiB on 8 nodes.
  EXPECT_THAT(r.out, AllOf(HasSubstr("6 test(s) x 2 repetition(s)"),
                           HasSubstr("test 0: 1 client agent(s), 1 task(s) per agent"),
                           HasSubstr("test 5: 8 client agent(s), 4 task(s) per agent"),
                           HasSubstr("60 GiB/agent"), HasSubstr("640 GiB in all")));
}

class SmokeRun : public ::testing::TestWithParam<std::string> {};

TEST_P(SmokeRun, RunsOnTwoLocalAgents) {
  TempDir out;
  CommandResult r = RunLockstep({"run", "--smoke", "--local", "2", "--out",
                                 out.path(), "--history=false", Seed(GetParam())});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("# smoke run (--smoke): sizes capped, one repetition"));
  const std::string run_dir = RunDirFromOutput(r.out);
  ASSERT_FALSE(run_dir.empty()) << r.out;
  const v1::RunRecord rec = ReadRunJson(run_dir);
  EXPECT_EQ(rec.status(), "complete") << r.out << r.err;
  EXPECT_TRUE(rec.smoke());
  EXPECT_GT(rec.smoke_changes_size(), 0);
}

INSTANTIATE_TEST_SUITE_P(Seeds, SmokeRun, ::testing::ValuesIn(SeedPlans()),
                         [](const ::testing::TestParamInfo<std::string>& i) {
                           return std::string("seed") + i.param.substr(0, 3);
                         });

}  // namespace
}  // namespace lockstep::testing
