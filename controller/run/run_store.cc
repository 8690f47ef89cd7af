#include "controller/run/run_store.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "absl/random/random.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/files.h"
#include "common/json.h"
#include "common/status_macros.h"
#include "controller/record/journal.h"
#include "controller/record/telemetry_file.h"
#include "absl/strings/str_cat.h"

namespace lockstep {
namespace {

constexpr char kSpoolFile[] = ".agents.spool";

absl::Status WriteAll(int fd, std::string_view data, const std::string& path) {
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return absl::InternalError(
          absl::StrFormat("cannot write %s: %s", path, std::strerror(errno)));
    }
    done += static_cast<size_t>(n);
  }
  return absl::OkStatus();
}

// Set fields only: the agents' records are most of every phase's JSON, and
// printing their defaults is most of protobuf's JSON time for them
// (common/json.h). A reader gets the defaults back.
std::string AgentsJson(const google::protobuf::RepeatedPtrField<v1::AgentPhaseRecord>& agents) {
  std::string out;
  for (const v1::AgentPhaseRecord& a : agents) {
    if (!out.empty()) out += ',';
    out += ToJsonSetFieldsOnly(a);
  }
  return out;
}

// Where `"key":[]` starts among the members of the object `json` (depth 1,
// outside strings): a nested object's member of the same name, or the text
// in a string value, is not it. npos when absent.
size_t TopLevelEmptyArray(const std::string& json, const std::string& key) {
  const std::string member = "\"" + key + "\":[]";
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < json.size(); ++i) {
    const char c = json[i];
    if (in_string) {
      if (c == '\\') ++i;  // the escaped character
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') {
      if (depth == 1 && json.compare(i, member.size(), member) == 0) return i;
      in_string = true;
    } else if (c == '{' || c == '[') {
      ++depth;
    } else if (c == '}' || c == ']') {
      --depth;
    }
  }
  return std::string::npos;
}

}  // namespace

JsonSplit SplitJsonAt(const std::string& object_json, const std::string& key) {
  const size_t at = TopLevelEmptyArray(object_json, key);
  if (at != std::string::npos) {
    const size_t open = at + key.size() + 4;  // the ']' after "key":[
    return {object_json.substr(0, open), object_json.substr(open)};
  }
  // Not printed (an empty repeated field left out): add it at the end.
  const size_t close = object_json.rfind('}');
  if (close == std::string::npos) return {object_json + "[", "]"};
  const bool bare = object_json.find_first_not_of(" \n{", 0) >= close;
  // StrCat, not "]" + string&&: GCC 12 at -O3 warns falsely (-Wrestrict,
  // GCC bug 105329) on that form.
  return {absl::StrCat(object_json.substr(0, close), bare ? "" : ",", "\"", key, "\":["),
          absl::StrCat("]", object_json.substr(close))};
}

namespace {

// The results directory holds each run's directory by its path: another
// account that may rename entries in it (its owner, or anyone where it is
// writable without the sticky bit) could swap a run's directory for a link
// between two writes, and the controller (root, often) would write its
// files there. /tmp (root's, sticky) is fine.
absl::Status CheckResultsDir(const std::string& out_dir) {
  struct stat st = {};
  if (::stat(out_dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return absl::PermissionDeniedError(absl::StrFormat(
        "results directory %s is not a directory; choose another with --out", out_dir));
  }
  const bool others_own = st.st_uid != ::geteuid() && st.st_uid != 0;
  const bool others_write = (st.st_mode & (S_IWGRP | S_IWOTH)) != 0 && (st.st_mode & S_ISVTX) == 0;
  if (!others_own && !others_write) return absl::OkStatus();
  return absl::PermissionDeniedError(absl::StrFormat(
      "results directory %s (uid %d, mode %04o) lets another account than uid %d and root "
      "rename the run directories in it (%s): a run's files could be redirected; choose a "
      "directory of your own with --out, or chmod +t %s",
      out_dir, st.st_uid, st.st_mode & 07777, ::geteuid(),
      others_own ? "it owns the directory" : "writable by others, without the sticky bit",
      out_dir));
}

}  // namespace

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
  RETURN_IF_ERROR(CheckResultsDir(out_dir));
  std::string safe;
  for (char c : run_name) safe += (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_') ? c : '_';
  if (safe.size() > 40) safe.resize(40);
  std::unique_ptr<RunStore> store(new RunStore());
  absl::BitGen gen;
  for (int attempt = 0; attempt < 20; ++attempt) {
    // 48 random bits: a results service keeps every site's run ids in one
    // namespace, and sites run the same plans nightly at the same second
    // (16 bits gave two such runs a 1 in 65,536 chance to collide, the later
    // one then refused for ever).
    std::string id = absl::StrFormat(
        "%s-%s-%012x", absl::FormatTime("%Y%m%d-%H%M%S", absl::Now(), absl::UTCTimeZone()), safe,
        absl::Uniform<uint64_t>(gen, 0, uint64_t{1} << 48));
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
  // Held while this run goes (released when the store closes, or by the
  // kernel when the controller dies): `lockstep report` of the directory
  // meanwhile knows the run is live (record/journal.h JournalIsHeld).
  (void)::flock(store->journal_fd_, LOCK_EX | LOCK_NB);
  return store;
}

RunStore::~RunStore() {
  if (journal_fd_ >= 0) ::close(journal_fd_);
  if (spool_fd_ >= 0) {
    ::close(spool_fd_);
    ::unlink((dir_ + "/" + kSpoolFile).c_str());
  }
}

absl::Status RunStore::AppendJournal(const v1::PhaseRecord& phase) {
  return AppendJournalLine(ToJson(phase, false) + "\n");
}

absl::Status RunStore::AppendTestStart(const v1::TestRecord& test) {
  return AppendJournalLine(JournalTestStartLine(test) + "\n");
}

absl::Status RunStore::AppendFilesRemoved(const v1::PhaseRecord& phase) {
  return AppendJournalLine(JournalFilesRemovedLine(phase) + "\n");
}

absl::Status RunStore::AppendRunEnd(const v1::RunEnd& end) {
  return AppendJournalLine(JournalEndLine(end) + "\n");
}

absl::Status RunStore::AppendJournalLine(const std::string& line) {
  RETURN_IF_ERROR(WriteAll(journal_fd_, line, dir_ + "/journal.jsonl"));
  if (::fdatasync(journal_fd_) != 0) {
    return absl::InternalError(
        absl::StrFormat("cannot fsync %s/journal.jsonl: %s", dir_, std::strerror(errno)));
  }
  return absl::OkStatus();
}

// No malloc_trim after the offload: the freed heap is what the next phase's
// calls reuse. Trimming it each phase cost 30% of the controller's CPU per
// phase at 1,024 agents (page faults and madvise) and left RSS after 30
// phases where it was without (tests/bench/README.md, section 25).
absl::Status RunStore::JournalAndOffload(v1::PhaseRecord* phase) {
  google::protobuf::RepeatedPtrField<v1::AgentPhaseRecord> agents;
  agents.Swap(phase->mutable_agents());
  const std::string agents_json = AgentsJson(agents);
  const JsonSplit light = SplitJsonAt(ToJson(*phase, false), "agents");
  const std::string line = light.prefix + agents_json + light.suffix + "\n";
  absl::Status journaled = AppendJournalLine(line);
  if (absl::Status s = Spool(*phase, agents_json); !s.ok()) {
    agents.Swap(phase->mutable_agents());  // kept in memory: run.json stays complete
    return journaled.ok() ? s : journaled;
  }
  return journaled;
}

absl::Status RunStore::Spool(const v1::PhaseRecord& phase, const std::string& agents_json) {
  const std::string path = dir_ + "/" + kSpoolFile;
  if (spool_fd_ < 0) {
    spool_fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (spool_fd_ < 0) {
      return absl::InternalError(absl::StrFormat(
          "cannot create %s: %s (the run's records stay in memory)", path, std::strerror(errno)));
    }
  }
  const int64_t offset = ::lseek(spool_fd_, 0, SEEK_END);
  if (offset < 0) return absl::InternalError(absl::StrFormat("cannot seek %s: %s", path, std::strerror(errno)));
  absl::Status s = WriteAll(spool_fd_, agents_json, path);
  if (!s.ok()) {
    if (::ftruncate(spool_fd_, offset) != 0) {}  // best effort: the span is not recorded
    return s;
  }
  spooled_[absl::StrCat(phase.phase_id(), "#", phase.attempts())] = {
      offset, static_cast<int64_t>(agents_json.size())};
  return absl::OkStatus();
}

absl::Status RunStore::ReadSpan(const Span& span, std::string* out) const {
  out->resize(static_cast<size_t>(span.length));
  int64_t done = 0;
  while (done < span.length) {
    ssize_t n = ::pread(spool_fd_, out->data() + done, static_cast<size_t>(span.length - done),
                        span.offset + done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      return absl::InternalError(absl::StrFormat("cannot read %s/%s back: %s", dir_, kSpoolFile,
                                                 n == 0 ? "it is shorter than written"
                                                        : std::strerror(errno)));
    }
    done += n;
  }
  return absl::OkStatus();
}

absl::Status RunStore::MoveTelemetryOut(v1::PhaseRecord* phase) {
  std::vector<v1::TelemetryLine> lines;
  for (v1::AgentPhaseRecord& a : *phase->mutable_agents()) {
    if (!a.has_telemetry()) continue;
    v1::TelemetryLine& line = lines.emplace_back();
    line.set_phase_id(phase->phase_id());
    line.set_address(a.address());
    line.mutable_telemetry()->Swap(a.mutable_telemetry());
    a.clear_telemetry();
  }
  return AppendTelemetryFile(dir_ + "/" + kTelemetryFile, lines,
                             absl::StrFormat("the agents' full telemetry of phase %s",
                                             phase->phase_id()));
}

absl::Status RunStore::WriteRunJson(const v1::RunRecord& run) {
  // Without indentation: it would put every field of every agent's record
  // on its own line and be a large share of the file.
  const std::string path = dir_ + "/run.json";
  if (spooled_.empty()) return WriteFileAtomically(path, ToJson(run, false) + "\n");
  // Streamed: the whole text of a long run of many agents is never held in
  // memory at once.
  const std::string tmp = absl::StrFormat("%s.tmp.%d", path, ::getpid());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    return absl::InternalError(absl::StrFormat("cannot create %s: %s", tmp, std::strerror(errno)));
  }
  absl::Status s = WriteRunJsonTo(run, fd, tmp);
  if (s.ok() && ::fsync(fd) != 0) {
    s = absl::InternalError(absl::StrFormat("cannot fsync %s: %s", tmp, std::strerror(errno)));
  }
  ::close(fd);
  if (s.ok() && ::rename(tmp.c_str(), path.c_str()) != 0) {
    s = absl::InternalError(
        absl::StrFormat("cannot rename %s into place: %s", path, std::strerror(errno)));
  }
  if (!s.ok()) {
    ::unlink(tmp.c_str());
    return s;
  }
  const int dfd = ::open(dir_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
  return absl::OkStatus();
}

absl::Status RunStore::WriteRunJsonTo(const v1::RunRecord& run, int fd,
                                      const std::string& tmp) const {
  v1::RunRecord shell = run;  // light: the phases' agents are in the spool
  shell.clear_tests();
  const JsonSplit r = SplitJsonAt(ToJson(shell, false), "tests");
  RETURN_IF_ERROR(WriteAll(fd, r.prefix, tmp));
  for (int i = 0; i < run.tests_size(); ++i) {
    v1::TestRecord test_shell = run.tests(i);
    test_shell.clear_phases();
    const JsonSplit t = SplitJsonAt(ToJson(test_shell, false), "phases");
    RETURN_IF_ERROR(WriteAll(fd, i == 0 ? t.prefix : "," + t.prefix, tmp));
    for (int j = 0; j < run.tests(i).phases_size(); ++j) {
      if (j > 0) RETURN_IF_ERROR(WriteAll(fd, ",", tmp));
      RETURN_IF_ERROR(WritePhaseJson(run.tests(i).phases(j), fd, tmp));
    }
    RETURN_IF_ERROR(WriteAll(fd, t.suffix, tmp));
  }
  return WriteAll(fd, r.suffix + "\n", tmp);
}

absl::Status RunStore::WritePhaseJson(const v1::PhaseRecord& phase, int fd,
                                      const std::string& tmp) const {
  auto it = spooled_.find(absl::StrCat(phase.phase_id(), "#", phase.attempts()));
  if (it == spooled_.end()) return WriteAll(fd, ToJson(phase, false), tmp);
  v1::PhaseRecord shell = phase;
  shell.clear_agents();
  const JsonSplit p = SplitJsonAt(ToJson(shell, false), "agents");
  std::string agents;
  RETURN_IF_ERROR(ReadSpan(it->second, &agents));
  return WriteAll(fd, p.prefix + agents + p.suffix, tmp);
}

absl::Status RunStore::WriteRunStart(const v1::RunRecord& run) {
  return WriteFileAtomically(dir_ + "/run-start.json", ToJson(run, true) + "\n");
}

}  // namespace lockstep
