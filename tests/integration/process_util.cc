#include "integration/process_util.h"

#include <signal.h>

#include <algorithm>
#include <filesystem>

#include <google/protobuf/util/json_util.h>

#include "absl/strings/str_format.h"
#include "common/files.h"
#include "controller/record/telemetry_file.h"
#include "controller/results/journal_report.h"

namespace lockstep::testing {

std::string BinDir() { return LOCKSTEP_BIN_DIR; }
std::string ToolsDir() { return LOCKSTEP_TOOLS_DIR; }
std::string SourceDir() { return LOCKSTEP_SOURCE_DIR; }

ListeningProcess::ListeningProcess(const std::vector<std::string>& argv,
                                   const std::string& log_path, absl::Duration timeout)
    : log_(log_path) {
  absl::StatusOr<std::unique_ptr<ChildProcess>> child = ChildProcess::Start(argv, log_);
  if (!child.ok()) {
    error_ = std::string(child.status().message());
    return;
  }
  absl::StatusOr<std::string> address = (*child)->WaitForLine("listening on ", timeout);
  if (!address.ok()) {
    error_ = std::string(address.status().message());
    return;
  }
  child_ = *std::move(child);
  address_ = *std::move(address);
}

ListeningProcess::~ListeningProcess() {
  if (child_ != nullptr) child_->Stop(absl::Seconds(5));
}

void ListeningProcess::Kill(int signal) {
  if (!ok()) return;
  if (signal == SIGKILL) {
    child_->Kill();
  } else {
    child_->Signal(signal);
  }
}

bool Exited(int pid) {
  auto stat = ReadFileToString(absl::StrFormat("/proc/%d/stat", pid));
  if (!stat.ok()) return true;
  const size_t close = stat->rfind(')');
  return close != std::string::npos && close + 2 < stat->size() && (*stat)[close + 2] == 'Z';
}

CommandResult RunLockstep(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {BinDir() + "/lockstep"};
  for (const auto& a : args) argv.push_back(a);
  return RunCommand(argv);
}

v1::RunRecord ReadRunJson(const std::string& run_dir) {
  v1::RunRecord rec;
  auto text = ReadFileToString(run_dir + "/run.json");
  if (!text.ok()) {
    ADD_FAILURE() << text.status();
    return rec;
  }
  auto s = google::protobuf::util::JsonStringToMessage(*text, &rec);
  if (!s.ok()) ADD_FAILURE() << "run.json does not parse: " << s.ToString();
  // As every reader of a run directory: the agents' full telemetry is in
  // telemetry.pb.gz next to run.json.
  const std::string damage = RestoreTelemetryFromDir(run_dir, &rec);
  if (!damage.empty()) ADD_FAILURE() << damage;
  return rec;
}

void ExpectReportReprintsRun(const std::string& run_dir) {
  CommandResult again = RunLockstep({"report", run_dir});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  auto summary = ReadFileToString(run_dir + "/summary.txt");
  ASSERT_TRUE(summary.ok()) << summary.status();
  ASSERT_FALSE(summary->empty()) << run_dir;
  EXPECT_EQ(again.out, *summary + FormatPhaseStarts(ReadRunJson(run_dir)));
}

std::string RunDirFromOutput(const std::string& out) {
  const std::string key = "# Results : ";
  size_t p = out.rfind(key);
  if (p == std::string::npos) return "";
  size_t e = out.find('\n', p);
  std::string dir = out.substr(p + key.size(), e - p - key.size());
  if (!dir.empty() && dir.back() == '/') dir.pop_back();
  return dir;
}

std::vector<std::string> ListFiles(const std::string& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    out.push_back(e.path().filename().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace lockstep::testing
