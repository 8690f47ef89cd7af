#include "agent/agent_core.h"

#include <unistd.h>

#include <algorithm>
#include <thread>

#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "agent/cache_control.h"
#include "agent/fs/file_system.h"
#include "agent/fs/lustre_fs.h"
#include "agent/fs/root_mounts.h"
#include "agent/host_facts.h"
#include "agent/phase_preparer.h"
#include "agent/phase_telemetry.h"
#include "agent/session_ledger.h"
#include "agent/request_checks.h"
#include "agent/session_table.h"
#include "agent/workloads/command_process.h"
#include "common/clock.h"
#include "common/errors.h"
#include "common/files.h"
#include "common/log.h"
#include "common/names.h"
#include "common/status_macros.h"
#include "common/wire_version.h"

namespace lockstep {
namespace {

// How long an Attach waits for the watchdog to remove an expired session's
// files before it answers busy.
constexpr absl::Duration kAttachWaitForLeftovers = absl::Seconds(10);

std::string ThisHost() {
  char host[256] = {};
  return ::gethostname(host, sizeof(host) - 1) == 0 ? std::string(host) : std::string("this host");
}

// A Cleanup whose phase directory is no longer at its path (`moved`, from
// BeneathDir::CheckStillAtPath): a failure (IO_FAILED) either way, saying
// whether the files were removed through the held directory or remain.
absl::Status RemovedFromMovedDir(const v1::PhaseSpec& spec, const absl::Status& moved,
                                 const absl::StatusOr<uint32_t>& removed) {
  const std::string what =
      removed.ok()
          ? absl::StrFormat("the agent removed %u file(s) through the directory it held since "
                            "Prepare, in the mount they were written to",
                            *removed)
          : absl::StrFormat("its files remain in the mount they were written to (%s)",
                            removed.status().message());
  LogWarning("phase %s: %s; %s", spec.phase_id(), moved.message(), what);
  return WithKind(absl::FailedPreconditionError(absl::StrFormat(
                      "phase %s: %s; %s. The phase ran on a file system that is no longer "
                      "mounted there: check the mount of %s (findmnt) before trusting its "
                      "results",
                      spec.phase_id(), moved.message(), what, spec.dir())),
                  v1::IO_FAILED);
}

}  // namespace

struct AgentCore::Impl {
  explicit Impl(const AgentOptions& o)
      : options(o), sessions(o.default_lease_ms, o.min_lease_ms) {}

  AgentOptions options;
  AllowedRoots roots;
  std::string instance = RandomHex(8);
  std::string command_user;  // the account COMMAND phases run as (resolved)

  mutable absl::Mutex mu;
  bool shutting_down ABSL_GUARDED_BY(mu) = false;
  SessionTable sessions ABSL_GUARDED_BY(mu);
  // False while the watchdog removes the files of a session whose lease
  // expired (outside mu): a new session waits for it (Attach), or the new
  // controller's files could be removed with the old ones.
  bool leftovers_removed ABSL_GUARDED_BY(mu) = true;
  std::string removing_run_id ABSL_GUARDED_BY(mu);
  std::unique_ptr<PhaseRunner> runner ABSL_GUARDED_BY(mu);
  // Client checksums set for the current phase; restored when it is replaced,
  // at Detach and when the lease expires.
  std::unique_ptr<FsTunableScope> checksums ABSL_GUARDED_BY(mu);
  std::unique_ptr<TelemetrySampler> sampler;    // constant after Create; may be null
  std::unique_ptr<LustreTools> lustre;          // constant after Create
  FileSystemContext fs;                         // constant after Create
  std::unique_ptr<RootMounts> root_mounts;      // constant after Create
  std::unique_ptr<CephDaemons> daemons;         // constant after Create; may be empty
  std::unique_ptr<PhaseTelemetry> telemetry;    // constant after Create
  std::unique_ptr<PhasePreparer> preparer;      // constant after Create
  std::unique_ptr<SessionLedger> ledger;        // constant after Create; may be null
  std::thread watchdog;

  // The session's leftovers to the ledger, if the agent keeps one.
  void RecordLedgerLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    if (ledger) ledger->Record(sessions, roots);
  }
  void RecordLedger() ABSL_LOCKS_EXCLUDED(mu) {
    absl::MutexLock lock(&mu);
    RecordLedgerLocked();
  }

  // Ends the session; the caller tears down the runner (`*runner_out`) and
  // the leftovers outside mu.
  EndedSession EndSessionLocked(std::unique_ptr<PhaseRunner>* runner_out)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    *runner_out = std::move(runner);
    checksums.reset();  // restores the client checksums
    telemetry->Clear();
    return sessions.End();
  }

  void WatchdogMain();

  // TESTS ONLY (AgentOptions::test_delay_calls): waits before `call`'s work,
  // without holding mu (heartbeats are answered), until shutdown or the end
  // of the calling session at most.
  void TestDelay(const std::string& call, const std::string& session) ABSL_LOCKS_EXCLUDED(mu) {
    const auto& calls = options.test_delay_calls;
    if (options.test_delay_call <= absl::ZeroDuration() ||
        std::find(calls.begin(), calls.end(), call) == calls.end()) {
      return;
    }
    LogInfo("test hook: %s delayed by %d ms", call,
            absl::ToInt64Milliseconds(options.test_delay_call));
    WaitOutDelay(options.test_delay_call, session);
  }

  // Waits `delay` (IOR -d before a Prepare answers, a test hook) without
  // holding mu, until shutdown or the end of the calling session at most.
  // False when it was cut short.
  bool WaitOutDelay(absl::Duration delay, const std::string& session) ABSL_LOCKS_EXCLUDED(mu) {
    absl::MutexLock lock(&mu);
    auto over = [this, &session]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
      return shutting_down || sessions.id() != session;
    };
    return !mu.AwaitWithTimeout(absl::Condition(&over), delay);
  }

  // Checks the session and the role, and drops a prepared phase this one
  // replaces (refuses while a phase runs).
  absl::Status ReplaceRunnerFor(const v1::PrepareRequest& request) ABSL_LOCKS_EXCLUDED(mu);
};

void AgentCore::Impl::WatchdogMain() {
  absl::MutexLock lock(&mu);
  while (!shutting_down) {
    absl::Duration wait = absl::Seconds(1);
    if (!sessions.idle()) {
      int64_t left = sessions.lease_deadline_mono_ns() - MonotonicNs();
      wait = absl::Nanoseconds(std::max<int64_t>(left, 0)) + absl::Milliseconds(1);
    }
    mu.AwaitWithTimeout(absl::Condition(&shutting_down), wait);
    if (shutting_down) break;
    if (!sessions.Expired()) continue;

    std::unique_ptr<PhaseRunner> r;
    EndedSession ended = EndSessionLocked(&r);
    leftovers_removed = false;
    removing_run_id = ended.run_id;
    mu.Unlock();
    LogWarning("lease of %u ms expired: controller %s of run %s is silent; aborting and removing "
               "the files of %u phase(s)",
               ended.lease_ms, ended.controller, ended.run_id, ended.phases.size());
    if (r) {
      r->Abort(absl::StrFormat("the controller's lease (%u ms) expired", ended.lease_ms));
      r.reset();  // joins the task threads
    }
    RemoveLeftovers(ended, /*all_dirs=*/true);
    if (options.on_session_end) options.on_session_end();
    mu.Lock();
    leftovers_removed = true;
    RecordLedgerLocked();
  }
}

AgentCore::AgentCore(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {
  Impl* raw = impl_.get();
  impl_->watchdog = std::thread([raw] { raw->WatchdogMain(); });
}

void AgentCore::BeginShutdown() {
  absl::MutexLock lock(&impl_->mu);
  impl_->shutting_down = true;
}

AgentCore::~AgentCore() {
  BeginShutdown();
  if (impl_->watchdog.joinable()) impl_->watchdog.join();
  std::unique_ptr<PhaseRunner> r;  // destroyed (its tasks joined) without mu
  absl::MutexLock lock(&impl_->mu);
  r = std::move(impl_->runner);
}

absl::StatusOr<std::unique_ptr<AgentCore>> AgentCore::Create(const AgentOptions& options) {
  auto roots = AllowedRoots::Create(options.roots);
  if (!roots.ok()) return roots.status();
  for (const std::string& root : roots->roots()) {
    if (!IsSystemDirectory(root) || options.allow_system_roots) continue;
    return absl::InvalidArgumentError(absl::StrFormat(
        "allowed root %s is a system directory (\"/\", /etc, /usr, /var/lib, ...): a plan could "
        "create, write and remove files there as this agent; give the directory benchmarks "
        "write to (roots = [\"/lustre/scratch/lockstep\"]), or --allow_system_roots (config "
        "[permissions] system_roots = true) if it is meant",
        root));
  }
  for (const std::string& program : options.allow_commands) {
    if (program.empty() || program[0] != '/') {
      return absl::InvalidArgumentError(absl::StrFormat(
          "allow_commands (--allow_command): \"%s\" is not an absolute path; list programs "
          "by absolute path (\"/usr/bin/tar\")",
          program));
    }
  }
  // A configured account must exist; a missing default ("nobody") only
  // keeps COMMAND phases from running (each Prepare says why).
  auto account = ResolveCommandAccount(options.command_user);
  if (!account.ok() && !options.command_user.empty()) return account.status();
  if (!account.ok()) LogWarning("%s", account.status().message());
  auto impl = std::make_unique<Impl>(options);
  impl->options.runner.allow_commands = options.allow_commands;
  impl->options.runner.command_user = options.command_user;
  if (account.ok()) impl->command_user = account->name;
  impl->roots = *roots;
  if (!options.state_dir.empty()) {
    // What an agent killed before this one left in its roots, before anything
    // new; only from a directory no one else could have written a ledger in.
    RETURN_IF_ERROR(CheckStateDir(options.state_dir));
    RemoveLostSessions(options.state_dir, impl->roots);
    ASSIGN_OR_RETURN(impl->ledger, SessionLedger::Open(options.state_dir));
  }
  impl->root_mounts = std::make_unique<RootMounts>(impl->roots.roots());
  impl->lustre = SetUpLustre(options.lustre_options, options.allow_lustre, options.role,
                             &impl->fs, &impl->options.extra_facts);
  if (options.allow_lustre) impl->options.runner.lustre = impl->lustre.get();  // BACKEND obdfilter
  impl->daemons = std::make_unique<CephDaemons>(options.ceph);
  impl->options.runner.ceph_daemons = impl->daemons.get();  // BACKEND osd_bench
  if (options.telemetry) {
    auto sampler = TelemetrySampler::Create(options.telemetry_options);
    if (!sampler.ok()) return sampler.status();
    impl->sampler = std::move(*sampler);
    absl::Status s = impl->sampler->Start();
    if (!s.ok()) return s;
  }
  impl->telemetry = std::make_unique<PhaseTelemetry>(impl->sampler.get(), impl->daemons.get());
  impl->preparer = std::make_unique<PhasePreparer>(
      &impl->roots, impl->root_mounts.get(), &impl->fs,
      PhasePreparerOptions{.max_tasks = options.max_tasks,
                           .max_bytes_per_phase = options.max_bytes_per_phase,
                           .runner = impl->options.runner,
                           .host = ThisHost()});
  return std::unique_ptr<AgentCore>(new AgentCore(std::move(impl)));
}

v1::HostFacts AgentCore::Facts() const {
  v1::HostFacts facts =
      GatherHostFacts(impl_->options.role, impl_->roots.roots(), impl_->instance);
  for (const auto& [key, value] : impl_->options.extra_facts) (*facts.mutable_extra())[key] = value;
  if (facts.lustre_version().empty()) facts.set_lustre_version(impl_->fs.lustre_version);
  for (v1::RootFacts& root : *facts.mutable_roots()) {
    auto fs = FileSystemFor(root.path(), impl_->fs);
    if (!fs.ok()) continue;
    root.set_fs_name((*fs)->Name());
    root.set_fs_version((*fs)->Version());
    *root.mutable_capabilities() = (*fs)->Capabilities();
  }
  for (v1::DaemonFacts& d : impl_->daemons->Facts()) *facts.add_daemons() = std::move(d);
  for (const std::string& program : impl_->options.allow_commands) {
    facts.add_allowed_commands(program);
  }
  facts.set_command_user(impl_->command_user);
  return facts;
}

absl::StatusOr<v1::AttachReply> AgentCore::Attach(const v1::AttachRequest& request) {
  RETURN_IF_ERROR(CheckRequest(request));
  v1::AttachReply reply;
  // Before anything else: a controller we cannot work with takes nothing.
  if (absl::Status v = CheckWireVersions(
          {request.wire_major(), request.wire_minor(), request.controller_version()},
          OwnWireVersion(), ThisHost());
      !v.ok()) {
    LogWarning("refused Attach of run %s from %s: %s", request.run_id(), request.controller(),
               v.message());
    return v;
  }
  std::unique_ptr<PhaseRunner> stale_runner, stale_runner2;
  EndedSession stale;
  {
    absl::MutexLock lock(&impl_->mu);
    // The watchdog may be removing an expired session's files: wait for it
    // (bounded), so that none of the new run's files goes with them.
    if (!impl_->mu.AwaitWithTimeout(absl::Condition(&impl_->leftovers_removed),
                                    kAttachWaitForLeftovers)) {
      return WithKind(absl::FailedPreconditionError(absl::StrFormat(
                          "busy: still removing the files of run %s, whose controller's lease "
                          "expired (this Attach waited %s); attach again when it is done",
                          impl_->removing_run_id, absl::FormatDuration(kAttachWaitForLeftovers))),
                      v1::BUSY);
    }
    RETURN_IF_ERROR(impl_->sessions.CheckAttach());
    // A session whose lease expired and the watchdog has not ended yet: end
    // it here, removing its files (below, before the new controller can
    // prepare anything), as the watchdog would.
    if (!impl_->sessions.idle()) stale = impl_->EndSessionLocked(&stale_runner);
    if (impl_->runner && !impl_->runner->Done()) {
      impl_->runner->Abort("a new session attached", v1::SUPERSEDED);
    }
    stale_runner2 = std::move(impl_->runner);
    reply.set_session_id(impl_->sessions.Begin(request.run_id(), request.controller(),
                                               request.lease_ms(), RealtimeNs()));
  }
  if (stale_runner) stale_runner->Abort("the lease expired and a new session attached");
  stale_runner.reset();  // joins the task threads
  stale_runner2.reset();
  if (!stale.run_id.empty()) {
    LogWarning("run %s: lease expired; removing the files of %u phase(s) before attaching run %s",
               stale.run_id, stale.phases.size(), request.run_id());
  }
  RemoveLeftovers(stale, /*all_dirs=*/true);
  impl_->RecordLedger();
  LogInfo("attached: run %s from %s", request.run_id(), request.controller());
  *reply.mutable_facts() = Facts();
  return reply;
}

absl::StatusOr<v1::HeartbeatReply> AgentCore::Heartbeat(const v1::HeartbeatRequest& request) {
  RETURN_IF_ERROR(CheckRequest(request));
  // The served daemons, from /proc, outside mu: a hung daemon must not hold
  // up the heartbeat.
  std::vector<std::string> down = impl_->daemons->Down();
  absl::MutexLock lock(&impl_->mu);
  RETURN_IF_ERROR(impl_->sessions.Heartbeat(request.session_id()));
  v1::HeartbeatReply reply;
  reply.set_agent_unix_ns(RealtimeNs());
  if (impl_->runner && request.stall_ms() > 0) {
    for (const std::string& s : impl_->runner->Stalled(absl::Milliseconds(request.stall_ms()))) {
      reply.add_stalled(s);
    }
  }
  for (std::string& d : down) reply.add_daemons_down(std::move(d));
  reply.set_state(impl_->runner == nullptr       ? "attached"
                  : impl_->runner->Done()        ? "attached"
                  : impl_->runner->Started()     ? "running"
                                                 : "prepared");
  return reply;
}

absl::Status AgentCore::Detach(const v1::DetachRequest& request) {
  RETURN_IF_ERROR(CheckRequest(request));
  std::unique_ptr<PhaseRunner> r;
  EndedSession ended;
  {
    absl::MutexLock lock(&impl_->mu);
    RETURN_IF_ERROR(impl_->sessions.Check(request.session_id()));
    LogInfo("detached: run %s", impl_->sessions.run_id());
    ended = impl_->EndSessionLocked(&r);
  }
  if (r) r->Abort("the controller detached");
  r.reset();  // joins the task threads
  // The controller removed or kept its files; mdtest removes the -d
  // directory it created once its removal phases ran.
  ended.phases.clear();
  RemoveLeftovers(ended, /*all_dirs=*/false);
  impl_->RecordLedger();
  if (impl_->options.on_session_end) impl_->options.on_session_end();
  return absl::OkStatus();
}

absl::StatusOr<v1::ClockReply> AgentCore::Clock(const v1::ClockRequest& request,
                                                int64_t receive_unix_ns) {
  RETURN_IF_ERROR(CheckRequest(request));
  {
    absl::MutexLock lock(&impl_->mu);
    absl::Status s = impl_->sessions.Check(request.session_id());
    if (!s.ok()) return s;
  }
  v1::ClockReply reply;
  reply.set_receive_unix_ns(receive_unix_ns);
  reply.set_transmit_unix_ns(RealtimeNs());
  return reply;
}

absl::Status AgentCore::Impl::ReplaceRunnerFor(const v1::PrepareRequest& request) {
  const v1::PhaseSpec& spec = request.spec();
  std::unique_ptr<PhaseRunner> old;
  {
    absl::MutexLock lock(&mu);
    absl::Status s = sessions.Check(request.session_id());
    if (!s.ok()) return s;
    if (options.role != v1::CLIENT && !RunsOnServers(spec.kind())) {
      return absl::FailedPreconditionError(absl::StrFormat(
          "this agent has role %s; only client agents run I/O tasks (phase %s; server agents "
          "run net and backend phases)",
          RoleName(options.role), spec.phase_id()));
    }
    if (runner && !runner->Done()) {
      if (runner->Started()) {
        return absl::FailedPreconditionError(
            absl::StrFormat("phase %s is still running; abort it before preparing %s",
                            runner->spec().phase_id(), spec.phase_id()));
      }
      runner->Abort("replaced by phase " + spec.phase_id(), v1::SUPERSEDED);
    }
    old = std::move(runner);
  }
  old.reset();  // joins its parked task threads, outside mu
  return absl::OkStatus();
}


absl::StatusOr<v1::PrepareReply> AgentCore::Prepare(const v1::PrepareRequest& request) {
  RETURN_IF_ERROR(CheckRequest(request));
  const v1::PhaseSpec& spec = request.spec();
  impl_->TestDelay("prepare", request.session_id());
  RETURN_IF_ERROR(impl_->ReplaceRunnerFor(request));
  {
    absl::MutexLock lock(&impl_->mu);
    impl_->checksums.reset();  // the previous phase's setting ends here
  }
  std::shared_ptr<const BeneathDir> created_dir;
  absl::StatusOr<PreparedPhase> phase = impl_->preparer->Prepare(spec, &created_dir);
  // IOR -d: the delay, never timed, after the phase's checks and before its
  // start barrier; Detach, the lease's end and a stopping agent cut it short.
  if (phase.ok() && spec.delay_seconds() > 0) {
    LogInfo("phase %s: waiting out delay_seconds %u", spec.phase_id(), spec.delay_seconds());
    if (!impl_->WaitOutDelay(absl::Seconds(spec.delay_seconds()), request.session_id())) {
      phase = absl::AbortedError(absl::StrCat(spec.phase_id(), ": delay cut short (stopping)"));
    }
  }
  // The phase's telemetry window opens at the Start from this sample: not on
  // the way from the Start's arrival to the instant.
  if (phase.ok()) impl_->telemetry->Prime();
  absl::MutexLock lock(&impl_->mu);
  // Even when the Prepare failed: the session removes what it created.
  if (created_dir && !impl_->sessions.idle()) {
    impl_->sessions.NoteCreatedDir(created_dir);
    impl_->RecordLedgerLocked();
  }
  if (!phase.ok()) return phase.status();
  // The lease may have expired meanwhile; the phase is then destroyed here.
  RETURN_IF_ERROR(impl_->sessions.CheckAndRenew(request.session_id()));
  if (phase->creates_files) impl_->sessions.AddPhaseFiles(spec, phase->held);
  if (phase->removes_trees) impl_->sessions.NoteTreeRemoved(phase->dir);
  impl_->RecordLedgerLocked();  // before the phase can write anything
  impl_->checksums = std::move(phase->checksums);
  impl_->runner = std::move(phase->runner);
  return std::move(phase->reply);
}

absl::StatusOr<v1::CacheReply> AgentCore::CacheBarrier(const v1::CacheRequest& request) {
  RETURN_IF_ERROR(CheckRequest(request));
  {
    absl::MutexLock lock(&impl_->mu);
    RETURN_IF_ERROR(impl_->sessions.CheckAndRenew(request.session_id()));
  }
  impl_->TestDelay("cache", request.session_id());
  CacheControl control{.allow_drop_caches = impl_->options.allow_drop_caches,
                       .drop_caches_path = impl_->options.drop_caches_path,
                       .roots = &impl_->roots.roots(),
                       .fs = &impl_->fs,
                       .daemons = impl_->daemons.get()};
  ASSIGN_OR_RETURN(v1::CacheReply reply, DropCaches(request, control));
  // After a sync and a drop: the phase's window starts here, not at Prepare.
  impl_->telemetry->Prime();
  return reply;
}

absl::Status AgentCore::Start(const v1::StartRequest& request, PhaseRunner::EventSink sink) {
  RETURN_IF_ERROR(CheckRequest(request));
  impl_->TestDelay("start", request.session_id());  // a slow delivery, before it is stamped
  const int64_t received_unix_ns = RealtimeNs();  // the controller's start margin
  absl::MutexLock lock(&impl_->mu);
  // Renews (minor 5): once its stream brings anything back, the controller counts the
  // Start as a heartbeat sent when the Start was.
  RETURN_IF_ERROR(impl_->sessions.CheckAndRenew(request.session_id()));
  if (!impl_->runner || impl_->runner->spec().phase_id() != request.phase_id()) {
    return absl::FailedPreconditionError(
        absl::StrFormat("phase %s is not prepared on this agent; call Prepare first",
                        request.phase_id()));
  }
  // Spin only when asked and the tasks fit the usable cores (PhaseRunner::Start).
  int64_t spin_duration_ns = std::clamp<int64_t>(request.spin_duration_ns(), 0, 5'000'000);
  PhaseRunner::EventSink stamped = [received_unix_ns,
                                     inner = std::move(sink)](const v1::PhaseEvent& event) {
    if (!event.has_result()) return inner(event);
    v1::PhaseEvent with = event;
    with.mutable_result()->set_start_received_unix_ns(received_unix_ns);
    inner(with);
  };
  // The host's telemetry over the phase rides on its result.
  PhaseRunner::EventSink wrapped = impl_->telemetry->WrapSink(std::move(stamped));
  const uint32_t progress_ms = request.progress_interval_ms() ? request.progress_interval_ms() : 1000;
  RETURN_IF_ERROR(impl_->runner->SetPeers({request.peers().begin(), request.peers().end()}));
  return impl_->runner->Start(request.start_at_unix_ns(), spin_duration_ns, progress_ms,
                              std::move(wrapped), request.host_agents(),
                              request.first_transfer_after_ns());
}

absl::StatusOr<v1::AbortReply> AgentCore::Abort(const v1::AbortRequest& request) {
  RETURN_IF_ERROR(CheckRequest(request));
  absl::MutexLock lock(&impl_->mu);
  absl::Status s = impl_->sessions.Check(request.session_id());
  if (!s.ok()) return s;
  v1::AbortReply reply;
  if (impl_->runner && !impl_->runner->Done()) {
    reply.set_was_running(impl_->runner->Started());
    impl_->runner->Abort(request.reason().empty() ? "aborted by the controller" : request.reason());
  }
  return reply;
}

absl::StatusOr<v1::ReleaseReply> AgentCore::Release(const v1::ReleaseRequest& request) {
  RETURN_IF_ERROR(CheckRequest(request));
  absl::MutexLock lock(&impl_->mu);
  absl::Status s = impl_->sessions.Check(request.session_id());
  if (!s.ok()) return s;
  if (!impl_->runner || impl_->runner->spec().phase_id() != request.phase_id() ||
      !impl_->runner->Started()) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "phase %s is not running on this agent; nothing to release", request.phase_id()));
  }
  s = impl_->runner->Release(request.seq(), request.value());
  if (!s.ok()) return s;
  return v1::ReleaseReply();
}

absl::StatusOr<v1::CleanupReply> AgentCore::Cleanup(const v1::CleanupRequest& request) {
  RETURN_IF_ERROR(CheckRequest(request));
  // Its spec is weighed as a Prepare's before anything is stopped or removed
  // (the workload's own checks come with RemovePhaseFiles).
  RETURN_IF_ERROR(impl_->preparer->CheckTasks(request.spec()));
  std::unique_ptr<PhaseRunner> ended;
  if (!request.release_only()) impl_->TestDelay("cleanup", request.session_id());
  {
    absl::MutexLock lock(&impl_->mu);
    RETURN_IF_ERROR(impl_->sessions.CheckAndRenew(request.session_id()));
    // On a failure path the phase may still be winding down: stop and join its
    // tasks first, or a task that has not yet opened (O_CREAT) its file would
    // create it after the removal below. A finished one is freed here too, not
    // in the next Prepare (whose round every agent's teardown lengthened).
    if (impl_->runner && !impl_->runner->Done()) {
      impl_->runner->Abort("the controller is removing the phase's files");
    }
    ended = std::move(impl_->runner);
  }
  ended.reset();
  v1::CleanupReply reply;
  std::shared_ptr<const BeneathDir> held;
  {
    absl::MutexLock lock(&impl_->mu);
    // Kept files: no longer the session's to remove if the controller dies.
    if (request.release_only()) {
      impl_->sessions.ForgetPhaseFiles(request.spec());
      impl_->RecordLedgerLocked();
      return reply;
    }
    // Where the phase wrote: the directory held since its Prepare.
    held = impl_->sessions.PhaseDirOf(request.spec());
  }
  if (!held) {
    ASSIGN_OR_RETURN(held, impl_->preparer->HoldDir(request.spec().dir()));
  }
  // A directory whose mount changed since Prepare: the path shows another
  // file system; the files are where the held descriptor leads.
  const absl::Status moved = held->CheckStillAtPath();
  reply.set_remove_start_unix_ns(RealtimeNs());
  auto removed = RemovePhaseFiles(request.spec(), *held);
  reply.set_remove_stop_unix_ns(RealtimeNs());
  if (!moved.ok()) return RemovedFromMovedDir(request.spec(), moved, removed);
  if (!removed.ok()) return removed.status();
  reply.set_removed(*removed);
  absl::MutexLock lock(&impl_->mu);
  // Removed: nothing left to remove at lease expiry.
  impl_->sessions.ForgetPhaseFiles(request.spec());
  impl_->RecordLedgerLocked();
  return reply;
}

absl::StatusOr<v1::TelemetryReply> AgentCore::Telemetry(const v1::TelemetryRequest& request) {
  RETURN_IF_ERROR(CheckRequest(request));
  {
    absl::MutexLock lock(&impl_->mu);
    RETURN_IF_ERROR(impl_->sessions.CheckAndRenew(request.session_id()));
  }
  return impl_->telemetry->Window(request);
}

std::string AgentCore::State() const {
  absl::MutexLock lock(&impl_->mu);
  if (!impl_->leftovers_removed) return "removing leftovers";
  if (impl_->sessions.idle()) return "idle";
  if (!impl_->runner || impl_->runner->Done()) return "attached";
  return impl_->runner->Started() ? "running" : "prepared";
}

}  // namespace lockstep
