#include "agent/session_table.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/random/random.h"
#include "absl/strings/str_format.h"
#include "agent/phase_runner.h"
#include "common/clock.h"
#include "common/errors.h"
#include "common/log.h"

namespace lockstep {
namespace {

std::string PhaseFilesKey(const v1::PhaseSpec& spec) {
  return absl::StrFormat("%s|%s|%d|%d|%u|%u", spec.dir(), spec.file_name(), spec.kind(),
                         spec.file_per_process(), spec.first_rank(), spec.tasks());
}

}  // namespace

std::string RandomHex(int bytes) {
  absl::BitGen gen;
  std::string out;
  for (int i = 0; i < bytes; ++i) out += absl::StrFormat("%02x", absl::Uniform<uint32_t>(gen, 0, 256));
  return out;
}

std::vector<std::string> EndedSession::DirsToRemove(bool all) const {
  std::vector<std::string> dirs;
  for (const auto& [dir, created] : created_dirs) {
    if (all || created.tree_removed) dirs.push_back(dir);
  }
  return dirs;
}

void RemoveLeftovers(const EndedSession& ended, bool all_dirs) {
  for (const auto& [key, phase] : ended.phases) {
    if (!phase.dir) continue;
    if (absl::Status moved = phase.dir->CheckStillAtPath(); !moved.ok()) {
      LogWarning("removing the files of phase %s through the directory held since its "
                 "Prepare: %s",
                 phase.spec.phase_id(), std::string(moved.message()));
    }
    auto removed = RemovePhaseFiles(phase.spec, *phase.dir);
    if (!removed.ok()) LogWarning("%s", std::string(removed.status().message()));
  }
  for (const std::string& d : ended.DirsToRemove(all_dirs)) {
    const CreatedDir& created = ended.created_dirs.at(d);
    if (!created.held) continue;
    if (created.held->Rmdir(d) != 0 && errno != ENOENT) {
      LogWarning("cannot remove the mdtest directory %s this session created: %s", d,
                 BeneathErrorText(errno));
    }
  }
}

SessionTable::SessionTable(uint32_t default_lease_ms, uint32_t min_lease_ms, MonoClock clock)
    : default_lease_ms_(default_lease_ms),
      min_lease_ms_(min_lease_ms),
      clock_(clock ? std::move(clock) : MonoClock(MonotonicNs)) {}

bool SessionTable::Expired() const { return !idle() && Now() >= lease_deadline_mono_ns_; }

absl::Status SessionTable::CheckAttach() const {
  if (idle() || Expired()) return absl::OkStatus();
  return WithKind(absl::FailedPreconditionError(absl::StrFormat(
                      "busy: run %s from %s since %s; wait for it to finish (or its lease "
                      "of %u ms to expire)",
                      run_id_, controller_, FormatRfc3339(attached_unix_ns_), lease_ms_)),
                  v1::BUSY);
}

std::string SessionTable::Begin(const std::string& run_id, const std::string& controller,
                                uint32_t requested_lease_ms, int64_t attached_unix_ns) {
  const uint32_t lease = requested_lease_ms == 0 ? default_lease_ms_ : requested_lease_ms;
  id_ = RandomHex(16);
  run_id_ = run_id;
  controller_ = controller;
  attached_unix_ns_ = attached_unix_ns;
  lease_ms_ = std::max(lease, min_lease_ms_);
  lease_deadline_mono_ns_ = Now() + int64_t{lease_ms_} * 1'000'000;
  return id_;
}

absl::Status SessionTable::Check(const std::string& id) const {
  if (idle()) {
    return WithKind(
        absl::FailedPreconditionError(
            "no session: this agent is idle (restarted, or its lease expired); attach again"),
        v1::SESSION_GONE);
  }
  if (id != id_) {
    return WithKind(absl::FailedPreconditionError(
                        absl::StrFormat("busy: run %s from %s since %s holds this agent", run_id_,
                                        controller_, FormatRfc3339(attached_unix_ns_))),
                    v1::BUSY);
  }
  // A stopped agent that resumes may find calls queued in its sockets: they
  // do not bring an expired session back; the watchdog ends it.
  if (Expired()) {
    return WithKind(absl::FailedPreconditionError(absl::StrFormat(
                        "no session: the lease of %u ms of run %s expired; its tasks are "
                        "aborted and its files removed; attach again",
                        lease_ms_, run_id_)),
                    v1::SESSION_GONE);
  }
  return absl::OkStatus();
}

absl::Status SessionTable::CheckAndRenew(const std::string& id) {
  absl::Status s = Check(id);
  if (s.ok()) {
    lease_deadline_mono_ns_ =
        std::max(lease_deadline_mono_ns_, Now() + int64_t{lease_ms_} * 1'000'000);
  }
  return s;
}

absl::Status SessionTable::Heartbeat(const std::string& id) {
  absl::Status s = Check(id);
  if (s.ok()) lease_deadline_mono_ns_ = Now() + int64_t{lease_ms_} * 1'000'000;
  return s;
}

EndedSession SessionTable::End() {
  EndedSession ended{.run_id = std::move(run_id_),
                     .controller = std::move(controller_),
                     .lease_ms = lease_ms_,
                     .phases = std::move(phases_),
                     .created_dirs = std::move(created_dirs_)};
  phases_.clear();
  created_dirs_.clear();
  id_.clear();
  run_id_.clear();
  controller_.clear();
  lease_deadline_mono_ns_ = 0;
  return ended;
}

void SessionTable::AddPhaseFiles(const v1::PhaseSpec& spec,
                                 std::shared_ptr<const BeneathDir> dir) {
  phases_[PhaseFilesKey(spec)] = {spec, std::move(dir)};
}

void SessionTable::ForgetPhaseFiles(const v1::PhaseSpec& spec) {
  phases_.erase(PhaseFilesKey(spec));
}

std::shared_ptr<const BeneathDir> SessionTable::PhaseDirOf(const v1::PhaseSpec& spec) const {
  auto it = phases_.find(PhaseFilesKey(spec));
  return it == phases_.end() ? nullptr : it->second.dir;
}

void SessionTable::NoteCreatedDir(std::shared_ptr<const BeneathDir> held) {
  const std::string path = held->path();
  created_dirs_.emplace(path, CreatedDir{.held = std::move(held)});
}

void SessionTable::NoteTreeRemoved(const std::string& dir) {
  if (auto it = created_dirs_.find(dir); it != created_dirs_.end()) it->second.tree_removed = true;
}

}  // namespace lockstep
