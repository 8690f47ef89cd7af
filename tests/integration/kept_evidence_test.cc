// Issue 39, "nothing lost, nothing hidden": a failed verification keeps the
// files it read (the evidence), says where they are (host:/path) in its
// output and run.json, and exits 6; IOR aborts on a short read and keeps the
// file, and keeps a data error's files with -K. Real local agent processes
// (`lockstep ior --local 2`), real files.
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "common/net.h"
#include "controller/cli/exit_codes.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "integration/process_util.h"
#include "integration/test_cluster.h"
#include "test_util.h"

namespace lockstep::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::Contains;
using ::testing::HasSubstr;

constexpr uint64_t kMiB = 1 << 20;

class KeptEvidence : public ::testing::Test {
 protected:
  void SetUp() override { fs::create_directories(tmp_ / "data"); }

  // `lockstep ior ARGS -G 3 -b 2m -t 256k -o FILE` on two local agents (one
  // task each: a 4 MiB shared file, or two 2 MiB files with -F).
  RunResult Ior(std::vector<std::string> args, const std::string& file) {
    args.insert(args.begin(), "ior");
    for (const char* a : {"-G", "3", "-b", "2m", "-t", "256k", "--local", "2", "-o"}) {
      args.push_back(a);
    }
    args.push_back(file);
    args.push_back("--out");
    args.push_back(tmp_.results_dir());
    return tmp_.Lockstep(args);
  }

  // The file and its kept-files line: named in the output and in run.json.
  static void ExpectNamedAsKept(const RunResult& r, const std::string& file) {
    const std::string where = LocalHostName() + ":" + file;
    EXPECT_THAT(r.out, HasSubstr("the files of the failed verification are kept for "
                                 "inspection (remove them when done): "))
        << r.Output();
    EXPECT_THAT(r.out, HasSubstr(where)) << r.Output();
    EXPECT_THAT(r.err, HasSubstr(where)) << r.Output();  // the error's last lines too
    const v1::RunRecord rec = r.Record();
    EXPECT_THAT(rec.kept_files(), Contains(where));
    ASSERT_EQ(rec.tests_size(), 1);
    ASSERT_GE(rec.tests(0).phases_size(), 1);
    EXPECT_EQ(rec.tests(0).phases(0).error_kind(), v1::VERIFY_FAILED);
  }

  static uint64_t SizeOf(const std::string& path) {
    struct stat st;
    return ::stat(path.c_str(), &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
  }

  TestCluster tmp_;  // no agents of its own: the runs start local ones
};

// Before: `lockstep ior -r -R` (no -k) on a shared file cut by 1 MiB said
// the file was short, then removed it.
TEST_F(KeptEvidence, VerifiedReadOfASharedFileCutBy1MiBKeepsTheFileAndNamesIt) {
  const std::string f = tmp_ / "data/shared";
  ASSERT_EQ(Ior({"-w", "-k"}, f).exit_code, kExitOk);
  ASSERT_EQ(SizeOf(f), 4 * kMiB);
  ASSERT_EQ(::truncate(f.c_str(), 3 * kMiB), 0);

  RunResult r = Ior({"-r", "-R"}, f);  // IOR removes what a read-only test read, unless -k
  EXPECT_EQ(r.exit_code, kExitVerify) << r.Output();
  EXPECT_THAT(r.err, HasSubstr("file is short")) << r.Output();
  ASSERT_TRUE(fs::exists(f)) << "the evidence was removed\n" << r.Output();
  EXPECT_EQ(SizeOf(f), 3 * kMiB);  // as it was found, not rewritten
  ExpectNamedAsKept(r, f);
}

// Bytes overwritten in the middle of one task's file (file per process):
// every file of the phase stays, each named.
TEST_F(KeptEvidence, VerifiedReadOfACorruptedFileKeepsEveryFileOfThePhase) {
  const std::string f = tmp_ / "data/fpp";
  ASSERT_EQ(Ior({"-w", "-k", "-F"}, f).exit_code, kExitOk);
  {
    std::fstream out(f + ".00000001", std::ios::in | std::ios::out | std::ios::binary);
    ASSERT_TRUE(out.good());
    out.seekp(kMiB + 1000);  // in the middle of the 2 MiB file
    out.write("corrupt!", 8);
  }
  RunResult r = Ior({"-r", "-R", "-F"}, f);
  EXPECT_EQ(r.exit_code, kExitVerify) << r.Output();
  EXPECT_THAT(r.err, HasSubstr("verification failed")) << r.Output();
  for (const char* rank : {".00000000", ".00000001"}) {
    EXPECT_TRUE(fs::exists(f + rank)) << f + rank << " was removed\n" << r.Output();
    ExpectNamedAsKept(r, f + rank);
  }
}

// The control: a verified read that passes removes what it read (IOR without
// -k), and names nothing as kept.
TEST_F(KeptEvidence, VerifiedReadThatPassesStillRemovesTheFile) {
  const std::string f = tmp_ / "data/clean";
  ASSERT_EQ(Ior({"-w", "-k"}, f).exit_code, kExitOk);
  RunResult r = Ior({"-r", "-R"}, f);
  EXPECT_EQ(r.exit_code, kExitOk) << r.Output();
  EXPECT_FALSE(fs::exists(f)) << r.Output();
  EXPECT_THAT(r.out, ::testing::Not(HasSubstr("kept for inspection")));
  EXPECT_EQ(r.Record().kept_files_size(), 0);
}

}  // namespace
}  // namespace lockstep::testing
