// Accuracy against fio (not timing): the same small write and read through
// Lockstep and through fio, into separate directories; byte counts and file
// sizes must agree exactly. Skipped when fio is not installed
// (deploy/test.sh installs it).
#include <unistd.h>

#include <filesystem>

#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>

#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "common/files.h"
#include "gtest/gtest.h"
#include "integration/test_cluster.h"
#include "test_util.h"

namespace lockstep::testing {
namespace {

constexpr int kTasks = 2;
constexpr uint64_t kTransfer = 1 << 20;
constexpr uint64_t kBlock = 8 << 20;

std::string FindOnPath(const std::string& name) {
  const char* path = std::getenv("PATH");
  for (auto dir : absl::StrSplit(path ? path : "/usr/bin:/bin", ':')) {
    std::string p = absl::StrFormat("%s/%s", dir, name);
    if (::access(p.c_str(), X_OK) == 0) return p;
  }
  return "";
}

// Runs fio with `args` (JSON to `json_path`) and returns the sum of
// jobs[].<dir>.io_bytes; fails the test on error.
uint64_t RunFio(const std::string& fio, std::vector<std::string> args, const std::string& json_path,
                const std::string& dir) {
  std::vector<std::string> argv = {fio, "--output-format=json", "--output=" + json_path};
  argv.insert(argv.end(), args.begin(), args.end());
  CommandResult r = RunCommand(argv);
  EXPECT_EQ(r.exit_code, 0) << "fio failed: " << r.out << r.err;
  auto text = ReadFileToString(json_path);
  if (!text.ok()) {
    ADD_FAILURE() << text.status();
    return 0;
  }
  google::protobuf::Struct doc;
  auto s = google::protobuf::util::JsonStringToMessage(*text, &doc);
  if (!s.ok()) {
    ADD_FAILURE() << "fio JSON does not parse: " << s.ToString() << "\n" << *text;
    return 0;
  }
  uint64_t bytes = 0;
  const auto& jobs = doc.fields().at("jobs").list_value().values();
  EXPECT_EQ(jobs.size(), static_cast<size_t>(kTasks)) << *text;
  for (const auto& job : jobs) {
    const auto& f = job.struct_value().fields();
    EXPECT_EQ(f.at("error").number_value(), 0) << *text;
    bytes += static_cast<uint64_t>(f.at(dir).struct_value().fields().at("io_bytes").number_value());
  }
  return bytes;
}

TEST(FioAccuracyTest, ByteCountsAndFileSizesMatchFio) {
  const std::string fio = FindOnPath("fio");
  if (fio.empty()) GTEST_SKIP() << "fio is not installed (deploy/test.sh installs it)";

  TestCluster cluster;
  ASSERT_OK(cluster.Start({.agents = {AgentSpec{}}, .dirs = {"lockstep", "fio"}}));
  const std::string root = cluster.root(0);

  auto phase = [](const std::string& kind) {
    return FilePerProcess(kind, kind, kTransfer, kBlock)
        .Set("dir", "lockstep")
        .Set("tasks_per_agent", kTasks)
        .Set("keep", true);
  };
  RunResult r = cluster.Run(cluster.WritePlan(cluster.Plan()
                                                  .Set("name", "fio-accuracy")
                                                  .Set("repetitions", 1)
                                                  .AddPhase(phase("write").Set("fsync", true))
                                                  .AddPhase(phase("read"))));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  v1::RunRecord rec = r.Record();
  ASSERT_EQ(rec.tests_size(), 1);
  ASSERT_EQ(rec.tests(0).phases_size(), 2);
  const v1::PhaseRecord& lw = rec.tests(0).phases(0);
  const v1::PhaseRecord& lr = rec.tests(0).phases(1);
  ASSERT_EQ(lw.kind(), v1::WRITE);
  ASSERT_EQ(lr.kind(), v1::READ);

  // The same work through fio: psync, fresh files, fsync at the end.
  const std::vector<std::string> common = {
      "--directory=" + root + "/fio", "--ioengine=psync", "--fallocate=none",
      absl::StrFormat("--bs=%d", kTransfer), absl::StrFormat("--size=%d", kBlock),
      absl::StrFormat("--numjobs=%d", kTasks), "--filename_format=acc.$jobnum"};
  std::vector<std::string> wargs = common;
  wargs.insert(wargs.end(), {"--name=w", "--rw=write", "--end_fsync=1"});
  std::vector<std::string> rargs = common;
  rargs.insert(rargs.end(), {"--name=r", "--rw=read"});
  const uint64_t fio_written = RunFio(fio, wargs, cluster / "fio-write.json", "write");
  const uint64_t fio_read = RunFio(fio, rargs, cluster / "fio-read.json", "read");

  const uint64_t want = kTasks * kBlock;
  EXPECT_EQ(fio_written, want);
  EXPECT_EQ(fio_read, want);
  EXPECT_EQ(lw.row().bytes(), fio_written);
  EXPECT_EQ(lr.row().bytes(), fio_read);
  EXPECT_EQ(lw.row().expected_bytes(), want);
  uint64_t task_bytes = 0;
  for (const auto& a : lw.agents()) {
    for (const auto& t : a.tasks()) {
      EXPECT_EQ(t.bytes(), kBlock) << "task " << t.rank();
      EXPECT_EQ(t.ops(), kBlock / kTransfer) << "task " << t.rank();
      task_bytes += t.bytes();
    }
  }
  EXPECT_EQ(task_bytes, fio_written);

  // File sizes: one file per task on each side, all the same size.
  std::vector<std::string> ours = ListFiles(root + "/lockstep");
  std::vector<std::string> theirs = ListFiles(root + "/fio");
  ASSERT_EQ(ours.size(), static_cast<size_t>(kTasks));
  ASSERT_EQ(theirs.size(), static_cast<size_t>(kTasks));
  for (int i = 0; i < kTasks; ++i) {
    uint64_t a = std::filesystem::file_size(root + "/lockstep/" + ours[i]);
    uint64_t b = std::filesystem::file_size(root + "/fio/" + theirs[i]);
    EXPECT_EQ(a, kBlock) << ours[i];
    EXPECT_EQ(a, b) << ours[i] << " vs " << theirs[i];
  }
}

}  // namespace
}  // namespace lockstep::testing
