#include "agent/agent_core.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <set>
#include <thread>

#include "absl/random/random.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "agent/cache_control.h"
#include "agent/fs/file_system.h"
#include "agent/fs/root_mounts.h"
#include "agent/host_facts.h"
#include "agent/workloads/command_process.h"
#include "agent/workloads/workload.h"
#include "common/clock.h"
#include "common/errors.h"
#include "common/layout.h"
#include "common/log.h"
#include "common/names.h"
#include "common/sizes.h"
#include "common/status_macros.h"
#include "common/wire_version.h"

namespace lockstep {
namespace {

// A Start later than this after its Prepare (or cache barrier) samples
// telemetry itself: a window never spans much more than its phase.
constexpr absl::Duration kPrimedTelemetryMaxAge = absl::Seconds(5);

std::string RandomHex(int bytes) {
  absl::BitGen gen;
  std::string out;
  for (int i = 0; i < bytes; ++i) out += absl::StrFormat("%02x", absl::Uniform<uint32_t>(gen, 0, 256));
  return out;
}

std::string ThisHost() {
  char host[256] = {};
  return ::gethostname(host, sizeof(host) - 1) == 0 ? std::string(host) : std::string("this host");
}

}  // namespace

struct AgentCore::Impl {
  AgentOptions options;
  AllowedRoots roots;
  std::string instance = RandomHex(8);
  std::string command_user;  // the account COMMAND phases run as (resolved)

  mutable absl::Mutex mu;
  bool shutting_down ABSL_GUARDED_BY(mu) = false;
  std::string session_id ABSL_GUARDED_BY(mu);
  std::string run_id ABSL_GUARDED_BY(mu);
  std::string controller ABSL_GUARDED_BY(mu);
  int64_t attached_unix_ns ABSL_GUARDED_BY(mu) = 0;
  uint32_t lease_ms ABSL_GUARDED_BY(mu) = 0;
  int64_t lease_deadline_mono_ns ABSL_GUARDED_BY(mu) = 0;
  std::unique_ptr<PhaseRunner> runner ABSL_GUARDED_BY(mu);
  // What the session's creating phases (write, small_files, mdtest) laid
  // down and the controller has neither removed nor released (kept): removed
  // when the lease expires, so a dead controller leaves nothing. Keyed by
  // PhaseFilesKey.
  std::map<std::string, std::pair<v1::PhaseSpec, std::string>> session_phases ABSL_GUARDED_BY(mu);
  // Client checksums set for the current phase; restored when it is replaced,
  // at Detach and when the lease expires.
  std::unique_ptr<FsTunableScope> checksums ABSL_GUARDED_BY(mu);
  // phase id → telemetry window (host sampler, served daemons)
  std::map<std::string, std::pair<uint64_t, uint64_t>> windows ABSL_GUARDED_BY(mu);
  // mdtest -d directories this session created because they were missing
  // (mdtest does), and whether a tree_remove ran in them since: mdtest then
  // removes the directory at its end, so Detach does.
  std::map<std::string, bool> md_created_dirs ABSL_GUARDED_BY(mu);
  std::unique_ptr<TelemetrySampler> sampler;  // constant after Create; may be null
  std::unique_ptr<LustreTools> lustre;        // constant after Create
  FileSystemContext fs;                       // constant after Create
  std::unique_ptr<RootMounts> root_mounts;    // constant after Create
  std::unique_ptr<CephDaemons> daemons;       // constant after Create; may be empty
  std::thread watchdog;

  absl::Status CheckSession(const std::string& id) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    if (session_id.empty()) {
      return WithKind(
          absl::FailedPreconditionError(
              "no session: this agent is idle (restarted, or its lease expired); attach again"),
          v1::SESSION_GONE);
    }
    if (id != session_id) {
      return WithKind(absl::FailedPreconditionError(
                          absl::StrFormat("busy: run %s from %s since %s holds this agent",
                                          run_id, controller, FormatRfc3339(attached_unix_ns))),
                      v1::BUSY);
    }
    // An expired lease is not renewed by a late call (a stopped agent that
    // resumes may find calls queued in its sockets): the watchdog ends it.
    if (MonotonicNs() >= lease_deadline_mono_ns) {
      return WithKind(absl::FailedPreconditionError(absl::StrFormat(
                          "no session: the lease of %u ms of run %s expired; its tasks are "
                          "aborted and its files removed; attach again",
                          lease_ms, run_id)),
                      v1::SESSION_GONE);
    }
    return absl::OkStatus();
  }
  // CheckSession, and on success the lease renewed as a heartbeat renews it
  // (minor 4: Prepare, CacheBarrier, Telemetry, Cleanup; 5: Start): a
  // controller that got their answer skips a heartbeat (heartbeater.h).
  absl::Status CheckSessionAndRenew(const std::string& id) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    absl::Status s = CheckSession(id);
    if (s.ok()) {
      lease_deadline_mono_ns =
          std::max(lease_deadline_mono_ns, MonotonicNs() + int64_t{lease_ms} * 1'000'000);
    }
    return s;
  }

  // Ends the session; returns what the caller must tear down outside mu:
  // the runner, the phases whose files remain (when `phases_out`) and the
  // mdtest directories to remove once empty (when `dirs_out`: all created
  // ones with `phases_out`, else those a tree_remove ran in).
  void EndSessionLocked(std::unique_ptr<PhaseRunner>* runner_out,
                        std::map<std::string, std::pair<v1::PhaseSpec, std::string>>* phases_out,
                        std::vector<std::string>* dirs_out = nullptr)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    *runner_out = std::move(runner);
    if (dirs_out != nullptr) {
      for (const auto& [dir, removed_in] : md_created_dirs) {
        if (removed_in || phases_out != nullptr) dirs_out->push_back(dir);
      }
    }
    md_created_dirs.clear();
    if (phases_out != nullptr) *phases_out = std::move(session_phases);
    session_phases.clear();
    checksums.reset();  // restores the client checksums
    windows.clear();
    session_id.clear();
    run_id.clear();
    controller.clear();
    lease_deadline_mono_ns = 0;
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
    absl::MutexLock lock(&mu);
    auto over = [this, &session]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
      return shutting_down || session_id != session;
    };
    mu.AwaitWithTimeout(absl::Condition(&over), options.test_delay_call);
  }

  // Prepare's steps, in order.
  // Checks the session and the role, and drops a prepared phase this one
  // replaces (refuses while a phase runs).
  absl::Status ReplaceRunnerFor(const v1::PrepareRequest& request) ABSL_LOCKS_EXCLUDED(mu);
  // The phase directory within the roots; creates a missing mdtest -d.
  absl::StatusOr<std::string> ResolvePhaseDir(const v1::PhaseSpec& spec, const Workload& workload)
      ABSL_LOCKS_EXCLUDED(mu);
  // The agent's per-phase byte limit and the free space (NO_SPACE).
  absl::Status CheckWriteSpace(const v1::PhaseSpec& spec, const Workload& workload,
                               const std::string& dir) const;
  // The directory's file system: layout and client checksums, reported in
  // `reply`.
  absl::Status ApplyFsSettings(const v1::PhaseSpec& spec, const std::string& dir,
                               v1::PrepareReply* reply) ABSL_LOCKS_EXCLUDED(mu);
};

std::string PhaseFilesKey(const std::string& dir, const v1::PhaseSpec& spec) {
  return absl::StrFormat("%s|%s|%d|%d|%u|%u", dir, spec.file_name(), spec.kind(),
                         spec.file_per_process(), spec.first_rank(), spec.tasks());
}

void RemoveSessionPhases(const std::map<std::string, std::pair<v1::PhaseSpec, std::string>>& phases) {
  for (const auto& [key, phase] : phases) {
    auto removed = RemovePhaseFiles(phase.first, phase.second);
    if (!removed.ok()) LogWarning("%s", std::string(removed.status().message()));
  }
}

// rmdir of each (empty) directory; one that is not empty stays, with a warning.
void RemoveCreatedDirs(const std::vector<std::string>& dirs) {
  for (const std::string& d : dirs) {
    if (::rmdir(d.c_str()) != 0 && errno != ENOENT) {
      LogWarning("cannot remove the mdtest directory %s this session created: %s", d,
                 std::strerror(errno));
    }
  }
}

void AgentCore::Impl::WatchdogMain() {
  absl::MutexLock lock(&mu);
  while (!shutting_down) {
    absl::Duration wait = absl::Seconds(1);
    if (!session_id.empty()) {
      int64_t left = lease_deadline_mono_ns - MonotonicNs();
      wait = absl::Nanoseconds(std::max<int64_t>(left, 0)) + absl::Milliseconds(1);
    }
    mu.AwaitWithTimeout(absl::Condition(&shutting_down), wait);
    if (shutting_down) break;
    if (session_id.empty() || MonotonicNs() < lease_deadline_mono_ns) continue;

    std::string lost_run = run_id;
    std::string lost_controller = controller;
    uint32_t lease = lease_ms;
    std::unique_ptr<PhaseRunner> r;
    std::map<std::string, std::pair<v1::PhaseSpec, std::string>> phases;
    std::vector<std::string> dirs;
    EndSessionLocked(&r, &phases, &dirs);
    mu.Unlock();
    LogWarning("lease of %u ms expired: controller %s of run %s is silent; aborting and removing "
               "the files of %u phase(s)",
               lease, lost_controller, lost_run, phases.size());
    if (r) {
      r->Abort(absl::StrFormat("the controller's lease (%u ms) expired", lease));
      r.reset();  // joins the task threads
    }
    RemoveSessionPhases(phases);
    RemoveCreatedDirs(dirs);
    if (options.on_session_end) options.on_session_end();
    mu.Lock();
  }
}

AgentCore::AgentCore(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {
  Impl* raw = impl_.get();
  impl_->watchdog = std::thread([raw] { raw->WatchdogMain(); });
}

AgentCore::~AgentCore() {
  std::unique_ptr<PhaseRunner> r;
  {
    absl::MutexLock lock(&impl_->mu);
    impl_->shutting_down = true;
    r = std::move(impl_->runner);
  }
  if (impl_->watchdog.joinable()) impl_->watchdog.join();
  r.reset();
}

absl::StatusOr<std::unique_ptr<AgentCore>> AgentCore::Create(const AgentOptions& options) {
  auto roots = AllowedRoots::Create(options.roots);
  if (!roots.ok()) return roots.status();
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
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  impl->options.runner.allow_commands = options.allow_commands;
  impl->options.runner.command_user = options.command_user;
  if (account.ok()) impl->command_user = account->name;
  impl->roots = *roots;
  impl->root_mounts = std::make_unique<RootMounts>(impl->roots.roots());
  impl->lustre = std::make_unique<LustreTools>(options.lustre_options);
  impl->fs.lustre = impl->lustre.get();
  impl->fs.allow_lustre = options.allow_lustre;
  impl->fs.lustre_any_fs = !options.lustre_options.require_lustre;
  // Asked once: lctl may take a while, and the version does not change
  // while the agent runs (a client upgrade restarts it).
  if (options.allow_lustre) {
    if (auto v = impl->lustre->Version(); v.ok()) impl->fs.lustre_version = *v;
  }
  impl->daemons = std::make_unique<CephDaemons>(options.ceph);
  if (options.telemetry) {
    auto sampler = TelemetrySampler::Create(options.telemetry_options);
    if (!sampler.ok()) return sampler.status();
    impl->sampler = std::move(*sampler);
    absl::Status s = impl->sampler->Start();
    if (!s.ok()) return s;
  }
  return std::unique_ptr<AgentCore>(new AgentCore(std::move(impl)));
}

v1::HostFacts AgentCore::Facts() const {
  v1::HostFacts facts =
      GatherHostFacts(impl_->options.role, impl_->roots.roots(), impl_->instance);
  for (const auto& [key, value] : impl_->options.extra_facts) (*facts.mutable_extra())[key] = value;
  if (facts.lustre_version().empty()) facts.set_lustre_version(impl_->fs.lustre_version);
  for (v1::DaemonFacts& d : impl_->daemons->Facts()) *facts.add_daemons() = std::move(d);
  for (const std::string& program : impl_->options.allow_commands) {
    facts.add_allowed_commands(program);
  }
  facts.set_command_user(impl_->command_user);
  return facts;
}

absl::StatusOr<v1::AttachReply> AgentCore::Attach(const v1::AttachRequest& request) {
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
  std::string stale_run;
  std::unique_ptr<PhaseRunner> stale_runner, stale_runner2;
  std::map<std::string, std::pair<v1::PhaseSpec, std::string>> stale_files;
  std::vector<std::string> stale_dirs;
  {
    absl::MutexLock lock(&impl_->mu);
    if (!impl_->session_id.empty() && MonotonicNs() < impl_->lease_deadline_mono_ns) {
      return WithKind(absl::FailedPreconditionError(absl::StrFormat(
                          "busy: run %s from %s since %s; wait for it to finish (or its lease "
                          "of %u ms to expire)",
                          impl_->run_id, impl_->controller,
                          FormatRfc3339(impl_->attached_unix_ns), impl_->lease_ms)),
                      v1::BUSY);
    }
    // A session whose lease expired and the watchdog has not ended yet: end
    // it here, removing its files (below, before the new controller can
    // prepare anything), as the watchdog would.
    if (!impl_->session_id.empty()) {
      stale_run = impl_->run_id;
      impl_->EndSessionLocked(&stale_runner, &stale_files, &stale_dirs);
    }
    if (impl_->runner && !impl_->runner->Done()) {
      impl_->runner->Abort("a new session attached", v1::SUPERSEDED);
    }
    stale_runner2 = std::move(impl_->runner);
    uint32_t lease = request.lease_ms() == 0 ? impl_->options.default_lease_ms : request.lease_ms();
    lease = std::max(lease, impl_->options.min_lease_ms);
    impl_->session_id = RandomHex(16);
    impl_->run_id = request.run_id();
    impl_->controller = request.controller();
    impl_->attached_unix_ns = RealtimeNs();
    impl_->lease_ms = lease;
    impl_->lease_deadline_mono_ns = MonotonicNs() + int64_t{lease} * 1'000'000;
    reply.set_session_id(impl_->session_id);
  }
  if (stale_runner) stale_runner->Abort("the lease expired and a new session attached");
  stale_runner.reset();  // joins the task threads
  stale_runner2.reset();
  if (!stale_run.empty()) {
    LogWarning("run %s: lease expired; removing the files of %u phase(s) before attaching run %s",
               stale_run, stale_files.size(), request.run_id());
  }
  RemoveSessionPhases(stale_files);
  RemoveCreatedDirs(stale_dirs);
  LogInfo("attached: run %s from %s", request.run_id(), request.controller());
  *reply.mutable_facts() = Facts();
  return reply;
}

absl::StatusOr<v1::HeartbeatReply> AgentCore::Heartbeat(const v1::HeartbeatRequest& request) {
  // The served daemons, from /proc, outside mu: a hung daemon must not hold
  // up the heartbeat.
  std::vector<std::string> down = impl_->daemons->Down();
  absl::MutexLock lock(&impl_->mu);
  absl::Status s = impl_->CheckSession(request.session_id());
  if (!s.ok()) return s;
  impl_->lease_deadline_mono_ns = MonotonicNs() + int64_t{impl_->lease_ms} * 1'000'000;
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
  std::unique_ptr<PhaseRunner> r;
  std::vector<std::string> dirs;
  {
    absl::MutexLock lock(&impl_->mu);
    absl::Status s = impl_->CheckSession(request.session_id());
    if (!s.ok()) return s;
    LogInfo("detached: run %s", impl_->run_id);
    impl_->EndSessionLocked(&r, nullptr, &dirs);
  }
  if (r) r->Abort("the controller detached");
  r.reset();  // joins the task threads
  // mdtest removes the -d directory it created once its removal phases ran.
  RemoveCreatedDirs(dirs);
  if (impl_->options.on_session_end) impl_->options.on_session_end();
  return absl::OkStatus();
}

absl::StatusOr<v1::ClockReply> AgentCore::Clock(const v1::ClockRequest& request,
                                                int64_t receive_unix_ns) {
  {
    absl::MutexLock lock(&impl_->mu);
    absl::Status s = impl_->CheckSession(request.session_id());
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
    absl::Status s = CheckSession(request.session_id());
    if (!s.ok()) return s;
    if (options.role != v1::CLIENT) {
      return absl::FailedPreconditionError(absl::StrFormat(
          "this agent has role %s; only client agents run I/O tasks (phase %s)",
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

absl::StatusOr<std::string> AgentCore::Impl::ResolvePhaseDir(const v1::PhaseSpec& spec,
                                                             const Workload& workload) {
  auto dir = roots.Resolve(spec.dir());
  // A command phase's Prepare makes its own directory (owned by command_user).
  if (!dir.ok() && absl::IsNotFound(dir.status()) && workload.PreparesMissingDir()) {
    return roots.ResolveNew(spec.dir());
  }
  if (dir.ok() || !absl::IsNotFound(dir.status()) || !workload.CreatesMissingDir()) return dir;
  // mdtest creates its -d directory when it is missing (one level, as
  // mkdir(2)); rank 0's agent does, in Prepare, before any task starts.
  auto planned = roots.ResolveNew(spec.dir());
  if (!planned.ok()) return planned.status();
  if (spec.first_rank() != 0) return *planned;
  if (::mkdir(planned->c_str(), 0775) == 0) {
    absl::MutexLock lock(&mu);
    md_created_dirs.emplace(*planned, false);
  } else if (errno != EEXIST) {
    return absl::FailedPreconditionError(
        absl::StrFormat("phase %s: cannot create the mdtest directory %s: %s; create it or fix -d",
                        spec.phase_id(), *planned, std::strerror(errno)));
  }
  return roots.Resolve(spec.dir());
}

absl::Status AgentCore::Impl::CheckWriteSpace(const v1::PhaseSpec& spec, const Workload& workload,
                                              const std::string& dir) const {
  // This agent's share; on a shared file system the others' shares come on top.
  const uint64_t share = workload.AgentWriteBytes();
  if (share == 0) return absl::OkStatus();
  if (options.max_bytes_per_phase > 0 && share > options.max_bytes_per_phase) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "phase %s would write %s on this agent; its limit is %s (limits.max_bytes_per_phase "
        "in the agent config)",
        spec.phase_id(), HumanBytes(share), HumanBytes(options.max_bytes_per_phase)));
  }
  struct statvfs sv;
  if (spec.ignore_free_space() || ::statvfs(dir.c_str(), &sv) != 0) return absl::OkStatus();
  const uint64_t free_bytes = static_cast<uint64_t>(sv.f_bavail) * sv.f_frsize;
  if (share <= free_bytes) return absl::OkStatus();
  return WithKind(absl::ResourceExhaustedError(absl::StrFormat(
                      "phase %s needs %s in %s on this agent and only %s is free; shrink "
                      "block_size or tasks, free space, or run with --force",
                      spec.phase_id(), HumanBytes(share), dir, HumanBytes(free_bytes))),
                  v1::NO_SPACE);
}

absl::Status AgentCore::Impl::ApplyFsSettings(const v1::PhaseSpec& spec, const std::string& dir,
                                              v1::PrepareReply* reply) {
  {
    absl::MutexLock lock(&mu);
    checksums.reset();  // the previous phase's setting ends here
  }
  auto found = FileSystemFor(dir, fs);
  const bool asks = spec.set_stripe() || spec.checksums() != v1::CHECKSUMS_UNCHANGED;
  // A command phase's directory is made by its own Prepare, later: with
  // nothing to set, there is nothing to ask its file system yet.
  if (!found.ok() && absl::IsNotFound(found.status()) && !asks) return absl::OkStatus();
  if (!found.ok()) return found.status();
  std::unique_ptr<FileSystem> file_system = std::move(*found);
  reply->set_fs_name(file_system->Name());
  reply->set_fs_version(file_system->Version());
  // Everything refused before anything changes.
  RETURN_IF_ERROR(file_system->CheckSettings(spec, dir));
  if (spec.set_stripe()) {
    ASSIGN_OR_RETURN(v1::FsLayout layout, file_system->SetLayout(dir, spec));
    reply->set_stripe_layout(layout.raw());
    *reply->mutable_layout() = std::move(layout);
  }
  if (spec.checksums() != v1::CHECKSUMS_UNCHANGED) {
    ASSIGN_OR_RETURN(std::unique_ptr<FsTunableScope> scope,
                     file_system->SetChecksums(spec.checksums() == v1::CHECKSUMS_ON));
    reply->set_checksums_before(scope->Before());
    absl::MutexLock lock(&mu);
    checksums = std::move(scope);
  }
  return absl::OkStatus();
}

namespace {

// What the reply says about a prepared phase: the directory, its file
// system, the files and the parked threads.
void DescribePreparedPhase(const std::string& dir, const PhaseRunner& runner,
                           v1::PrepareReply* reply) {
  reply->set_resolved_dir(dir);
  if (struct statvfs sv; ::statvfs(dir.c_str(), &sv) == 0) {
    v1::FsStats* fs = reply->mutable_dir_fs();
    fs->set_block_bytes(sv.f_bsize);
    fs->set_blocks(sv.f_blocks);
    fs->set_blocks_free(sv.f_bfree);
    fs->set_files(sv.f_files);
    fs->set_files_free(sv.f_ffree);
  }
  for (const std::string& f : runner.files()) reply->add_files(f);
  reply->set_threads_parked(runner.spec().tasks());
}

}  // namespace

absl::StatusOr<v1::PrepareReply> AgentCore::Prepare(const v1::PrepareRequest& request) {
  const v1::PhaseSpec& spec = request.spec();
  impl_->TestDelay("prepare", request.session_id());
  if (absl::Status s = impl_->ReplaceRunnerFor(request); !s.ok()) return s;
  if (spec.tasks() > impl_->options.max_tasks) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "phase %s asks for %u tasks on this agent; its limit is %u", spec.phase_id(), spec.tasks(),
        impl_->options.max_tasks));
  }
  auto workload = MakeWorkload(spec, impl_->options.runner);
  if (!workload.ok()) return workload.status();
  // A root whose mount went away leaves the bare mount point: refused.
  RETURN_IF_ERROR(impl_->root_mounts->Check(spec.dir(), ThisHost()));
  auto dir = impl_->ResolvePhaseDir(spec, **workload);
  if (!dir.ok()) return dir.status();
  if (absl::Status s = impl_->CheckWriteSpace(spec, **workload, *dir); !s.ok()) return s;
  v1::PrepareReply reply;
  // File-system settings first: a layout applies only to files created after it.
  if (absl::Status s = impl_->ApplyFsSettings(spec, *dir, &reply); !s.ok()) return s;
  auto runner = PhaseRunner::Prepare(spec, *dir, impl_->options.runner);
  if (!runner.ok()) return runner.status();
  DescribePreparedPhase(*dir, **runner, &reply);
  // The phase's telemetry window opens at the Start from this sample: not on
  // the way from the Start's arrival to the instant.
  if (impl_->sampler != nullptr) impl_->sampler->Prime();
  absl::MutexLock lock(&impl_->mu);
  absl::Status s = impl_->CheckSessionAndRenew(request.session_id());
  if (!s.ok()) return s;  // the lease expired meanwhile; the runner is destroyed here
  if ((*workload)->CreatesFiles()) {
    impl_->session_phases[PhaseFilesKey(*dir, spec)] = {spec, *dir};
  }
  if ((*workload)->RemovesTrees()) {
    if (auto it = impl_->md_created_dirs.find(*dir); it != impl_->md_created_dirs.end()) {
      it->second = true;
    }
  }
  impl_->runner = std::move(*runner);
  return reply;
}

absl::StatusOr<v1::CacheReply> AgentCore::CacheBarrier(const v1::CacheRequest& request) {
  {
    absl::MutexLock lock(&impl_->mu);
    absl::Status s = impl_->CheckSessionAndRenew(request.session_id());
    if (!s.ok()) return s;
  }
  impl_->TestDelay("cache", request.session_id());
  CacheControl control{.allow_drop_caches = impl_->options.allow_drop_caches,
                       .drop_caches_path = impl_->options.drop_caches_path,
                       .fs = &impl_->fs,
                       .daemons = impl_->daemons.get()};
  ASSIGN_OR_RETURN(v1::CacheReply reply, DropCaches(request, control));
  // After a sync and a drop: the phase's window starts here, not at Prepare.
  if (impl_->sampler != nullptr) impl_->sampler->Prime();
  return reply;
}

absl::Status AgentCore::Start(const v1::StartRequest& request, PhaseRunner::EventSink sink) {
  impl_->TestDelay("start", request.session_id());  // a slow delivery, before it is stamped
  const int64_t received_unix_ns = RealtimeNs();  // the controller's start margin
  absl::MutexLock lock(&impl_->mu);
  // Renews (minor 5): once its stream brings anything back, the controller counts the
  // Start as a heartbeat sent when the Start was.
  if (absl::Status s = impl_->CheckSessionAndRenew(request.session_id()); !s.ok()) return s;
  if (!impl_->runner || impl_->runner->spec().phase_id() != request.phase_id()) {
    return absl::FailedPreconditionError(
        absl::StrFormat("phase %s is not prepared on this agent; call Prepare first",
                        request.phase_id()));
  }
  // Spin only when asked and the tasks fit the usable cores (PhaseRunner::Start).
  int64_t spin_duration_ns = std::clamp<int64_t>(request.spin_duration_ns(), 0, 5'000'000);
  PhaseRunner::EventSink wrapped = [received_unix_ns,
                                     inner = std::move(sink)](const v1::PhaseEvent& event) {
    if (!event.has_result()) return inner(event);
    v1::PhaseEvent with = event;
    with.mutable_result()->set_start_received_unix_ns(received_unix_ns);
    inner(with);
  };
  if (TelemetrySampler* sampler = impl_->sampler.get()) {
    // The host's telemetry over the phase rides on its result. Its first
    // sample is Prepare's or the cache barrier's: none is read here.
    uint64_t window = sampler->BeginWindow(kPrimedTelemetryMaxAge);
    wrapped = [sampler, window, inner = std::move(wrapped)](const v1::PhaseEvent& event) {
      if (!event.has_result()) return inner(event);
      v1::PhaseEvent with = event;
      auto summary = sampler->EndWindow(window);
      if (summary.ok()) {
        *with.mutable_result()->mutable_telemetry() = std::move(*summary);
      } else {
        with.mutable_result()->mutable_telemetry()->add_warnings(
            std::string(summary.status().message()));
      }
      inner(with);
    };
  }
  const uint32_t progress_ms = request.progress_interval_ms() ? request.progress_interval_ms() : 1000;
  return impl_->runner->Start(request.start_at_unix_ns(), spin_duration_ns, progress_ms,
                              std::move(wrapped), request.host_agents(),
                              request.first_transfer_after_ns());
}

absl::StatusOr<v1::AbortReply> AgentCore::Abort(const v1::AbortRequest& request) {
  absl::MutexLock lock(&impl_->mu);
  absl::Status s = impl_->CheckSession(request.session_id());
  if (!s.ok()) return s;
  v1::AbortReply reply;
  if (impl_->runner && !impl_->runner->Done()) {
    reply.set_was_running(impl_->runner->Started());
    impl_->runner->Abort(request.reason().empty() ? "aborted by the controller" : request.reason());
  }
  return reply;
}

absl::StatusOr<v1::ReleaseReply> AgentCore::Release(const v1::ReleaseRequest& request) {
  absl::MutexLock lock(&impl_->mu);
  absl::Status s = impl_->CheckSession(request.session_id());
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
  std::unique_ptr<PhaseRunner> ended;
  if (!request.release_only()) impl_->TestDelay("cleanup", request.session_id());
  {
    absl::MutexLock lock(&impl_->mu);
    absl::Status s = impl_->CheckSessionAndRenew(request.session_id());
    if (!s.ok()) return s;
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
  auto dir = impl_->roots.Resolve(request.spec().dir());
  if (!dir.ok()) return dir.status();
  v1::CleanupReply reply;
  if (request.release_only()) {
    // Kept files: no longer the session's to remove if the controller dies.
    absl::MutexLock lock(&impl_->mu);
    impl_->session_phases.erase(PhaseFilesKey(*dir, request.spec()));
    return reply;
  }
  reply.set_remove_start_unix_ns(RealtimeNs());
  auto removed = RemovePhaseFiles(request.spec(), *dir);
  reply.set_remove_stop_unix_ns(RealtimeNs());
  if (!removed.ok()) return removed.status();
  reply.set_removed(*removed);
  absl::MutexLock lock(&impl_->mu);
  // Removed: nothing left to remove at lease expiry.
  impl_->session_phases.erase(PhaseFilesKey(*dir, request.spec()));
  return reply;
}

absl::StatusOr<v1::TelemetryReply> AgentCore::Telemetry(const v1::TelemetryRequest& request) {
  v1::TelemetryReply reply;
  {
    absl::MutexLock lock(&impl_->mu);
    RETURN_IF_ERROR(impl_->CheckSessionAndRenew(request.session_id()));
  }
  if (impl_->sampler == nullptr && impl_->daemons->empty()) {
    if (request.end()) reply.mutable_telemetry()->add_warnings("telemetry is off on this agent");
    return reply;
  }
  if (!request.end()) {
    // From the cache barrier's sample, as the clients' windows. The daemons'
    // counters are read outside mu (admin-socket calls).
    const uint64_t host = impl_->sampler != nullptr
                              ? impl_->sampler->BeginWindow(kPrimedTelemetryMaxAge)
                              : 0;
    const uint64_t daemons = impl_->daemons->empty() ? 0 : impl_->daemons->BeginWindow();
    absl::MutexLock lock(&impl_->mu);
    impl_->windows[request.phase_id()] = {host, daemons};
    return reply;
  }
  std::pair<uint64_t, uint64_t> window;
  {
    absl::MutexLock lock(&impl_->mu);
    auto it = impl_->windows.find(request.phase_id());
    if (it == impl_->windows.end()) {
      return absl::FailedPreconditionError(absl::StrFormat(
          "no telemetry window is open for phase %s; open it first", request.phase_id()));
    }
    window = it->second;
    impl_->windows.erase(it);
  }
  if (impl_->sampler != nullptr) {
    ASSIGN_OR_RETURN(*reply.mutable_telemetry(), impl_->sampler->EndWindow(window.first));
  }
  if (window.second != 0) {
    for (v1::DaemonStats& d : impl_->daemons->EndWindow(window.second)) {
      if (!d.warning().empty()) reply.mutable_telemetry()->add_warnings(d.warning());
      *reply.mutable_telemetry()->add_daemons() = std::move(d);
    }
  }
  return reply;
}

std::string AgentCore::State() const {
  absl::MutexLock lock(&impl_->mu);
  if (impl_->session_id.empty()) return "idle";
  if (!impl_->runner || impl_->runner->Done()) return "attached";
  return impl_->runner->Started() ? "running" : "prepared";
}

}  // namespace lockstep
