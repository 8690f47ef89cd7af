#include "controller/run/file_removal.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/wire_version.h"
#include "controller/plan/compile.h"
#include "controller/run/agent_client.h"

namespace lockstep {

FileRemoval::FileRemoval(AgentRoster* roster, Heartbeater* heartbeater, RunEmitter* events,
                         const std::atomic<bool>* interrupted, RemovalSession session)
    : roster_(roster),
      heartbeater_(heartbeater),
      events_(events),
      interrupted_(interrupted),
      session_(std::move(session)) {}

std::vector<absl::StatusOr<v1::CleanupReply>> FileRemoval::OnClients(
    const v1::PhaseSpec& base, bool release_only, std::vector<AgentClient*>* targets) {
  const std::vector<AgentClient*> clients = roster_->clients();
  std::vector<v1::CleanupRequest> requests;
  for (size_t i = 0; i < clients.size(); ++i) {  // each client removes its own ranks' files
    if (roster_->IsLost(clients[i])) continue;
    targets->push_back(clients[i]);
    v1::CleanupRequest& r = requests.emplace_back();
    r.set_session_id(clients[i]->session_id);
    *r.mutable_spec() = base;
    SetClientRanks(i, r.mutable_spec());
    r.set_release_only(release_only);
  }
  // A silent agent's call ends within the lease. After an interrupt: a short
  // wait, and an agent that did not finish is left to its lease (not
  // detached), which removes the files.
  const bool interrupted = Interrupted();
  const CallWatch watch = heartbeater_->WatchCalls(interrupted ? nullptr : interrupted_);
  const absl::Duration timeout = interrupted    ? kInterruptedCallTimeout
                                 : release_only ? kRpcTimeout
                                                : kPrepareTimeout;
  auto replies = FanOut<v1::CleanupRequest, v1::CleanupReply>(*targets, requests, timeout,
                                                              LOCKSTEP_ASYNC(Cleanup), &watch);
  for (size_t i = 0; i < targets->size(); ++i) {
    if (!replies[i].ok() && !release_only && Interrupted()) unclean_.insert((*targets)[i]);
  }
  return replies;
}

void FileRemoval::Release(const std::vector<v1::PhaseSpec>& bases) {
  for (const v1::PhaseSpec& base : bases) {
    std::vector<AgentClient*> targets;
    OnClients(base, /*release_only=*/true, &targets);
  }
}

RunError FileRemoval::Remove(const std::vector<v1::PhaseSpec>& bases, uint32_t rep, bool timed,
                              v1::PhaseRecord* last_phase) {
  int64_t start_unix_ns = INT64_MAX, stop_unix_ns = 0;  // in our clock
  std::vector<std::string> errors, lost;
  for (const v1::PhaseSpec& base : bases) {
    std::vector<AgentClient*> targets;
    auto replies = OnClients(base, /*release_only=*/false, &targets);
    for (size_t i = 0; i < targets.size(); ++i) {
      if (!replies[i].ok()) {
        const absl::Status& status = replies[i].status();
        if (!Interrupted() && FailureOfSetupCall(status) == RunFailure::kAgentLost) {
          roster_->MarkLost(targets[i], std::string(status.message()), IsRestarted(status));
          lost.push_back(absl::StrFormat("agent %s lost while removing the files of %s: %s",
                                         targets[i]->address(), base.phase_id(),
                                         status.message()));
        }
        errors.push_back(std::string(status.message()));
        continue;
      }
      const int64_t offset_ns = roster_->clock(targets[i]).offset_ns;
      start_unix_ns = std::min(start_unix_ns, replies[i]->remove_start_unix_ns() - offset_ns);
      stop_unix_ns = std::max(stop_unix_ns, replies[i]->remove_stop_unix_ns() - offset_ns);
    }
  }
  if (timed && stop_unix_ns >= start_unix_ns && start_unix_ns != INT64_MAX) {
    const double seconds = static_cast<double>(stop_unix_ns - start_unix_ns) / 1e9;
    events_->FilesRemoved(seconds, rep);
    if (last_phase) {
      v1::IterationRow* r = last_phase->mutable_remove_row();
      r->set_access("remove");
      r->set_total_s(seconds);
      r->set_iter(rep);
    }
  }
  if (Interrupted()) return Fail(RunFailure::kInterrupted, "interrupted while removing files");
  if (!lost.empty()) return Fail(RunFailure::kAgentLost, absl::StrJoin(lost, "\n"));
  if (!errors.empty()) return Fail(RunFailure::kIoError, absl::StrJoin(errors, "\n"));
  return {};
}

void FileRemoval::CleanUpRestarted(const std::vector<v1::PhaseSpec>& bases) {
  if (Interrupted()) return;  // seconds per agent: the operator wants out
  const std::vector<AgentClient*> clients = roster_->clients();
  for (size_t i = 0; i < clients.size(); ++i) {
    AgentClient* c = clients[i];
    if (!roster_->IsRestarted(c)) continue;
    v1::AttachRequest attach;
    attach.set_run_id(session_.run_id);
    attach.set_controller(session_.controller + " (removing files after a failure)");
    attach.set_lease_ms(session_.lease_ms);
    SetWireVersion(&attach);
    auto attached = FanOut<v1::AttachRequest, v1::AttachReply>({c}, {attach}, absl::Seconds(5),
                                                               LOCKSTEP_ASYNC(Attach));
    if (!attached[0].ok()) continue;  // taken by someone else, or gone again
    for (const v1::PhaseSpec& base : bases) {
      v1::CleanupRequest request;
      request.set_session_id(attached[0]->session_id());
      *request.mutable_spec() = base;
      SetClientRanks(i, request.mutable_spec());
      FanOut<v1::CleanupRequest, v1::CleanupReply>({c}, {request}, absl::Seconds(30),
                                                   LOCKSTEP_ASYNC(Cleanup));
    }
    v1::DetachRequest detach;
    detach.set_session_id(attached[0]->session_id());
    FanOut<v1::DetachRequest, v1::DetachReply>({c}, {detach}, absl::Seconds(5),
                                               LOCKSTEP_ASYNC(Detach));
  }
}

}  // namespace lockstep
