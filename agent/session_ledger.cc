#include "agent/session_ledger.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "agent/beneath.h"
#include "agent/phase_runner.h"
#include "common/files.h"
#include "common/log.h"
#include "common/status_macros.h"

namespace lockstep {
namespace {

// A ledger lists a session's phases and directories: a few KB. Anything
// larger (or endless, such as a device) is not one. (A FIFO would block the
// open itself: CheckStateDir keeps others from putting one there.)
constexpr uint64_t kMaxLedgerBytes = uint64_t{64} << 20;

constexpr char kHeader[] = "lockstep-agent ledger 1";

std::string Hex(const std::string& s) { return absl::BytesToHexString(s); }

// One line of a ledger: "phase ROOT DIR SPEC" or "created ROOT DIR" (hex fields).
struct Entry {
  std::string kind;
  std::string root;
  std::string dir;
  v1::PhaseSpec spec;
};

std::vector<Entry> ParseLedger(const std::string& text, std::string* run_id) {
  std::vector<Entry> entries;
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    std::vector<std::string> f = absl::StrSplit(line, ' ');
    if (f.size() == 2 && f[0] == "run") *run_id = absl::HexStringToBytes(f[1]);
    if (f.size() < 3 || (f[0] != "phase" && f[0] != "created")) continue;
    Entry e{.kind = f[0], .root = absl::HexStringToBytes(f[1]), .dir = absl::HexStringToBytes(f[2])};
    if (e.kind == "phase" && (f.size() != 4 || !e.spec.ParseFromString(absl::HexStringToBytes(f[3])))) {
      continue;
    }
    entries.push_back(std::move(e));
  }
  return entries;
}

// Removes one entry below its root, if the root is one of `roots`; false
// when it is not this agent's to remove. Adds what it removed to *count.
bool RemoveEntry(const Entry& e, const AllowedRoots& roots, const std::string& owner,
                 uint64_t* count) {
  const auto& ours = roots.roots();
  if (std::find(ours.begin(), ours.end(), e.root) == ours.end()) return false;
  auto root = BeneathDir::OpenRoot(e.root);
  if (!root.ok()) {
    LogWarning("%s: %s", owner, std::string(root.status().message()));
    return false;
  }
  if (e.kind == "created") {
    if ((*root)->Rmdir(e.dir) == 0) {
      ++*count;
      LogInfo("%s: removed the directory %s its session made", owner, e.dir);
    }
    return true;
  }
  auto dir = (*root)->OpenDir(e.dir);
  if (!dir.ok()) {
    if (!absl::IsNotFound(dir.status())) {
      LogWarning("%s: phase %s: %s", owner, e.spec.phase_id(), std::string(dir.status().message()));
    }
    return true;
  }
  auto removed = RemovePhaseFiles(e.spec, **dir);
  if (!removed.ok()) {
    LogWarning("%s: phase %s: %s", owner, e.spec.phase_id(), std::string(removed.status().message()));
    return true;
  }
  *count += *removed;
  LogInfo("%s: removed %u file(s) of phase %s in %s", owner, *removed, e.spec.phase_id(), e.dir);
  return true;
}

// The "agent-<pid>" names of the lock files in `dir`.
std::vector<std::string> LockNames(const std::string& dir) {
  std::vector<std::string> names;
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return names;
  while (struct dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (absl::StartsWith(name, "agent-") && absl::EndsWith(name, ".lock")) {
      names.push_back(name.substr(0, name.size() - 5));
    }
  }
  ::closedir(d);
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace

SessionLedger::SessionLedger(std::string ledger_path, std::string lock_path, int lock_fd)
    : ledger_path_(std::move(ledger_path)), lock_path_(std::move(lock_path)), lock_fd_(lock_fd) {}

SessionLedger::~SessionLedger() {
  // A clean exit: nothing is left to a later agent (the session ended first).
  if (written_.empty() || written_ == std::string(kHeader) + "\n") {
    ::unlink(ledger_path_.c_str());
    ::unlink(lock_path_.c_str());
  }
  if (lock_fd_ >= 0) ::close(lock_fd_);
}

absl::Status CheckStateDir(const std::string& state_dir) {
  if (absl::Status s = MakeDirectories(state_dir, 0700); !s.ok()) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "state directory %s: %s; create it or give another with --state_dir", state_dir,
        std::string(s.message())));
  }
  struct stat st = {};
  if (::stat(state_dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "state directory %s is not a directory; give another with --state_dir", state_dir));
  }
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0 || (st.st_uid != ::geteuid() && st.st_uid != 0)) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "state directory %s (uid %d, mode %04o) can be written by others than uid %d and root: "
        "a ledger put there would make this agent remove the files it names; make it private "
        "(chown root and chmod 0700 %s) or give another with --state_dir",
        state_dir, st.st_uid, st.st_mode & 07777, ::geteuid(), state_dir));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<SessionLedger>> SessionLedger::Open(const std::string& state_dir) {
  RETURN_IF_ERROR(CheckStateDir(state_dir));
  const std::string base = absl::StrFormat("%s/agent-%d", state_dir, ::getpid());
  const std::string lock_path = base + ".lock";
  // Locked, and still the file of that name: another agent starting may
  // have taken our fresh lock file, not locked yet, for a dead agent's, and
  // be removing it (RemoveLostSessions: it holds the lock meanwhile). Then
  // a new one is made after a moment; that race is lost rarely, and hardly
  // twice. (An agent of the same pid in another pid namespace, on the same
  // directory, holds it for good: the error after the last try.)
  constexpr int kTries = 16;
  for (int attempt = 1;; ++attempt) {
    const int fd = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0) break;
    int err = 0;
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      err = errno;
    } else {
      struct stat held, named;
      const bool named_ok = ::fstat(fd, &held) == 0 && ::stat(lock_path.c_str(), &named) == 0;
      if (named_ok && held.st_ino == named.st_ino) {
        return std::unique_ptr<SessionLedger>(new SessionLedger(base + ".ledger", lock_path, fd));
      }
      err = named_ok ? ESTALE : errno;  // replaced, or gone
    }
    ::close(fd);
    errno = err;
    if (attempt == kTries) break;
    absl::SleepFor(absl::Milliseconds(attempt));
  }
  const int err = errno;
  return absl::FailedPreconditionError(absl::StrFormat(
      "cannot lock %s: %s; give a writable --state_dir", lock_path, std::strerror(err)));
}

void SessionLedger::Record(const SessionTable& sessions, const AllowedRoots& roots) {
  std::string text = std::string(kHeader) + "\n";
  if (!sessions.idle()) text += "run " + Hex(sessions.run_id()) + "\n";
  for (const auto& [key, phase] : sessions.phases()) {
    if (!phase.dir) continue;
    const std::string& dir = phase.dir->path();
    text += absl::StrFormat("phase %s %s %s\n", Hex(roots.RootOf(dir)), Hex(dir),
                            Hex(phase.spec.SerializeAsString()));
  }
  for (const auto& [dir, created] : sessions.created_dirs()) {
    text += absl::StrFormat("created %s %s\n", Hex(roots.RootOf(dir)), Hex(dir));
  }
  if (text == written_) return;
  if (absl::Status s = WriteFileAtomically(ledger_path_, text, 0600); !s.ok()) {
    LogWarning("cannot record the session's files in %s: %s", ledger_path_,
               std::string(s.message()));
    return;
  }
  written_ = std::move(text);
}

uint64_t RemoveLostSessions(const std::string& state_dir, const AllowedRoots& roots) {
  uint64_t count = 0;
  for (const std::string& name : LockNames(state_dir)) {
    const std::string base = state_dir + "/" + name;
    const int fd = ::open((base + ".lock").c_str(), O_RDWR | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) continue;
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {  // a live agent's
      ::close(fd);
      continue;
    }
    std::string run_id;
    const auto text = ReadFileAtMost(base + ".ledger", kMaxLedgerBytes, "a session ledger");
    const std::vector<Entry> entries = text.ok() ? ParseLedger(*text, &run_id) : std::vector<Entry>{};
    const std::string owner =
        absl::StrFormat("files left by an agent that ended without removing them (%s, run %s)",
                        base + ".ledger", run_id.empty() ? "-" : run_id);
    bool all_ours = true;
    // The phases' files first: a directory the session made is empty after.
    for (const char* kind : {"phase", "created"}) {
      for (const Entry& e : entries) {
        if (e.kind == kind) all_ours &= RemoveEntry(e, roots, owner, &count);
      }
    }
    if (all_ours) {
      ::unlink((base + ".ledger").c_str());
      ::unlink((base + ".lock").c_str());
    }
    ::close(fd);
  }
  return count;
}

}  // namespace lockstep
