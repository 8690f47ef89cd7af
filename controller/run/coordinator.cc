#include "controller/run/coordinator.h"

#include <unistd.h>

#include <algorithm>
#include <map>
#include <set>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/log.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "common/net.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "common/files.h"
#include "common/errors.h"
#include "common/names.h"
#include "controller/record/fold.h"
#include "controller/record/phase_id.h"
#include "controller/record/phase_reduce.h"
#include "controller/record/run_status.h"
#include "controller/plan/compile.h"
#include "controller/plan/phase_kind.h"
#include "controller/plan/sweep.h"
#include "controller/run/agent_client.h"
#include "controller/run/agent_setup.h"
#include "controller/run/client_fit.h"
#include "controller/run/agent_endpoints.h"
#include "controller/run/agent_roster.h"
#include "controller/run/barrier_lead.h"
#include "controller/run/bounded_parallel.h"
#include "controller/run/fd_limit.h"
#include "controller/run/file_removal.h"
#include "controller/run/agent_checks.h"
#include "controller/run/fs_checks.h"
#include "controller/run/heartbeater.h"
#include "controller/run/kept_files.h"
#include "controller/run/phase_attempt.h"
#include "controller/run/phase_specs.h"
#include "controller/run/run_error.h"
#include "controller/run/run_store.h"

namespace lockstep {
namespace {

// The protocol: attach → clock offsets → for each test, repetition and phase
// a PhaseAttempt (repeated on start skew with on_skew = "repeat") → remove
// the repetition's files → detach → run.json, summary.txt. The parts it
// drives (AgentRoster, Heartbeater, PhaseAttempt, RunStore) have
// their own headers. Runs on the calling thread.
class Coordinator {
 public:
  Coordinator(const Plan& plan, const RunOptions& options)
      : plan_(plan),
        resolved_(ResolvePlan(plan)),
        options_(options),
        events_(options.observer) {}

  RunOutcome Run();

 private:
  void StartRecord();
  RunError SetUpAgents();
  // The agents' set-up steps (controller/run/agent_setup.h), on this run's parts.
  AgentSetUp SetUp() { return {plan_, lease_ms_, options_, roster_, events_, record_}; }
  RunError RunTest(uint32_t test_id);
  // Every test compiled for the clients it will have (controller/plan/compile.h),
  // before the first test runs: a total_size split too small is refused.
  RunError CompileTests();
  // Test `test_id` compiled for the clients the roster has now (again after
  // a loss the run went on without).
  RunError CompiledFor(uint32_t test_id, const CompiledTest** out);
  RunError UseClientsOf(uint32_t test_id);
  RunError RunRepetition(v1::TestRecord* test, uint32_t rep);
  RunError EndRepetition(const std::vector<v1::PhaseSpec>& written, v1::TestRecord* test,
                         uint32_t rep);
  RunError AfterFailedPhase(const RunError& failure, const std::vector<v1::PhaseSpec>& written,
                            uint32_t rep);
  void KeepEvidence(const v1::PhaseRecord& failed, std::vector<v1::PhaseSpec>* written,
                    RunError* failure);
  // `base`: the phase's spec in this test and repetition, built once for
  // all its attempts (and for the removal of its files).
  RunError RunPhase(const PhasePlan& phase, v1::PhaseSpec base, v1::TestRecord* test);
  // The skew of an attempt that came back without error; empty if in bounds.
  std::string SkewProblem(const v1::PhaseRecord& pr) const;
  void WaitForLostLeases();
  void Detach();
  void Finish(RunOutcome* outcome, const RunError& failure);
  bool Interrupted() const { return options_.interrupted && options_.interrupted->load(); }

  const Plan& plan_;
  const ResolvedPlan resolved_;  // every test's phases, resolved once (before compiled_)
  uint32_t lease_ms_ = 0;  // the agents' lease: the plan's, or sized to them (SetUpAgents)
  ClientFit fit_;  // what the kinds chose from the clients' facts (client_fit.h)
  std::vector<CompiledTest> compiled_;  // one per test, compiled with fit_
  const RunOptions& options_;
  AgentEndpoints endpoints_;  // first: local agents outlive every call to them
  std::unique_ptr<RunStore> store_;
  AgentRoster roster_;
  std::unique_ptr<Heartbeater> heartbeater_;  // while agents are attached
  BarrierLead lead_;
  RunEmitter events_;  // what the run prints, to RunOptions.observer
  std::string controller_name_;  // "host pid N", sent with Attach
  v1::RunRecord record_;
  // Set once an agent was lost and the run went on without it.
  RunError partial_;
  // Agreed stonewall counts of accepted phases, by phase id, for the phases
  // that name them in stonewall_count_from.
  // The count, and the transfer size it counts in (0: mdtest items).
  std::map<PhaseId, std::pair<uint64_t, uint64_t>> stonewall_counts_;
  std::unique_ptr<FileRemoval> removal_;  // with the heartbeater
};

RunOutcome Coordinator::Run() {
  // Abseil's deadlock detector (on in Debian's build of it) keeps a graph of
  // every Mutex, and the run layer has mutexes per agent (a PhaseStream
  // each): its cost grows with the agents. Off: the run layer's lock order
  // is fixed by its headers.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  RunOutcome outcome;
  auto store = RunStore::Create(options_.out_dir, plan_.name, plan_.text);
  if (!store.ok()) {
    outcome.failure = RunFailure::kBadPlan;
    outcome.error = std::string(store.status().message());
    return outcome;
  }
  store_ = std::move(*store);
  StartRecord();
  events_.RunBegin(record_);
  RunError failure = SetUpAgents();
  // client_agents: every test's count checked before the first test runs.
  for (uint32_t t = 0; t < plan_.tests() && !failure; ++t) failure = UseClientsOf(t);
  if (!failure) failure = CompileTests();
  if (!failure) {
    events_.AgentsReady(record_);
    // Not fatal: only a rebuild from the journal misses it.
    if (absl::Status s = store_->WriteRunStart(record_); !s.ok()) {
      LogWarning("%s/run-start.json not written: %s", store_->dir(), s.message());
    }
    for (uint32_t t = 0; t < plan_.tests() && !failure; ++t) {
      if (t > 0) failure = SetUp().MeasureClocks();
      if (!failure) failure = RunTest(t);
    }
  }
  heartbeater_.reset();
  Detach();  // even after a failure
  Finish(&outcome, failure ? failure : MissedCriteria(record_));
  return outcome;
}

void Coordinator::StartRecord() {
  record_.set_format_version(1);
  record_.set_run_id(store_->run_id());
  record_.set_name(plan_.name);
  record_.set_plan_sha256(Sha256Hex(plan_.text));
  record_.set_plan_file(plan_.source);
  record_.set_started_at(FormatRfc3339(RealtimeNs()));
  record_.set_controller_host(LocalHostName());
  record_.set_lockstep_version(LOCKSTEP_VERSION);
  record_.set_command_line(options_.command_line);
  record_.MergeFrom(options_.record_fields);
  record_.set_smoke(plan_.smoke);
  for (const std::string& c : plan_.smoke_changes) record_.add_smoke_changes(c);
}

RunError Coordinator::SetUpAgents() {
  if (RunError e = ResolveAgentEndpoints(plan_, options_, &endpoints_)) return e;
  if (!endpoints_.local_allow_commands.empty()) {
    events_.Note(absl::StrFormat("local agents allow the plan's programs: %s",
                                  absl::StrJoin(endpoints_.local_allow_commands, ", ")));
  }
  if (absl::Status fds = EnsureFileLimit(endpoints_.agents.size()); !fds.ok()) {
    return Fail(RunFailure::kConnect, std::string(fds.message()));
  }
  lease_ms_ = plan_.lease_ms;
  if (!plan_.lease_ms_given) {
    lease_ms_ = LeaseMsForAgents(endpoints_.agents.size());
    if (lease_ms_ != plan_.lease_ms) {
      events_.Note(absl::StrFormat(
          "lease %u ms for %u agents (%u ms per agent beyond %u; [run] lease_ms sets it): "
          "a silent controller or agent is noticed within it",
          lease_ms_, endpoints_.agents.size(), kLeaseMsPerAgent,
          kDefaultLeaseMs / kLeaseMsPerAgent));
    }
  }
  for (const AgentPlan& a : endpoints_.agents) {
    roster_.Add(std::make_unique<AgentClient>(a.address, a.role, endpoints_.credentials,
                                              endpoints_.tls_files,
                                              absl::Milliseconds(lease_ms_)));
  }
  controller_name_ = absl::StrFormat("%s pid %d", LocalHostName(), ::getpid());
  if (RunError e = SetUp().Connect()) return e;
  if (RunError e = SetUp().Attach(controller_name_)) return e;
  // What the phases' kinds need of each client (a command's program), before any phase runs.
  if (RunError e = CheckPhasesOnAgents(plan_, roster_.clients(), roster_.servers())) return e;
  // Layouts and checksums a root's file system cannot have, before any phase.
  if (RunError e = CheckFsSettings(resolved_, roster_.clients())) return e;
  // What the kinds size to the clients and refuse of them (the AI datasets).
  RunError unfit = FitPhasesToClients(plan_, resolved_, roster_.clients(), options_.force, &fit_);
  if (unfit) return unfit;
  for (const std::string& note : fit_.notes) events_.Note(note);
  // Leases run from Attach: with many agents the clock round may outlast one.
  heartbeater_ = std::make_unique<Heartbeater>(
      roster_.all(), absl::Milliseconds(lease_ms_), plan_.io_stall_timeout_ms);
  removal_ = std::make_unique<FileRemoval>(&roster_, heartbeater_.get(), &events_,
                                           options_.interrupted,
                                           RemovalSession{record_.run_id(), controller_name_,
                                                          lease_ms_});
  return SetUp().MeasureClocks();
}

RunError Coordinator::RunTest(uint32_t test_id) {
  if (RunError e = UseClientsOf(test_id)) return e;
  v1::TestRecord* test = record_.add_tests();
  test->set_test_id(test_id);
  const uint32_t tpa = plan_.TasksPerAgent(plan_.phases.front(), test_id);
  const uint32_t clients = static_cast<uint32_t>(roster_.clients().size());
  test->set_tasks_per_agent(tpa);
  test->set_total_tasks(tpa * clients);
  test->set_client_agents(clients);
  test->set_repetitions(plan_.repetitions);
  test->set_started_at(FormatRfc3339(RealtimeNs()));
  for (const v1::SweepValue& v : SweepValuesOf(plan_, test_id)) *test->add_sweep() = v;
  const CompiledTest* compiled = nullptr;
  if (RunError e = CompiledFor(test_id, &compiled)) return e;
  for (const CompiledPhase& phase : compiled->phases) *test->add_plan_specs() = phase.spec;
  if (absl::Status j = store_->AppendTestStart(*test); !j.ok()) {
    events_.Note(absl::StrFormat("warning: %s", j.message()));
  }

  for (uint32_t rep = 0; rep < plan_.repetitions; ++rep) {
    if (RunError e = RunRepetition(test, rep)) return e;
  }
  // The summary rows and layers from the records, by the rule a rebuild
  // from the journal uses too (record/fold.h).
  FoldTest(record_, test);
  events_.TestDone(*test);
  return {};
}

RunError Coordinator::CompileTests() {
  const size_t available = roster_.available_clients();
  compiled_.clear();
  for (uint32_t t = 0; t < plan_.tests(); ++t) {
    // [run] client_agents: the clients test t uses (UseClientsOf refuses more).
    const size_t clients =
        plan_.ClientAgents(t) > 0 ? std::min<size_t>(plan_.ClientAgents(t), available) : available;
    auto compiled = CompileTest(plan_, resolved_, t, clients, options_.force, &fit_);
    if (!compiled.ok()) return Fail(RunFailure::kBadPlan, std::string(compiled.status().message()));
    for (const CompiledPhase& phase : compiled->phases) {
      if (!phase.aggregate_note.empty()) events_.Note(phase.aggregate_note);
    }
    compiled_.push_back(std::move(*compiled));
  }
  return {};
}

RunError Coordinator::CompiledFor(uint32_t test_id, const CompiledTest** out) {
  CompiledTest& compiled = compiled_.at(test_id);
  const size_t clients = roster_.clients().size();
  if (compiled.client_agents != clients) {  // fewer after a loss: the split and ranks change
    auto again = CompileTest(plan_, resolved_, test_id, clients, options_.force, &fit_);
    if (!again.ok()) return Fail(RunFailure::kBadPlan, std::string(again.status().message()));
    compiled = std::move(*again);
  }
  *out = &compiled;
  return {};
}

// client_agents: the first N client agents take part in test `test_id`.
RunError Coordinator::UseClientsOf(uint32_t test_id) {
  const uint32_t want = plan_.ClientAgents(test_id);
  const size_t have = roster_.available_clients();
  if (want > have && partial_) {
    // Agents were lost and the run goes on without them (on_agent_loss =
    // "continue"): the test runs on those left, its results partial.
    events_.Note(absl::StrFormat(
        "test %u: client_agents asks for %u client agents, %zu are left after the loss: "
        "running on %zu (partial)",
        test_id, want, have, have));
    roster_.LimitClients(have);
    return {};
  }
  if (want > have) {
    return Fail(RunFailure::kBadPlan,
                absl::StrFormat("%s: [run] client_agents asks for %u client agents in test %u, "
                                "but the run has %zu; give more agents or lower the value",
                                plan_.source, want, test_id, have));
  }
  roster_.LimitClients(want);
  return {};
}

// The phases of one repetition, then its files removed (or released).
RunError Coordinator::RunRepetition(v1::TestRecord* test, uint32_t rep) {
  std::vector<v1::PhaseSpec> written;  // files this repetition wrote
  const CompiledTest* compiled = nullptr;  // again after a loss: fewer clients
  if (RunError e = CompiledFor(test->test_id(), &compiled)) return e;
  for (const CompiledPhase& compiled_phase : compiled->phases) {
    const PhasePlan& phase = *compiled_phase.planned;
    v1::PhaseSpec base = SpecOfRepetition(compiled_phase, rep);
    if (KindOf(phase.kind).LeavesFiles(phase)) written.push_back(base);
    RunError failure = RunPhase(phase, std::move(base), test);
    if (failure.kind == RunFailure::kVerify) {
      KeepEvidence(test->phases(test->phases_size() - 1), &written, &failure);
    }
    // Going on without a lost agent abandons the rest of this repetition.
    if (failure) return AfterFailedPhase(failure, written, rep);
  }
  // An agent lost while removing the files is handled as one lost in a phase.
  RunError failure = EndRepetition(written, test, rep);
  if (failure.kind == RunFailure::kAgentLost) return AfterFailedPhase(failure, written, rep);
  return failure;
}

RunError Coordinator::EndRepetition(const std::vector<v1::PhaseSpec>& written,
                                    v1::TestRecord* test, uint32_t rep) {
  std::set<std::string> kept;  // dir/file of the phases with keep = true
  for (const PhasePlan& phase : plan_.phases) {
    if (phase.keep) kept.insert(phase.dir + "/" + phase.file_name);
  }
  std::vector<v1::PhaseSpec> remove, keep;
  for (const v1::PhaseSpec& s : written) {
    (kept.count(s.dir() + "/" + s.file_name()) ? keep : remove).push_back(s);
  }
  if (!keep.empty()) removal_->Release(keep);
  if (!remove.empty()) {
    v1::PhaseRecord* last = test->mutable_phases(test->phases_size() - 1);
    RunError removed = removal_->Remove(remove, rep, /*timed=*/true, last);
    if (last->has_remove_row()) {  // after `last` was journaled: its own line
      if (absl::Status j = store_->AppendFilesRemoved(*last); !j.ok()) {
        events_.Note(absl::StrFormat("warning: %s", j.message()));
      }
    }
    if (removed) return removed;
  }
  if (Interrupted()) return Fail(RunFailure::kInterrupted, "interrupted");
  return {};
}

// The failed phase's files are not removed but released, named in the
// output, run.json and the failure (kept_files.h).
void Coordinator::KeepEvidence(const v1::PhaseRecord& failed, std::vector<v1::PhaseSpec>* written,
                               RunError* failure) {
  const std::vector<v1::PhaseSpec> kept = TakeFilesOf(failed.spec(), written);
  if (!kept.empty()) removal_->Release(kept);
  if (failed.verify_failed_files().empty()) return;
  KeepFailedVerificationFiles(failed, &record_);
  const std::string note = KeptFilesNote(failed.verify_failed_files());
  events_.Note(note);
  failure->message += "\n" + note;
}

// Leaves nothing behind: removes what this repetition wrote, kept or not
// (but the files of a failed verification: KeepEvidence).
// Then either the run stops with `failure`, or (on_agent_loss = "continue")
// it drops the lost agents and goes on: empty, and every later result is
// partial.
RunError Coordinator::AfterFailedPhase(const RunError& failure,
                                       const std::vector<v1::PhaseSpec>& written, uint32_t rep) {
  // Agents that went silent meanwhile are lost here too (the chaos bench's
  // "not reported" faults): the note names every agent dropped, not only
  // the loss that failed the phase.
  const RunError removal = removal_->Remove(written, rep, /*timed=*/false, nullptr);
  removal_->CleanUpRestarted(written);
  if (failure.kind != RunFailure::kAgentLost || plan_.on_agent_loss != "continue") {
    if (removal.kind != RunFailure::kAgentLost) return failure;
    return Fail(failure.kind, failure.message + "\n" + removal.message);
  }
  std::vector<std::string> others;
  for (size_t index : roster_.DropLost()) {
    heartbeater_->Forget(index);
    const std::string& address = roster_.at(index)->address();
    if (!absl::StrContains(failure.message, address)) {
      others.push_back(absl::StrFormat("agent %s lost too: %s", address, roster_.lost_reason(index)));
    }
  }
  RunError lost = failure;
  // StrAppend, not "\n" + ...: GCC 12 at -O3 falsely warns on that (-Wrestrict,
  // GCC bug 105329), and the quickstart's Release build said so.
  if (!others.empty()) absl::StrAppend(&lost.message, "\n", absl::StrJoin(others, "\n"));
  if (roster_.clients().empty()) {
    return Fail(RunFailure::kAgentLost, lost.message + "; no client agent is left to continue with");
  }
  partial_ = lost;
  events_.Note(absl::StrFormat(
      "%s: continuing without %s (on_agent_loss = \"continue\"); results from here on are "
      "partial",
      lost.message, others.empty() ? "it" : "them"));
  WaitForLostLeases();
  return {};
}

// A lost agent that is only slow still holds its lease and, when it lapses,
// removes the files it wrote, whose names the survivors' renumbered ranks
// may reuse: let the lease run out first. The interrupt flag is set by a
// signal handler, which cannot wake a CondVar: look at it every 50 ms.
void Coordinator::WaitForLostLeases() {
  const int64_t until_mono_ns = MonotonicNs() + (int64_t{lease_ms_} + 250) * 1'000'000;
  while (!Interrupted()) {
    const int64_t left_ns = until_mono_ns - MonotonicNs();
    if (left_ns <= 0) return;
    absl::SleepFor(std::min(absl::Nanoseconds(left_ns), absl::Milliseconds(50)));
  }
}

RunError Coordinator::RunPhase(const PhasePlan& phase, v1::PhaseSpec base, v1::TestRecord* test) {
  const uint32_t rep = base.repetition();
  if (!phase.stonewall_count_from.empty()) {
    // IO500's hand-off: work on exactly what the stonewalled phase agreed on.
    auto it = stonewall_counts_.find(PhaseId{base.test_id(), rep, phase.stonewall_count_from});
    if (it != stonewall_counts_.end()) {
      // IOR pairs of another transfer size (ior-rnd4K-easy-read after
      // ior-easy-write): the same bytes in this phase's transfers.
      const auto [count, transfer_bytes] = it->second;
      base.set_stonewall_count(transfer_bytes == 0 || base.transfer_bytes() == 0
                                   ? count
                                   : count * transfer_bytes / base.transfer_bytes());
    }
  }
  SetEarlierStart(phase, *test, rep, &base);  // find -newer: an earlier phase's start
  const int max_attempts = plan_.on_skew == "repeat" ? 3 : 1;
  const RunParts parts{plan_, options_, roster_, *heartbeater_, events_, lead_};
  for (int attempt = 1;; ++attempt) {
    v1::PhaseRecord* pr = test->add_phases();
    pr->set_attempts(static_cast<uint32_t>(attempt));
    RunError failure = PhaseAttempt(parts, phase, base, *test, static_cast<bool>(partial_), pr).Run();
    const std::string skew = failure ? "" : SkewProblem(*pr);
    const bool repeat = !skew.empty() && plan_.on_skew != "fail" && attempt < max_attempts;
    if (!skew.empty() && plan_.on_skew == "fail") {
      failure = Fail(RunFailure::kSkew, skew);
      pr->set_ok(false);
      pr->set_error(skew);
    } else if (repeat) {
      // Before the journal sees it. The kind says it; the prefix is for
      // people and for readers of earlier run.json files.
      pr->set_error("superseded: " + skew);
      pr->set_error_kind(v1::SUPERSEDED);
    }
    // Printed while the per-agent records, with their full telemetry, are
    // still here (find's matches, mdtest's lines, the telemetry lines read
    // them). A failed command phase too: each host's status and stderr.
    if ((!failure || KindOf(pr->kind()).ShowsFailedPhase()) && !repeat) events_.PhaseDone(*pr);
    // Given up: the run stops, or goes on without it.
    if (failure) events_.PhaseFailed(*pr);
    // The agents' full telemetry goes to telemetry.pb.gz, not run.json.
    absl::Status moved = store_->MoveTelemetryOut(pr);
    if (!moved.ok()) events_.Note(absl::StrFormat("warning: %s", moved.message()));
    if (!failure && !repeat) {  // a repeated phase has the skew bound's note
      const std::string late = MissedStartNote(*pr);
      if (!late.empty()) events_.Note(late);
    }
    // Journaled, then its per-agent records leave memory for the run
    // directory's spool (run.json gets them back): memory stays bounded.
    absl::Status journaled = store_->JournalAndOffload(pr);
    if (!journaled.ok()) events_.Note(absl::StrFormat("warning: %s", journaled.message()));
    if (failure) return failure;
    if (repeat) {
      events_.Note(absl::StrFormat("%s; repeating (attempt %d of %d)", skew, attempt + 1,
                                    max_attempts));
      continue;
    }
    if (uint64_t count = AgreedStonewallCount(*pr); count > 0) {
      stonewall_counts_[PhaseId{base.test_id(), rep, phase.name}] = {
          count, KindOf(base.kind()).StonewallTransferBytes(base)};
    }
    return {};
  }
}

std::string Coordinator::SkewProblem(const v1::PhaseRecord& pr) const {
  if (!pr.skew_exceeded()) return "";
  return absl::StrFormat(
      "start skew %.1f us (± %.1f us of clock uncertainty) of %s exceeds max_start_skew_us = %u",
      pr.start_skew_ns() / 1e3, pr.start_skew_uncertainty_ns() / 1e3, pr.phase_id(),
      plan_.max_start_skew_us);
}

// Hands the agents back (best effort); lost ones get no further calls, nor
// do those whose files are not removed (their lease removes them).
void Coordinator::Detach() {
  std::vector<AgentClient*> attached;
  std::vector<v1::DetachRequest> requests;
  for (AgentClient* a : roster_.all()) {
    // Those whose last Cleanup failed: their lease expiry removes what they hold.
    const bool unclean = removal_ != nullptr && removal_->unclean().count(a) > 0;
    if (a->session_id.empty() || roster_.IsLost(a) || unclean) continue;
    attached.push_back(a);
    requests.emplace_back().set_session_id(a->session_id);
  }
  if (attached.empty()) return;
  FanOut<v1::DetachRequest, v1::DetachReply>(
      attached, requests, Interrupted() ? kInterruptedCallTimeout : absl::Seconds(5),
      LOCKSTEP_ASYNC(Detach));
}

void Coordinator::Finish(RunOutcome* outcome, const RunError& failure) {
  v1::RunEnd end;  // the status's rule is record/run_status.h's, shared with the rebuild
  for (size_t i = 0; i < roster_.size(); ++i) {
    if (!roster_.IsLost(roster_.at(i))) continue;
    v1::AgentRecord* lost = end.add_lost_agents();
    lost->set_address(record_.agents(static_cast<int>(i)).address());
    lost->set_status("lost");
    lost->set_error(roster_.lost_reason(i));
  }
  end.set_first_test_summarized(record_.tests_size() > 0 && record_.tests(0).summary_size() > 0);
  end.set_went_on_after_loss(static_cast<bool>(partial_));
  const RunError& ended = failure ? failure : partial_;
  end.set_ending(EndingOf(failure.kind));
  end.set_error(ended.message);
  outcome->failure = ended.kind;
  // The run went on without a lost agent: every result is there, but those
  // after the loss used fewer agents.
  outcome->error = failure || !partial_ ? ended.message
                   : partial_.message + " (the run went on without it: results after it are partial)";
  end.set_finished_at(FormatRfc3339(RealtimeNs()));
  ApplyRunEnd(end, &record_);
  if (absl::Status j = store_->AppendRunEnd(end); !j.ok()) {
    events_.Note(absl::StrFormat("warning: %s", j.message()));
  }
  events_.RunEnd(record_, store_->dir());
  absl::Status s = store_->WriteRunJson(record_);
  if (s.ok()) s = WriteSummaryTxt(store_->dir(), options_.report ? options_.report->text() : "");
  if (s.ok()) s = events_.status();
  if (!s.ok()) {
    events_.Note(absl::StrFormat("error: %s", s.message()));
    if (outcome->failure == RunFailure::kNone) {
      outcome->failure = RunFailure::kOther;
      outcome->error = std::string(s.message());
    }
  }
  outcome->run_dir = store_->dir();
  outcome->record = record_;
}

}  // namespace

RunOutcome RunPlan(const Plan& plan, const RunOptions& options) {
  Coordinator c(plan, options);
  return c.Run();
}

}  // namespace lockstep
