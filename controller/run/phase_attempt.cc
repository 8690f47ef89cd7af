#include "controller/run/phase_attempt.h"

#include <openssl/rand.h>

#include <algorithm>
#include <random>

#include "absl/strings/str_format.h"
#include "common/clock.h"
#include "common/errors.h"
#include "common/layout.h"
#include "common/names.h"
#include "common/wire_version.h"
#include "controller/plan/compile.h"
#include "controller/plan/phase_kind.h"
#include "controller/run/bounded_parallel.h"
#include "controller/run/agent_checks.h"
#include "controller/run/agent_text.h"
#include "controller/run/host_limits.h"
#include "controller/run/phase_specs.h"
#include "controller/run/progress_line.h"

namespace lockstep {
namespace {

// The server agents that do not run the phase themselves.
std::vector<AgentClient*> ServersBesides(const std::vector<AgentClient*>& servers,
                                         const std::vector<AgentClient*>& takers) {
  std::vector<AgentClient*> out;
  for (AgentClient* s : servers) {
    if (std::find(takers.begin(), takers.end(), s) == takers.end()) out.push_back(s);
  }
  return out;
}

// The most tasks one agent runs (net and backend phases differ by agent).
uint32_t MostTasks(const std::vector<v1::PrepareRequest>& requests) {
  uint32_t most = 0;
  for (const v1::PrepareRequest& r : requests) most = std::max(most, r.spec().tasks());
  return most;
}

// Tasks released at the start instant spin for their last half millisecond
// instead of sleeping, where a host's tasks fit on its cores.
constexpr absl::Duration kSpinDuration = absl::Microseconds(500);
// How often the coordinator looks at progress, leases and interrupts while
// a phase runs.
constexpr absl::Duration kWatchPeriod = absl::Milliseconds(100);
// Progress events the controller takes per second, from all agents at once.
constexpr size_t kMaxProgressEventsPerSecond = 256;
// Threads that send the Start calls.
constexpr size_t kStartThreads = 8;

}  // namespace

PhaseAttempt::PhaseAttempt(const RunParts& run, const PhasePlan& phase,
                           const v1::PhaseSpec& base, const v1::TestRecord& test, bool partial,
                           v1::PhaseRecord* record)
    : run_(run),
      phase_(phase),
      base_(base),
      phase_id_(base.phase_id()),
      test_(test),
      partial_(partial),
      record_(record),
      watch_(run.heartbeater.WatchCalls(run.options.interrupted)),
      clients_(PhaseTakersOf(phase.kind, run.roster.clients(), run.roster.servers())),
      servers_(ServersBesides(run.roster.servers(), clients_)) {}

RunError PhaseAttempt::Run() {
  record_->set_phase_id(phase_id_);
  record_->set_phase(phase_.name);
  record_->set_kind(phase_.kind);
  record_->set_repetition(base_.repetition());
  *record_->mutable_spec() = base_;
  record_->set_cache(run_.plan.CacheMode(phase_));

  if (RunError e = Prepare()) return e;
  if (RunError e = CacheBarrier()) return e;
  if (Interrupted()) {
    Abort("interrupted");
    return Fail(RunFailure::kInterrupted, "interrupted before the start of " + phase_id_);
  }
  if (!servers_.empty()) ServerWindow(/*end=*/false);
  Start();
  RunError failure = AwaitResults();
  std::vector<absl::StatusOr<v1::TelemetryReply>> server_telemetry;
  if (!servers_.empty()) server_telemetry = ServerWindow(/*end=*/true);
  Collect(&failure);
  CollectServers(server_telemetry);
  Reduce(failure);
  return failure;
}

// 1. Prepare everywhere before anyone starts.
RunError PhaseAttempt::Prepare() {
  for (AgentClient* c : clients_) {
    if (base_.sync_across_agents() && c->facts.wire_minor() < 2) {
      // An older agent ignores the field and never joins the rendezvous.
      return Fail(RunFailure::kBadPlan,
                  absl::StrFormat("phase %s synchronises tasks across agents (IOR -g or a "
                                  "stonewall wear-out), which agent %s (lockstep %s, wire "
                                  "protocol 1.%u) cannot do; upgrade it to wire protocol 1.2 "
                                  "or later, or run the phase on one client agent",
                                  phase_id_, c->address(), c->facts.agent_version(),
                                  c->facts.wire_minor()));
    }
    if (RunError e = CheckAgentForPhase(phase_, *c)) return e;
  }
  std::vector<v1::PrepareRequest> requests = PrepareRequests();
  // Each host's threads for the phase, over all its agents.
  if (RunError e = CheckHostThreads(phase_id_, clients_, MostTasks(requests))) return e;
  record_->set_prepare_sent_unix_ns(RealtimeNs());
  prepared_ = FanOut<v1::PrepareRequest, v1::PrepareReply>(
      clients_, requests, kPrepareTimeout, LOCKSTEP_ASYNC(Prepare), &watch_);
  record_->set_prepared_unix_ns(RealtimeNs());
  for (auto& reply : prepared_) {
    if (reply.ok()) EscapeAgentText(&*reply);  // controller/run/agent_text.h
  }
  if (Interrupted()) {
    Abort("interrupted by the operator");
    return Failed(Fail(RunFailure::kInterrupted, "interrupted while preparing " + phase_id_));
  }
  for (size_t i = 0; i < clients_.size(); ++i) {
    if (prepared_[i].ok()) continue;
    const absl::Status& status = prepared_[i].status();
    const RunFailure kind = FailureOfSetupCall(status);
    if (kind == RunFailure::kAgentLost) {
      run_.roster.MarkLost(clients_[i], std::string(status.message()), IsRestarted(status));
    }
    Abort("another agent failed to prepare");
    // The agent's kind (PATH_REFUSED, NO_SPACE ...); without one, what exit 5
    // means (a missing or short file): IO_FAILED.
    const v1::ErrorKind error_kind = KindOf(status);
    record_->set_error_kind(error_kind == v1::ERROR_KIND_UNSPECIFIED && kind == RunFailure::kIoError
                                ? v1::IO_FAILED
                                : error_kind);
    return Failed(Fail(kind, kind == RunFailure::kAgentLost
                                 ? absl::StrFormat("agent %s lost before %s: %s",
                                                   clients_[i]->address(), phase_id_,
                                                   status.message())
                                 : absl::StrFormat("phase %s: %s", phase_id_, status.message())));
  }
  if (!prepared_.empty()) *record_->mutable_dir_fs() = prepared_[0]->dir_fs();
  std::vector<const v1::PrepareReply*> replies;
  for (const auto& p : prepared_) replies.push_back(&*p);
  const std::vector<TakerFacts> takers = TakerFactsOf(clients_);
  for (size_t i = 0; i < clients_.size(); ++i) {
    peers_.push_back(KindOf(base_.kind()).PeersOf(takers, replies, i, requests[i].spec()));
    tasks_of_.push_back(requests[i].spec().tasks());
  }
  run_.events.TestStarted(test_, *record_);
  return {};
}

// One spec per taker: the shared one, with what the kind sets per taker
// (net: streams sent and received; backend: one task per OSD), the ranks
// (one after the other over the takers) and the agent's clock.
std::vector<v1::PrepareRequest> PhaseAttempt::PrepareRequests() const {
  std::vector<v1::PrepareRequest> requests(clients_.size());
  const std::vector<TakerFacts> takers = TakerFactsOf(clients_);
  // A net phase's streams prove this attempt's secret (agent/workloads/net.h):
  // made here, sent over mutual TLS only, never in the record.
  std::string token;
  if (base_.has_net()) {
    token.resize(32);
    if (::RAND_bytes(reinterpret_cast<unsigned char*>(token.data()),
                     static_cast<int>(token.size())) != 1) {
      std::random_device device;  // the kernel's getrandom, as OpenSSL's would be
      for (char& c : token) c = static_cast<char>(device());
    }
  }
  uint32_t rank = 0;
  bool uniform = true;
  for (size_t i = 0; i < clients_.size(); ++i) {
    requests[i].set_session_id(clients_[i]->session_id);
    v1::PhaseSpec* spec = requests[i].mutable_spec();
    *spec = base_;
    KindOf(base_.kind()).AdaptForTaker(takers, i, spec);
    if (spec->has_net()) spec->mutable_net()->set_token(token);
    uniform = uniform && spec->tasks() == base_.tasks();
    spec->set_first_rank(rank);
    rank += spec->tasks();
    ToAgentClock(run_.roster.clock(clients_[i]).offset_ns, spec);
    AdaptSpecForAgent(clients_[i]->facts, spec);  // command: its argv[0]
  }
  // Takers other than the clients (or tasks that differ by agent): the total
  // is theirs, not the compiled clients x tasks.
  if (!uniform || KindOf(base_.kind()).Takers() != PhaseTakers::kClients) {
    for (v1::PrepareRequest& r : requests) r.mutable_spec()->set_total_tasks(rank);
  }
  return requests;
}

// 2. Cache barrier, after the files are laid out and before the start, in
// the order people follow by hand: sync clients (their dirty data goes to
// the servers), then sync servers, then drop caches everywhere.
RunError PhaseAttempt::CacheBarrier() {
  const std::string& mode = run_.plan.CacheMode(phase_);
  if (mode == "none") return {};
  const std::vector<AgentClient*> servers =
      mode == "all" ? servers_ : std::vector<AgentClient*>{};
  std::vector<AgentClient*> everyone = clients_;
  everyone.insert(everyone.end(), servers.begin(), servers.end());
  RunError e = CacheStep(clients_, /*sync=*/true, 0, false);
  if (!e) e = CacheStep(servers, /*sync=*/true, 0, false);
  if (!e) e = CacheStep(everyone, /*sync=*/false, run_.plan.drop_mode, run_.plan.lustre_lru_clear);
  if (!e) return {};
  Abort("cache barrier failed");
  return Failed(std::move(e));
}

RunError PhaseAttempt::CacheStep(const std::vector<AgentClient*>& who, bool sync,
                                 uint32_t drop_mode, bool lustre_lru_clear) {
  if (who.empty()) return {};
  std::vector<v1::CacheRequest> requests(who.size());
  for (size_t i = 0; i < who.size(); ++i) {
    requests[i].set_session_id(who[i]->session_id);
    requests[i].set_phase_id(phase_id_);
    requests[i].set_sync(sync);
    requests[i].set_drop_mode(drop_mode);
    requests[i].set_required(run_.plan.cache_required);
    requests[i].set_lustre_lru_clear(lustre_lru_clear && who[i]->role() == v1::CLIENT);
  }
  auto replies = FanOut<v1::CacheRequest, v1::CacheReply>(
      who, requests, kCacheTimeout, LOCKSTEP_ASYNC(CacheBarrier), &watch_);
  if (Interrupted()) {
    return Fail(RunFailure::kInterrupted, "interrupted in the cache barrier before " + phase_id_);
  }
  for (size_t i = 0; i < who.size(); ++i) {
    if (!replies[i].ok()) {
      const absl::Status& status = replies[i].status();
      // A session the agent dropped (lease expired, restarted) is a loss, not a refusal.
      const bool refused =
          !IsSessionLost(status) &&
          (absl::IsPermissionDenied(status) || absl::IsFailedPrecondition(status));
      if (!refused) {
        run_.roster.MarkLost(who[i], std::string(status.message()), IsRestarted(status));
      }
      return Fail(refused ? RunFailure::kBadPlan : RunFailure::kAgentLost,
                  absl::StrFormat("cache barrier before %s: %s", phase_id_, status.message()));
    }
    v1::CacheReply& reply = *replies[i];
    EscapeAgentText(&reply);  // controller/run/agent_text.h
    v1::CacheReply& acc = cache_done_[who[i]];
    if (reply.synced()) {
      acc.set_synced(true);
      acc.set_sync_duration_ns(reply.sync_duration_ns());
    }
    if (reply.dropped()) {
      acc.set_dropped(true);
      acc.set_drop_duration_ns(reply.drop_duration_ns());
    }
    if (reply.lru_cleared()) {
      acc.set_lru_cleared(true);
      acc.set_lru_duration_ns(reply.lru_duration_ns());
    }
    if (reply.daemon_caches_size() > 0) {
      *acc.mutable_daemon_caches() = reply.daemon_caches();
      acc.set_daemon_cache_duration_ns(reply.daemon_cache_duration_ns());
    }
    if (!reply.warning().empty()) {
      acc.set_warning(reply.warning());
      run_.events.Note(absl::StrFormat("warning: %s %s: %s", RoleName(who[i]->role()),
                                        who[i]->address(), reply.warning()));
    }
  }
  return {};
}

// 3. Servers take part through telemetry windows around the phase.
std::vector<absl::StatusOr<v1::TelemetryReply>> PhaseAttempt::ServerWindow(bool end) {
  std::vector<v1::TelemetryRequest> requests(servers_.size());
  for (size_t i = 0; i < servers_.size(); ++i) {
    requests[i].set_session_id(servers_[i]->session_id);
    requests[i].set_phase_id(phase_id_);
    requests[i].set_end(end);
  }
  auto replies = FanOut<v1::TelemetryRequest, v1::TelemetryReply>(
      servers_, requests, kRpcTimeout, LOCKSTEP_ASYNC(Telemetry), &watch_);
  for (auto& reply : replies) {
    if (reply.ok()) EscapeAgentText(reply->mutable_telemetry());  // controller/run/agent_text.h
  }
  return replies;
}

// 4. One instant for all, far enough ahead for the slowest to hear of it
// (BarrierLead: adapted to how long the last Starts took to arrive).
void PhaseAttempt::Start() {
  absl::Duration max_delay;  // the slowest client's round trip
  for (AgentClient* c : clients_) {
    max_delay = std::max(max_delay, absl::Nanoseconds(run_.roster.clock(c).delay_ns));
  }
  const absl::Duration prepare_round =
      absl::Nanoseconds(record_->prepared_unix_ns() - record_->prepare_sent_unix_ns());
  const LeadPlan plan = run_.lead.Plan(max_delay, prepare_round, clients_.size());
  // Said before the instant is chosen (and so before the phase starts).
  if (!plan.note.empty()) run_.events.Note(absl::StrFormat("phase %s: %s", phase_id_, plan.note));
  const absl::Duration lead = plan.lead;
  const int64_t start_at_unix_ns = RealtimeNs() + absl::ToInt64Nanoseconds(lead);
  start_at_mono_ns_ = MonotonicNs() + absl::ToInt64Nanoseconds(lead);
  record_->set_lead_ns(absl::ToInt64Nanoseconds(lead));
  record_->set_lead_basis(plan.basis);
  record_->set_lead_capped(plan.capped);
  record_->set_lead_needed_ns(absl::ToInt64Nanoseconds(plan.needed));
  record_->set_start_at_unix_ns(start_at_unix_ns);
  // Spin only where a host's tasks (each agent runs base_.tasks()) fit on
  // its cores.
  std::map<std::string, uint32_t> agents_on_host;
  for (AgentClient* c : clients_) ++agents_on_host[c->facts.hostname()];
  if (base_.sync_across_agents()) {
    std::vector<int64_t> offsets_ns;
    for (AgentClient* c : clients_) offsets_ns.push_back(run_.roster.clock(c).offset_ns);
    rendezvous_ = std::make_unique<RendezvousHub>(clients_, std::move(offsets_ns), phase_id_);
  }
  // Progress events feed only the progress line. Without a live line (plain
  // lines every 10 s) every 5 s is enough; and the controller takes at most
  // kMaxProgressEventsPerSecond in all, so that progress never costs more
  // messages than the phase's own calls.
  uint32_t progress_interval_ms = run_.plan.progress_interval_ms;
  if (!run_.options.progress) {
    progress_interval_ms = std::max<uint32_t>(progress_interval_ms, 5000);
  }
  progress_interval_ms = std::clamp<uint32_t>(
      static_cast<uint32_t>(clients_.size() * 1000 / kMaxProgressEventsPerSecond),
      progress_interval_ms, std::max<uint32_t>(progress_interval_ms, 60000));
  const int64_t first_transfer_after_ns = absl::ToInt64Nanoseconds(run_.lead.FirstTransferAfter());
  record_->set_first_transfer_after_ns(first_transfer_after_ns);
  std::vector<v1::StartRequest> requests(clients_.size());
  for (size_t i = 0; i < clients_.size(); ++i) {
    AgentClient* c = clients_[i];
    v1::StartRequest& request = requests[i];
    request.set_session_id(c->session_id);
    request.set_phase_id(phase_id_);
    // In the agent's own clock.
    request.set_start_at_unix_ns(start_at_unix_ns + run_.roster.clock(c).offset_ns);
    request.set_progress_interval_ms(progress_interval_ms);
    const uint32_t host_agents = agents_on_host[c->facts.hostname()];
    const bool fits = host_agents * tasks_of_[i] <= std::max<uint32_t>(c->facts.cores(), 1);
    request.set_spin_duration_ns(fits ? absl::ToInt64Nanoseconds(kSpinDuration) : 0);
    request.set_first_transfer_after_ns(fits ? first_transfer_after_ns : 0);
    request.set_host_agents(host_agents);
    for (v1::NetPeer& peer : peers_[i]) *request.add_peers() = std::move(peer);
  }
  // Sent from several threads at once: starting a call costs the calling
  // thread a fraction of a millisecond in gRPC, which, agent after agent on
  // one thread, would be most of the delivery.
  streams_.resize(clients_.size());
  record_->set_start_first_sent_unix_ns(RealtimeNs());
  start_first_sent_mono_ns_ = MonotonicNs();
  ScheduleDeliveryCheck(lead);
  BoundedParallelFor(clients_.size(), kStartThreads, [&](size_t i) {
    // An agent that renewed its lease on the Start needs no heartbeat for a
    // period after it, counted from the sending (not the answer), so that no
    // heartbeat falls due a period after the Prepare while the Start is in
    // flight.
    const bool renews = clients_[i]->facts.wire_minor() >= kStartRenewsWireMinor;
    if (renews && watch_.sending) watch_.sending(clients_[i], MonotonicNs());
    streams_[i] = std::make_unique<PhaseStream>(clients_[i], std::move(requests[i]),
                                                rendezvous_.get(), i,
                                                renews ? watch_.answered : nullptr);
  });
  record_->set_start_last_sent_unix_ns(RealtimeNs());
}

// 5. Wait for every result; watch leases and interrupts meanwhile.
RunError PhaseAttempt::AwaitResults() {
  ProgressLine progress(phase_id_, AggregateBytes(base_), run_.options.progress,
                        run_.options.print_progress_lines);
  const bool show_progress = run_.options.progress || run_.options.print_progress_lines;
  int64_t next_look_mono_ns = 0;
  RunError failure;
  // After an interrupt, what the agents measured until their abort is
  // awaited briefly; then the calls of agents that did not answer end.
  int64_t give_up_mono_ns = INT64_MAX;
  for (const auto& stream : streams_) {
    for (;;) {
      absl::Duration wait = kWatchPeriod;
      if (delivery_check_mono_ns_ != 0) {
        const int64_t due_ns = delivery_check_mono_ns_ - MonotonicNs();
        if (due_ns <= 0) {
          CheckDelivery();
        } else {
          wait = std::min(wait, absl::Nanoseconds(due_ns));
        }
      }
      if (stream->WaitDone(wait)) break;
      // A live line every 100 ms; plain lines come every 10 s: look every 1 s.
      if (show_progress && MonotonicNs() >= next_look_mono_ns) {
        next_look_mono_ns = MonotonicNs() + (run_.options.progress ? 0 : 1'000'000'000);
        std::vector<v1::Progress> latest;
        latest.reserve(streams_.size());
        for (const auto& s : streams_) latest.push_back(s->LatestProgress());
        progress.Update(latest);
      }
      if (!failure) {
        failure = Watch();
        if (failure.kind == RunFailure::kInterrupted) {
          give_up_mono_ns = MonotonicNs() + absl::ToInt64Nanoseconds(kInterruptedCallTimeout);
        }
      } else if (MonotonicNs() > give_up_mono_ns) {
        for (const auto& s : streams_) s->Cancel();
      }
    }
  }
  record_->set_results_unix_ns(RealtimeNs());
  progress.Clear();
  return failure;
}

void PhaseAttempt::ScheduleDeliveryCheck(absl::Duration lead) {
  // Late enough for most Starts to have arrived, early enough to be said
  // before the instant (a check after it would only repeat the margins).
  const int64_t check_before_ns =
      std::clamp<int64_t>(absl::ToInt64Nanoseconds(lead) / 10, 5'000'000, 1'000'000'000);
  if (start_at_mono_ns_ - check_before_ns > start_first_sent_mono_ns_) {
    delivery_check_mono_ns_ = start_at_mono_ns_ - check_before_ns;
  }
}

void PhaseAttempt::CheckDelivery() {
  const int64_t now_mono_ns = MonotonicNs();
  delivery_check_mono_ns_ = 0;
  StartDelivery d;
  d.since_first_sent = absl::Nanoseconds(now_mono_ns - start_first_sent_mono_ns_);
  d.before_instant = absl::Nanoseconds(start_at_mono_ns_ - now_mono_ns);
  d.lead = absl::Nanoseconds(record_->lead_ns());
  d.lead_basis = record_->lead_basis();
  for (size_t i = 0; i < clients_.size(); ++i) {
    if (clients_[i]->facts.wire_minor() < kStartAckWireMinor) continue;
    ++d.clients;
    if (streams_[i]->acked_mono_ns() != 0) {
      ++d.acknowledged;
    } else {
      d.late.push_back(clients_[i]->address());
    }
  }
  if (d.clients == 0) return;  // no client acknowledges: nothing to check
  record_->set_start_check_before_ns(absl::ToInt64Nanoseconds(d.before_instant));
  record_->set_starts_unacknowledged(static_cast<uint32_t>(d.late.size()));
  const std::string warning = LateStartWarning(phase_id_, d);
  if (warning.empty()) return;
  record_->set_start_late_warning(warning);
  run_.events.Note(warning);
}

RunError PhaseAttempt::Watch() {
  for (const std::string& notice : run_.heartbeater.TakeNotices()) run_.events.Note(notice);
  if (auto lost = run_.heartbeater.Lost()) {
    return LoseDuringPhase(run_.roster.at(lost->index), lost->reason,
                           lost->kind == v1::SESSION_GONE);
  }
  if (auto stalled = run_.heartbeater.Stalled()) {
    // A task stuck in the kernel (a hung mount): the agent still answers
    // but cannot finish or clean up; it counts as lost.
    return LoseDuringPhase(
        run_.roster.at(stalled->index),
        absl::StrFormat("I/O stalled beyond io_stall_timeout_ms = %u: %s",
                        run_.plan.io_stall_timeout_ms, stalled->reason),
        /*restarted=*/false);
  }
  if (rendezvous_ && rendezvous_broken_.empty()) {
    // One agent's failure (its result says which) strands the others at a
    // barrier: stop them, as MPI_Abort would.
    rendezvous_broken_ = rendezvous_->Broken();
    if (!rendezvous_broken_.empty()) Abort(rendezvous_broken_);
  }
  if (Interrupted()) {
    Abort("interrupted by the operator");
    return Fail(RunFailure::kInterrupted, "interrupted during " + phase_id_);
  }
  return {};
}

RunError PhaseAttempt::LoseDuringPhase(AgentClient* agent, const std::string& reason,
                                       bool restarted) {
  RunError failure = Fail(RunFailure::kAgentLost,
                          absl::StrFormat("agent %s lost during %s: %s", agent->address(),
                                          phase_id_, reason));
  run_.roster.MarkLost(agent, reason, restarted);
  Abort(failure.message);
  for (const auto& stream : streams_) stream->Cancel();
  return failure;
}

void PhaseAttempt::Abort(const std::string& reason) {
  const std::vector<AgentClient*> targets = run_.roster.NotLost(clients_);
  std::vector<v1::AbortRequest> requests(targets.size());
  for (size_t i = 0; i < targets.size(); ++i) {
    requests[i].set_session_id(targets[i]->session_id);
    requests[i].set_phase_id(phase_id_);
    requests[i].set_reason(reason);
  }
  // Best effort, and short after an interrupt; an agent found lost
  // meanwhile is not waited for (its lease aborts the phase).
  const CallWatch lost_only{watch_.lost, nullptr};
  FanOut<v1::AbortRequest, v1::AbortReply>(
      targets, requests, Interrupted() ? kInterruptedCallTimeout : absl::Seconds(5),
      LOCKSTEP_ASYNC(Abort), &lost_only);
}

RunError PhaseAttempt::Failed(RunError failure) {
  record_->set_ok(false);
  record_->set_error(failure.message);
  return failure;
}

bool PhaseAttempt::Interrupted() const {
  return run_.options.interrupted && run_.options.interrupted->load();
}

}  // namespace lockstep
