#include "controller/run/run_store.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include <zlib.h>

#include "absl/random/random.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/files.h"
#include "common/json.h"

namespace lockstep {

absl::StatusOr<std::unique_ptr<RunStore>> RunStore::Create(const std::string& out_dir,
                                                          const std::string& run_name,
                                                          const std::string& plan_text) {
  std::error_code ec;
  std::filesystem::create_directories(out_dir, ec);
  if (ec) {
    return absl::PermissionDeniedError(absl::StrFormat(
        "cannot create results directory %s: %s; choose another with --out", out_dir,
        ec.message()));
  }
  std::string safe;
  for (char c : run_name) safe += (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_') ? c : '_';
  if (safe.size() > 40) safe.resize(40);
  std::unique_ptr<RunStore> store(new RunStore());
  absl::BitGen gen;
  for (int attempt = 0; attempt < 20; ++attempt) {
    std::string id = absl::StrFormat(
        "%s-%s-%04x", absl::FormatTime("%Y%m%d-%H%M%S", absl::Now(), absl::UTCTimeZone()), safe,
        absl::Uniform<uint32_t>(gen, 0, 0x10000));
    std::string dir = out_dir + "/" + id;
    if (::mkdir(dir.c_str(), 0755) == 0) {
      store->run_id_ = id;
      store->dir_ = dir;
      break;
    }
    if (errno != EEXIST) {
      return absl::PermissionDeniedError(absl::StrFormat("cannot create %s: %s", dir,
                                                         std::strerror(errno)));
    }
  }
  if (store->dir_.empty()) {
    return absl::AlreadyExistsError(absl::StrFormat("no free run directory under %s", out_dir));
  }
  absl::Status s = WriteFileAtomically(store->dir_ + "/plan.toml", plan_text);
  if (!s.ok()) return s;
  std::string journal = store->dir_ + "/journal.jsonl";
  store->journal_fd_ = ::open(journal.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (store->journal_fd_ < 0) {
    return absl::PermissionDeniedError(
        absl::StrFormat("cannot create %s: %s", journal, std::strerror(errno)));
  }
  return store;
}

RunStore::~RunStore() {
  if (journal_fd_ >= 0) ::close(journal_fd_);
}

absl::Status RunStore::AppendJournal(const v1::PhaseRecord& phase) {
  std::string line = ToJson(phase, false) + "\n";
  size_t done = 0;
  while (done < line.size()) {
    ssize_t n = ::write(journal_fd_, line.data() + done, line.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return absl::InternalError(absl::StrFormat("cannot append to %s/journal.jsonl: %s", dir_,
                                                 std::strerror(errno)));
    }
    done += static_cast<size_t>(n);
  }
  if (::fdatasync(journal_fd_) != 0) {
    return absl::InternalError(
        absl::StrFormat("cannot fsync %s/journal.jsonl: %s", dir_, std::strerror(errno)));
  }
  return absl::OkStatus();
}

absl::Status RunStore::MoveTelemetryOut(v1::PhaseRecord* phase) {
  std::string lines;
  for (v1::AgentPhaseRecord& a : *phase->mutable_agents()) {
    if (!a.has_telemetry()) continue;
    v1::TelemetryLine line;
    line.set_phase_id(phase->phase_id());
    line.set_address(a.address());
    *line.mutable_telemetry() = std::move(*a.mutable_telemetry());
    a.clear_telemetry();
    lines += ToJson(line, false) + "\n";
  }
  if (lines.empty()) return absl::OkStatus();
  // One gzip member per phase, appended: readers (zlib's gzread, zcat) read
  // the members one after the other.
  const std::string path = dir_ + "/" + kTelemetryFile;
  gzFile gz = ::gzopen(path.c_str(), "ab");
  if (gz == nullptr) {
    return absl::InternalError(absl::StrFormat("cannot open %s: %s (the agents' full telemetry "
                                               "of phase %s is not kept)",
                                               path, std::strerror(errno), phase->phase_id()));
  }
  const int written = ::gzwrite(gz, lines.data(), static_cast<unsigned>(lines.size()));
  const int closed = ::gzclose(gz);
  if (written != static_cast<int>(lines.size()) || closed != Z_OK) {
    return absl::InternalError(absl::StrFormat(
        "cannot write %s (zlib error %d): the agents' full telemetry of phase %s is incomplete",
        path, closed, phase->phase_id()));
  }
  return absl::OkStatus();
}

absl::Status RunStore::WriteRunJson(const v1::RunRecord& run) {
  // Without indentation: at 1,024 agents the indentation alone was a third
  // of the file (every field of every agent's record on its own line).
  return WriteFileAtomically(dir_ + "/run.json", ToJson(run, false) + "\n");
}

absl::Status RunStore::WriteSummary(const std::string& text) {
  return WriteFileAtomically(dir_ + "/summary.txt", text);
}

}  // namespace lockstep
