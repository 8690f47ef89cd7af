// PhaseAttempt's steps 6 and 7 (controller/run/phase_attempt.h): each
// agent's answer collected into the PhaseRecord in the controller's clock
// (its tasks, series, telemetry, start margin, first failure; the servers'
// telemetry windows; the files of a failed verification), then the record
// reduced (IOR's rows, start and release skew with the skew's error bound,
// latency, role telemetry) and the start margins handed to the BarrierLead.
// The attempt's other steps are in phase_attempt.cc.
#include "controller/run/phase_attempt.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "common/clock.h"
#include "controller/plan/phase_kind.h"
#include "controller/record/ior_math.h"
#include "controller/record/phase_reduce.h"
#include "controller/record/telemetry_summary.h"
#include "controller/run/phase_results.h"
#include "controller/run/run_error.h"

namespace lockstep {

// 6. Collect, in our time base.
void PhaseAttempt::Collect(RunError* failure) {
  for (size_t i = 0; i < streams_.size(); ++i) CollectClient(i, failure);
  if (failure->kind == RunFailure::kVerify) NameVerifiedFiles();
  if (rendezvous_) {
    for (const v1::RendezvousRound& r : rendezvous_->Rounds()) *record_->add_rendezvous() = r;
  }
}

void PhaseAttempt::CollectClient(size_t i, RunError* failure) {
  AgentClient* c = clients_[i];
  v1::AgentPhaseRecord* apr = record_->add_agents();
  apr->set_address(c->address());
  apr->set_role(c->role());
  apr->set_stripe_layout(prepared_[i]->stripe_layout());
  apr->set_fs_name(prepared_[i]->fs_name());
  apr->set_fs_version(prepared_[i]->fs_version());
  if (prepared_[i]->has_layout()) *apr->mutable_layout() = prepared_[i]->layout();
  if (cache_done_.count(c)) *apr->mutable_cache() = cache_done_[c];
  absl::StatusOr<v1::PhaseResult> result = streams_[i]->Result();
  if (!result.ok()) {
    const absl::Status& status = result.status();
    apr->set_error(std::string(status.message()));
    // Our own cancellation after another agent's loss is not this agent's fault.
    if (!absl::IsCancelled(status) || !*failure) {
      run_.roster.MarkLost(c, std::string(status.message()), IsRestarted(status));
    }
    if (!*failure) {
      *failure = Fail(RunFailure::kAgentLost, absl::StrFormat("agent %s lost during %s: %s",
                                                              c->address(), phase_id_,
                                                              status.message()));
    }
    return;
  }
  apr->set_series_interval_ms(result->series_interval_ms());
  apr->mutable_series_bytes()->Swap(result->mutable_series_bytes());
  if (result->has_telemetry()) {
    *apr->mutable_telemetry_brief() = BriefOf(result->telemetry());
    apr->mutable_telemetry()->Swap(result->mutable_telemetry());  // to telemetry.pb.gz
  }
  if (result->start_received_unix_ns() != 0) {
    apr->set_start_margin_ns(streams_[i]->request().start_at_unix_ns() -
                             result->start_received_unix_ns());
  }
  apr->set_start_note(result->start_note());
  // What a failure was, read before the tasks move into the record.
  const RunFailure failed_as = result->ok() ? RunFailure::kNone : FailureOfPhaseResult(*result);
  const v1::ErrorKind failed_kind =
      result->ok() ? v1::ERROR_KIND_UNSPECIFIED : ErrorKindOfPhaseResult(*result);
  const int64_t offset_ns = run_.roster.clock(c).offset_ns;
  apr->mutable_tasks()->Swap(result->mutable_tasks());
  for (v1::TaskResult& task : *apr->mutable_tasks()) {
    ToControllerClock(offset_ns, &task);
    tasks_.push_back(&task);  // stable: a repeated field's elements do not move
  }
  if (result->ok()) return;
  apr->set_error(result->error());
  if (!*failure) {
    *failure = Fail(failed_as, absl::StrFormat("phase %s on agent %s: %s", phase_id_,
                                               c->address(), result->error()));
    record_->set_error_kind(failed_kind);
  }
}

// The files of a failed verification, on every client ("host:/path", once
// each): the coordinator keeps them and says where they are.
void PhaseAttempt::NameVerifiedFiles() {
  std::set<std::string> seen;
  for (size_t i = 0; i < clients_.size() && i < prepared_.size(); ++i) {
    if (!prepared_[i].ok()) continue;
    const std::string& name = clients_[i]->facts.hostname();
    const std::string host = name.empty() ? clients_[i]->address() : name;
    for (const std::string& file : prepared_[i]->files()) {
      const std::string where = host + ":" + file;
      if (seen.insert(where).second) record_->add_verify_failed_files(where);
    }
  }
}

void PhaseAttempt::CollectServers(
    const std::vector<absl::StatusOr<v1::TelemetryReply>>& telemetry) {
  for (size_t i = 0; i < servers_.size(); ++i) {
    AgentClient* server = servers_[i];
    v1::AgentPhaseRecord* apr = record_->add_agents();
    apr->set_address(server->address());
    apr->set_role(server->role());
    if (cache_done_.count(server)) *apr->mutable_cache() = cache_done_[server];
    if (i >= telemetry.size()) continue;
    if (telemetry[i].ok()) {
      *apr->mutable_telemetry_brief() = BriefOf(telemetry[i]->telemetry());
      *apr->mutable_telemetry() = telemetry[i]->telemetry();
    } else {
      apr->set_error(std::string(telemetry[i].status().message()));
    }
  }
}

// 7. Reduce: IOR's rows, skew, latency, telemetry.
void PhaseAttempt::Reduce(const RunError& failure) {
  const std::vector<const v1::TaskResult*>& tasks = tasks_;
  ReducePhase(tasks, base_, base_.repetition(), record_);
  record_->set_start_skew_ns(StartSkewNs(tasks));
  record_->set_release_skew_ns(ReleaseSkewNs(tasks));
  std::vector<int64_t> uncertainties_ns;
  for (AgentClient* c : clients_) uncertainties_ns.push_back(run_.roster.clock(c).delay_ns / 2);
  record_->set_start_skew_uncertainty_ns(StartSkewUncertaintyNs(std::move(uncertainties_ns)));
  *record_->mutable_latency() = SummarizeLatency(tasks);
  std::map<std::string, std::string> host_by_address;
  for (AgentClient* a : run_.roster.all()) host_by_address[a->address()] = a->facts.hostname();
  for (v1::RoleTelemetry& r : SummarizeRoles(*record_, host_by_address)) {
    *record_->add_role_telemetry() = std::move(r);
  }
  ObserveMargins(failure);
  const int64_t max_start_skew_ns = int64_t{run_.plan.max_start_skew_us} * 1000;
  if (max_start_skew_ns > 0 &&
      record_->start_skew_ns() + record_->start_skew_uncertainty_ns() > max_start_skew_ns) {
    record_->set_skew_exceeded(true);
  }
  record_->set_ok(!failure);
  if (failure) record_->set_error(failure.message);
  record_->set_partial(partial_);
  record_->set_reduced_unix_ns(RealtimeNs());
}

// The slowest client's start margin, for the record and the next lead.
void PhaseAttempt::ObserveMargins(const RunError& failure) {
  const v1::AgentPhaseRecord* slowest = SlowestStartClient(*record_);
  if (slowest == nullptr) return;
  const int64_t min_margin_ns = slowest->start_margin_ns();
  record_->set_start_margin_ns(min_margin_ns);
  if (!failure) {
    run_.lead.Observe(absl::Nanoseconds(record_->lead_ns()), absl::Nanoseconds(min_margin_ns),
                      clients_.size());
    std::map<std::string, int64_t> uncertainty_ns;
    for (AgentClient* c : clients_) {
      uncertainty_ns[c->address()] = run_.roster.clock(c).delay_ns / 2;
    }
    run_.lead.ObserveRelease(absl::Nanoseconds(LatestReleaseLateNs(*record_, uncertainty_ns)));
    // Transfer kinds only: other kinds' open timers span the whole task.
    if (KindOf(base_.kind()).IorTransfer()) {
      int64_t longest_open_ns = 0;
      for (const v1::AgentPhaseRecord& a : record_->agents()) {
        for (const v1::TaskResult& t : a.tasks()) {
          longest_open_ns =
              std::max(longest_open_ns, t.open_stop_unix_ns() - t.open_start_unix_ns());
        }
      }
      run_.lead.ObserveOpens(absl::Nanoseconds(longest_open_ns));
    }
  }
}

}  // namespace lockstep
