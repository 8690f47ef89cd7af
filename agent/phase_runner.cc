#include "agent/phase_runner.h"

#include <pthread.h>
#include <sched.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <set>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "agent/phase_progress.h"
#include "agent/spin_start.h"
#include "agent/start_choice.h"
#include "agent/start_gate.h"
#include "common/clock.h"
#include "common/errors.h"
#include "common/histogram.h"
#include "common/names.h"
#include "common/status_macros.h"

namespace lockstep {
namespace {

// A parked task leaves the latch this long before the instant (before its spin,
// if it spins) and sleeps the rest with a 1 ns timer slack: wide enough for a
// latch's wake-up to be late by the scheduler's usual jitter, narrow enough that
// no task thread runs during the lead.
constexpr int64_t kUnparkBeforeNs = 2'000'000;

struct Task {
  uint32_t rank = 0;
  uint32_t index = 0;
  std::string path;
  v1::TaskResult result;
  LatencyHistogram hist;
  TaskCounters counters;
  std::thread thread;
};

// `dir` for the string forms: its parent opened as trusted, `dir` itself
// (there or not: the workload says what a missing one means) below it.
absl::StatusOr<std::shared_ptr<const BeneathDir>> HoldTrusted(const std::string& dir) {
  const size_t slash = dir.find_last_of('/');
  if (slash == std::string::npos || dir.size() <= 1) return BeneathDir::OpenRoot(dir);
  auto parent = BeneathDir::OpenRoot(slash == 0 ? "/" : dir.substr(0, slash));
  if (!parent.ok()) return parent.status();
  return (*parent)->OpenDirToCreate(dir);
}

}  // namespace

struct PhaseRunner::Impl final : public PhaseTasks {
  v1::PhaseSpec spec;
  std::shared_ptr<const BeneathDir> dir;  // held for the workload's life
  RunnerOptions options;
  std::unique_ptr<Workload> workload;
  std::vector<std::unique_ptr<Task>> tasks;
  std::vector<std::string> files;

  std::atomic<bool> abort{false};
  std::atomic<bool> done{false};

  absl::Mutex mu;
  bool start_given ABSL_GUARDED_BY(mu) = false;
  int64_t start_at_unix_ns ABSL_GUARDED_BY(mu) = 0;
  int64_t spin_duration_ns ABSL_GUARDED_BY(mu) = 0;
  uint32_t tasks_done ABSL_GUARDED_BY(mu) = 0;
  std::string abort_reason ABSL_GUARDED_BY(mu);
  v1::ErrorKind abort_kind ABSL_GUARDED_BY(mu) = v1::STOPPED;
  // Rendezvous rounds (IOR -g barriers, the stonewall wear-out agreement):
  // every task calls them in the same order. A round ends when all of this
  // agent's tasks arrived or, with spec.sync_across_agents, when the
  // controller's Release for it came (all agents arrived).
  uint32_t rv_arrived ABSL_GUARDED_BY(mu) = 0;
  uint32_t rv_round ABSL_GUARDED_BY(mu) = 0;   // the round in progress (Rendezvous.seq)
  uint64_t rv_max ABSL_GUARDED_BY(mu) = 0;     // largest value of the round so far
  uint64_t rv_agreed ABSL_GUARDED_BY(mu) = 0;  // the value of the last round that ended

  EventSink sink;
  uint32_t progress_interval_ms = 1000;
  std::thread monitor;
  // The start when the tasks outnumber the cores (no spin); null otherwise.
  // Set by Start before start_given, read by the tasks after it.
  std::unique_ptr<StartGate> gate;
  // The start when they fit (a spin); null otherwise. Set like gate. Both
  // null: the tasks fit the cores and --start_spin is never: each task
  // sleeps to the instant.
  std::unique_ptr<SpinStart> spin;
  int64_t spin_at_unix_ns = 0;  // start_at_unix_ns, for the spinning tasks (set with spin)
  // What the agent saw of its host and decided at Start, for the result.
  std::string start_host_note;

  // PhaseTasks, from the task threads.
  void Fail(uint32_t index, const TaskFailure& failure) override;
  void Barrier() override { Rendezvous(0); }
  uint64_t WearOut(uint64_t pairs) override { return Rendezvous(pairs); }
  // Waits for every task (and agent) to reach this round; the largest value.
  uint64_t Rendezvous(uint64_t value);
  void EndRound(uint64_t agreed) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    rv_agreed = agreed;
    rv_arrived = 0;
    rv_max = 0;
    ++rv_round;
  }
  void FirstOpIssuing(uint32_t index) override {
    if (gate) gate->FirstOpIssuing(index);
    // A command's first operation is the whole program: not at real-time
    // priority for that long (its child resets its own policy anyway).
    if (spin && spec.kind() == v1::COMMAND) spin->Lower(index);
  }
  void FirstOpReturned(uint32_t index) override {
    if (gate) gate->FirstOpReturned(index);
    if (spin) spin->Lower(index);
  }
  void BeforeFirstTransfer(uint32_t /*index*/) override {
    if (spin) spin->AlignFirstTransfer(spin_at_unix_ns, &abort);
  }

  absl::Status MakeTasks();
  void StartTaskThreads();
  void TaskMain(Task* t);
  // Parks the task until the start instant; false when the phase stopped first.
  bool WaitForStart(uint32_t index);
  // Chooses the gate or the spin for this host (Start, under mu).
  void ChooseStart(int64_t start_at_unix_ns, int64_t spin_duration_ns, uint32_t host_agents,
                   int64_t first_transfer_after_ns) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);
  void MonitorMain();
  // Waits up to `wait` for every task to end; true when all did.
  bool WaitForTasks(absl::Duration wait, uint32_t* done_count);
  uint64_t TotalBytes() const;
  v1::PhaseEvent ProgressEvent(int64_t elapsed_duration_ns, uint32_t done_count,
                               HostCpu* cpu) const;
  v1::PhaseEvent ResultEvent(const ThroughputSeries& series);
  void RequestAbort(const std::string& reason, v1::ErrorKind kind) {
    // Under mu, so that tasks parked in Await see it.
    absl::MutexLock lock(&mu);
    if (abort_reason.empty()) {
      abort_reason = reason;
      abort_kind = kind;
    }
    abort.store(true);
    if (gate) gate->Stop();
  }
};

void PhaseRunner::Impl::Fail(uint32_t index, const TaskFailure& f) {
  Task* t = tasks[index].get();
  if (!t->result.error().empty()) return;
  std::string msg =
      f.message.empty()
          ? absl::StrFormat("task %u: %s %s at offset %u", t->rank, f.what, f.path, f.offset)
          : absl::StrFormat("task %u: %s", t->rank, f.message);
  if (f.err != 0) msg += absl::StrFormat(": %s (errno %d)", BeneathErrorText(f.err), f.err);
  if (f.message.empty()) msg += absl::StrFormat(" after %u bytes", t->counters.bytes.load());
  t->result.set_error(msg);
  t->result.set_error_errno(f.err);
  t->result.set_error_offset(f.offset);
  t->result.set_error_kind(f.verify ? v1::VERIFY_FAILED : v1::IO_FAILED);
  if (f.verify) t->result.set_verify_failed(true);
  RequestAbort(msg, v1::STOPPED);
}

uint64_t PhaseRunner::Impl::Rendezvous(uint64_t value) {
  v1::PhaseEvent arrived;
  uint32_t round = 0;
  {
    absl::MutexLock lock(&mu);
    round = rv_round;
    rv_max = std::max(rv_max, value);
    if (++rv_arrived == tasks.size()) {
      if (!spec.sync_across_agents()) {
        EndRound(rv_max);
        return rv_agreed;
      }
      v1::Rendezvous* r = arrived.mutable_rendezvous();
      r->set_seq(round);
      r->set_value(rv_max);
      r->set_arrived_unix_ns(RealtimeNs());
    }
  }
  // The last task of this agent tells the controller; Release ends the round.
  if (arrived.has_rendezvous()) sink(arrived);
  absl::MutexLock lock(&mu);
  struct Arg {
    Impl* self;
    uint32_t round;
  } arg{this, round};
  mu.Await(absl::Condition(
      +[](Arg* a) ABSL_NO_THREAD_SAFETY_ANALYSIS {
        return a->self->rv_round != a->round || a->self->abort.load();
      },
      &arg));
  // A later round cannot end before this task arrives at it: rv_agreed is
  // still this round's.
  return rv_agreed;
}

bool PhaseRunner::Impl::WaitForStart(uint32_t index) {
  int64_t at_unix_ns = 0;
  int64_t spin_ns = 0;
  {
    absl::MutexLock lock(&mu);
    mu.Await(absl::Condition(
        +[](Impl* self) ABSL_NO_THREAD_SAFETY_ANALYSIS {
          return self->start_given || self->abort.load();
        },
        this));
    at_unix_ns = start_at_unix_ns;
    spin_ns = spin ? spin_duration_ns : 0;
    // Parked on the latch until just before the instant: one wake-up per task,
    // where a poll of the abort flag would wake every task thread (by then at
    // SCHED_FIFO) many times a second for the whole lead, taking the cores
    // from the threads that still deliver Starts to the other agents of the
    // host. An abort wakes the latch at once (RequestAbort sets it under mu).
    mu.AwaitWithDeadline(absl::Condition(
                             +[](Impl* self) ABSL_NO_THREAD_SAFETY_ANALYSIS {
                               return self->abort.load();
                             },
                             this),
                         absl::FromUnixNanos(at_unix_ns - spin_ns - kUnparkBeforeNs));
  }
  if (abort.load()) return false;
  if (spin) return spin->Wait(index, at_unix_ns, &abort);
  // More tasks than cores: no spin; the gate raised the task and bounds it.
  // Or --start_spin never: a sleep with a 1 ns timer slack.
  ::prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
  return WaitUntilRealtime(at_unix_ns, 0, &abort);
}

void PhaseRunner::Impl::TaskMain(Task* t) {
  workload->PrimeTask(t->index);
  if (WaitForStart(t->index)) {
    t->result.set_release_unix_ns(RealtimeNs());
    const TaskContext ctx{.rank = t->rank,
                          .index = t->index,
                          .abort = &abort,
                          .result = &t->result,
                          .latency = &t->hist,
                          .counters = &t->counters,
                          .phase = this};
    workload->RunTask(ctx);
  }
  if (gate) gate->TaskEnded(t->index);
  if (spin) spin->Lower(t->index);
  absl::MutexLock lock(&mu);
  if (abort.load() && t->result.error().empty()) {
    t->result.set_error(absl::StrFormat("task %u stopped: %s", t->rank, abort_reason));
    t->result.set_error_kind(v1::STOPPED);
  }
  ++tasks_done;
}

uint64_t PhaseRunner::Impl::TotalBytes() const {
  uint64_t b = 0;
  for (const auto& t : tasks) b += t->counters.bytes.load(std::memory_order_relaxed);
  return b;
}

bool PhaseRunner::Impl::WaitForTasks(absl::Duration wait, uint32_t* done_count) {
  absl::MutexLock lock(&mu);
  mu.AwaitWithTimeout(absl::Condition(
                          +[](Impl* self) ABSL_NO_THREAD_SAFETY_ANALYSIS {
                            return self->tasks_done == self->tasks.size();
                          },
                          this),
                      std::max(wait, absl::ZeroDuration()));
  *done_count = tasks_done;
  return tasks_done == tasks.size();
}

v1::PhaseEvent PhaseRunner::Impl::ProgressEvent(int64_t elapsed_duration_ns, uint32_t done_count,
                                                HostCpu* cpu) const {
  v1::PhaseEvent ev;
  v1::Progress* p = ev.mutable_progress();
  p->set_bytes(TotalBytes());
  uint64_t ops = 0;
  for (const auto& t : tasks) ops += t->counters.ops.load(std::memory_order_relaxed);
  p->set_ops(ops);
  p->set_elapsed_ns(elapsed_duration_ns);
  p->set_tasks_done(done_count);
  cpu->Into(p);
  return ev;
}

v1::PhaseEvent PhaseRunner::Impl::ResultEvent(const ThroughputSeries& series) {
  v1::PhaseEvent ev;
  v1::PhaseResult* r = ev.mutable_result();
  r->set_phase_id(spec.phase_id());
  r->set_ok(true);
  for (auto& t : tasks) {
    t->result.set_rank(t->rank);
    t->result.set_file(t->path);
    t->hist.ToProto(t->result.mutable_latency());
    if (!t->result.error().empty()) r->set_ok(false);
    *r->add_tasks() = t->result;
  }
  if (!r->ok()) {
    // The first real failure, not the "stopped" echoes it caused.
    for (const auto& t : tasks) {
      if (!t->result.error().empty() && t->result.error_kind() != v1::STOPPED) {
        r->set_error(t->result.error());
        break;
      }
    }
    if (r->error().empty()) {
      absl::MutexLock lock(&mu);
      r->set_error(abort_reason);
    }
  }
  const std::string how =
      gate   ? gate->note()
      : spin ? spin->note()
             : absl::StrFormat("%u tasks slept to the instant (1 ns timer slack)", tasks.size());
  r->set_start_note(start_host_note.empty() ? how : absl::StrCat(how, "; ", start_host_note));
  r->set_series_interval_ms(kSeriesIntervalMs);
  for (uint64_t v : series.values()) r->add_series_bytes(v);
  return ev;
}

void PhaseRunner::Impl::MonitorMain() {
  int64_t at_unix_ns;
  {
    absl::MutexLock lock(&mu);
    at_unix_ns = start_at_unix_ns;
  }
  const int64_t progress_interval_duration_ns = int64_t{progress_interval_ms} * 1'000'000;
  ThroughputSeries series(at_unix_ns);
  HostCpu cpu;
  int64_t next_progress_unix_ns = at_unix_ns + progress_interval_duration_ns;
  for (;;) {
    const int64_t wake_unix_ns = std::min(series.next_unix_ns(), next_progress_unix_ns);
    uint32_t done_count = 0;
    if (WaitForTasks(absl::Nanoseconds(wake_unix_ns - RealtimeNs()), &done_count)) break;
    const int64_t now_unix_ns = RealtimeNs();
    series.Advance(now_unix_ns, TotalBytes());
    if (now_unix_ns >= next_progress_unix_ns) {
      sink(ProgressEvent(now_unix_ns - at_unix_ns, done_count, &cpu));
      while (next_progress_unix_ns <= now_unix_ns) {
        next_progress_unix_ns += progress_interval_duration_ns;
      }
    }
  }
  for (auto& t : tasks) {
    if (t->thread.joinable()) t->thread.join();
  }
  workload->Finish();
  series.Close(TotalBytes());
  v1::PhaseEvent ev = ResultEvent(series);
  // Done before the result leaves: a controller holding the result may send
  // the next Prepare at once, and Prepare refuses a runner that is not Done()
  // ("still running"). Every task thread is joined above, so nothing runs.
  done.store(true);
  sink(ev);
}

absl::Status PhaseRunner::Impl::MakeTasks() {
  std::set<std::string> seen;
  std::vector<v1::TaskResult*> results;
  for (uint32_t i = 0; i < spec.tasks(); ++i) {
    auto t = std::make_unique<Task>();
    t->rank = spec.first_rank() + i;
    t->index = i;
    t->path = workload->TaskPath(dir->path(), t->rank);
    if (seen.insert(t->path).second) files.push_back(t->path);
    results.push_back(&t->result);
    tasks.push_back(std::move(t));
  }
  return workload->Prepare(*dir, results);
}

void PhaseRunner::Impl::StartTaskThreads() {
  for (auto& t : tasks) {
    Task* tp = t.get();
    tp->thread = std::thread([this, tp] {
      // Named so that perf and bpftrace can pick the I/O threads out.
      std::string name = absl::StrFormat("ls-task-%u", tp->rank).substr(0, 15);
      pthread_setname_np(pthread_self(), name.c_str());
      TaskMain(tp);
    });
  }
}

void PhaseRunner::Impl::ChooseStart(int64_t at_unix_ns, int64_t spin_duration_ns,
                                    uint32_t host_agents, int64_t first_transfer_after_ns) {
  // The task threads are parked (they wait for start_given under mu).
  std::vector<pthread_t> threads;
  for (auto& t : tasks) threads.push_back(t->thread.native_handle());
  StartChoice choice =
      ChooseStartOnHost(threads, at_unix_ns, spin_duration_ns, host_agents,
                        first_transfer_after_ns, options.spin_start, options.allow_realtime);
  start_host_note = std::move(choice.host_note);
  spin = std::move(choice.spin);
  gate = std::move(choice.gate);
  if (spin) spin_at_unix_ns = at_unix_ns;
}

PhaseRunner::PhaseRunner(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

PhaseRunner::~PhaseRunner() {
  impl_->RequestAbort("phase runner shut down", v1::STOPPED);
  if (impl_->monitor.joinable()) {
    impl_->monitor.join();
  }
  for (auto& t : impl_->tasks) {
    if (t->thread.joinable()) t->thread.join();
  }
}

absl::StatusOr<std::unique_ptr<PhaseRunner>> PhaseRunner::Prepare(const v1::PhaseSpec& spec,
                                                                  const std::string& dir,
                                                                  const RunnerOptions& options) {
  auto held = HoldTrusted(dir);
  if (!held.ok()) return held.status();
  return Prepare(spec, *std::move(held), options);
}

absl::StatusOr<std::unique_ptr<PhaseRunner>> PhaseRunner::Prepare(
    const v1::PhaseSpec& spec, std::shared_ptr<const BeneathDir> dir,
    const RunnerOptions& options) {
  auto workload = MakeWorkload(spec, options);
  if (!workload.ok()) return workload.status();
  return Prepare(*std::move(workload), spec, std::move(dir), options);
}

absl::StatusOr<std::unique_ptr<PhaseRunner>> PhaseRunner::Prepare(
    std::unique_ptr<Workload> workload, const v1::PhaseSpec& spec,
    std::shared_ptr<const BeneathDir> dir, const RunnerOptions& options) {
  if (absl::Status s = CheckCommonSpec(spec); !s.ok()) return s;
  if (absl::Status s = workload->Validate(); !s.ok()) return s;
  // IOR -d (delay_seconds) is waited out by AgentCore::Prepare, where the
  // end of the session or of the agent cuts it short.
  auto impl = std::make_unique<Impl>();
  impl->spec = spec;
  impl->dir = std::move(dir);
  impl->options = options;
  impl->workload = std::move(workload);
  if (absl::Status s = impl->MakeTasks(); !s.ok()) return s;
  impl->StartTaskThreads();
  return std::unique_ptr<PhaseRunner>(new PhaseRunner(std::move(impl)));
}

absl::Status PhaseRunner::Start(int64_t start_at_unix_ns, int64_t spin_duration_ns,
                                uint32_t progress_interval_ms, EventSink sink,
                                uint32_t host_agents, int64_t first_transfer_after_ns) {
  {
    absl::MutexLock lock(&impl_->mu);
    if (impl_->start_given) {
      return absl::FailedPreconditionError(
          absl::StrFormat("phase %s was already started", impl_->spec.phase_id()));
    }
    if (impl_->abort.load()) {
      return WithKind(
          absl::AbortedError(absl::StrFormat("phase %s was aborted before its start: %s",
                                             impl_->spec.phase_id(), impl_->abort_reason)),
          impl_->abort_kind);
    }
    impl_->sink = std::move(sink);
    impl_->progress_interval_ms = std::max<uint32_t>(progress_interval_ms, 50);
    impl_->start_at_unix_ns = start_at_unix_ns;
    impl_->spin_duration_ns = spin_duration_ns;
    impl_->ChooseStart(start_at_unix_ns, spin_duration_ns, host_agents, first_transfer_after_ns);
    impl_->start_given = true;
  }
  // Before the monitor starts: the acknowledgement is the stream's first event.
  v1::PhaseEvent started;
  started.mutable_started()->set_received_unix_ns(RealtimeNs());
  impl_->sink(started);
  Impl* raw = impl_.get();
  impl_->monitor = std::thread([raw] { raw->MonitorMain(); });
  return absl::OkStatus();
}

absl::Status PhaseRunner::Release(uint32_t seq, uint64_t value) {
  absl::MutexLock lock(&impl_->mu);
  const v1::PhaseSpec& spec = impl_->spec;
  if (!spec.sync_across_agents()) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "phase %s does not synchronise across agents; nothing to release", spec.phase_id()));
  }
  if (seq != impl_->rv_round || impl_->rv_arrived != impl_->tasks.size()) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "phase %s: release of rendezvous %u, but this agent is at rendezvous %u with %u of %u "
        "tasks arrived",
        spec.phase_id(), seq, impl_->rv_round, impl_->rv_arrived, impl_->tasks.size()));
  }
  impl_->EndRound(value);
  return absl::OkStatus();
}

void PhaseRunner::Abort(const std::string& reason, v1::ErrorKind kind) {
  impl_->RequestAbort(reason, kind);
}

bool PhaseRunner::Done() const { return impl_->done.load(); }

bool PhaseRunner::Started() const {
  absl::MutexLock lock(&impl_->mu);
  return impl_->start_given;
}

std::vector<std::string> PhaseRunner::Stalled(absl::Duration threshold) const {
  std::vector<std::string> out;
  if (impl_->done.load()) return out;
  const int64_t threshold_duration_ns = absl::ToInt64Nanoseconds(threshold);
  const int64_t now_mono_ns = MonotonicNs();
  for (const auto& t : impl_->tasks) {
    const int64_t since_mono_ns = t->counters.op_start_mono_ns.load(std::memory_order_relaxed);
    if (since_mono_ns == 0 || now_mono_ns - since_mono_ns < threshold_duration_ns) continue;
    out.push_back(absl::StrFormat("task %u stuck in %s %s at %s %u for %.1f s", t->rank,
                                  PhaseKindName(impl_->spec.kind()), t->path,
                                  impl_->spec.kind() == v1::MDTEST ? "item" : "offset",
                                  t->counters.op_offset.load(std::memory_order_relaxed),
                                  static_cast<double>(now_mono_ns - since_mono_ns) / 1e9));
  }
  return out;
}

const v1::PhaseSpec& PhaseRunner::spec() const { return impl_->spec; }
const std::vector<std::string>& PhaseRunner::files() const { return impl_->files; }

void PhaseRunner::DescribePrepared(v1::PrepareReply* reply) const {
  impl_->workload->DescribePrepared(reply);
}

absl::Status PhaseRunner::SetPeers(const std::vector<v1::NetPeer>& peers) {
  absl::MutexLock lock(&impl_->mu);
  if (impl_->start_given) {
    return absl::FailedPreconditionError(
        absl::StrFormat("phase %s was already started", impl_->spec.phase_id()));
  }
  return impl_->workload->SetPeers(peers);
}

namespace {

// A phase's workload for removing its files, checked as Prepare checks it:
// a Cleanup's spec is a request too (total_tasks 0 looped for ever in a
// datagen removal, a deep mdtest tree grew the agent by gigabytes).
absl::StatusOr<std::unique_ptr<Workload>> CheckedWorkload(const v1::PhaseSpec& spec) {
  auto workload = MakeWorkload(spec);
  if (!workload.ok()) return workload.status();
  RETURN_IF_ERROR(CheckCommonSpec(spec));
  RETURN_IF_ERROR((*workload)->Validate());
  return workload;
}

}  // namespace

absl::StatusOr<uint32_t> RemovePhaseFiles(const v1::PhaseSpec& spec, const BeneathDir& dir) {
  auto workload = CheckedWorkload(spec);
  if (!workload.ok()) return workload.status();
  return (*workload)->RemoveFiles(dir);
}

absl::StatusOr<uint32_t> RemovePhaseFiles(const v1::PhaseSpec& spec, const std::string& dir) {
  auto workload = CheckedWorkload(spec);  // the kind first, as the other
  if (!workload.ok()) return workload.status();
  auto held = HoldTrusted(dir);
  if (!held.ok()) return held.status();
  return (*workload)->RemoveFiles(**held);
}

}  // namespace lockstep
