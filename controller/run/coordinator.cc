#include "controller/run/coordinator.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/clock.h"
#include "common/files.h"
#include "common/layout.h"
#include "common/names.h"
#include "common/net.h"
#include "common/tls.h"
#include "controller/run/agent_client.h"
#include "controller/run/clock_sync.h"
#include "controller/run/run_failure.h"
#include "controller/ior/ior_math.h"
#include "controller/ior/ior_report.h"
#include "controller/run/local_agents.h"
#include "controller/ior/phase_reduce.h"
#include "controller/run/run_store.h"

namespace lockstep {
namespace {

constexpr absl::Duration kRpcTimeout = absl::Seconds(30);
// Prepare may remove large files on a slow file system.
constexpr absl::Duration kPrepareTimeout = absl::Minutes(10);
constexpr absl::Duration kCacheTimeout = absl::Minutes(30);
constexpr int64_t kSpinNs = 500'000;

// A phase failed; carries what kind of failure it was.
struct Failure {
  RunFailure kind = RunFailure::kNone;
  std::string message;
  explicit operator bool() const { return kind != RunFailure::kNone; }
};

Failure Fail(RunFailure kind, std::string message) { return Failure{kind, std::move(message)}; }

// The agent no longer knows our session: it restarted, its lease expired, or
// another controller took it since (agent_core.cc CheckSession).
bool IsSessionLost(const absl::Status& s) {
  return KindOf(s) == v1::SESSION_GONE || KindOf(s) == v1::BUSY;
}

RunFailure FailureForSetup(const absl::Status& s) {
  if (IsSessionLost(s)) return RunFailure::kAgentLost;
  switch (s.code()) {
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kPermissionDenied:
    case absl::StatusCode::kNotFound:
    case absl::StatusCode::kOutOfRange:
      return RunFailure::kBadPlan;
    case absl::StatusCode::kUnavailable:
    case absl::StatusCode::kDeadlineExceeded:
    case absl::StatusCode::kUnauthenticated:
      return RunFailure::kAgentLost;
    default:
      return RunFailure::kIoError;
  }
}

// One agent's Start stream: progress events, then its result.
class PhaseStream : public grpc::ClientReadReactor<v1::PhaseEvent> {
 public:
  using ProgressFn = std::function<void(size_t, const v1::Progress&)>;

  PhaseStream(AgentClient* agent, size_t index, v1::StartRequest request, ProgressFn on_progress)
      : agent_(agent), index_(index), request_(std::move(request)),
        on_progress_(std::move(on_progress)) {
    agent_->stub()->async()->Start(&ctx_, &request_, this);
    StartRead(&event_);
    StartCall();
  }

  void OnReadDone(bool ok) override {
    if (!ok) return;  // OnDone follows
    if (event_.has_result()) {
      absl::MutexLock lock(&mu_);
      result_ = event_.result();
      have_result_ = true;
    } else if (event_.has_progress() && on_progress_) {
      on_progress_(index_, event_.progress());
    }
    StartRead(&event_);
  }

  void OnDone(const grpc::Status& status) override {
    absl::MutexLock lock(&mu_);
    status_ = status;
    done_ = true;
  }

  bool WaitDone(absl::Duration timeout) {
    absl::MutexLock lock(&mu_);
    mu_.AwaitWithTimeout(absl::Condition(&done_), timeout);
    return done_;
  }
  void Cancel() { ctx_.TryCancel(); }

  // REQUIRES: WaitDone returned true.
  absl::StatusOr<v1::PhaseResult> Result() {
    absl::MutexLock lock(&mu_);
    if (have_result_) return result_;
    if (!status_.ok()) return FromGrpcStatus(status_, agent_->address());
    return absl::UnavailableError(
        absl::StrFormat("agent %s: the phase stream ended without a result", agent_->address()));
  }

 private:
  AgentClient* agent_;
  size_t index_;
  grpc::ClientContext ctx_;
  v1::StartRequest request_;
  ProgressFn on_progress_;
  v1::PhaseEvent event_;
  absl::Mutex mu_;
  bool done_ ABSL_GUARDED_BY(mu_) = false;
  bool have_result_ ABSL_GUARDED_BY(mu_) = false;
  v1::PhaseResult result_ ABSL_GUARDED_BY(mu_);
  grpc::Status status_ ABSL_GUARDED_BY(mu_);
};

// Renews every agent's lease every lease/3 and tells who went silent.
class Heartbeater {
 public:
  Heartbeater(std::vector<AgentClient*> agents, uint32_t lease_ms, uint32_t stall_ms)
      : agents_(std::move(agents)), lease_ms_(lease_ms), stall_ms_(stall_ms),
        last_ok_ns_(agents_.size(), MonotonicNs()), lost_(agents_.size()) {
    thread_ = std::thread([this] { Loop(); });
  }
  ~Heartbeater() {
    {
      absl::MutexLock lock(&mu_);
      stop_ = true;
    }
    thread_.join();
  }
  // Index and reason of the first agent whose lease lapsed, if any (agents
  // already handled with Forget are not reported again).
  std::optional<std::pair<size_t, std::string>> Lost() {
    absl::MutexLock lock(&mu_);
    for (size_t i = 0; i < lost_.size(); ++i) {
      if (!lost_[i].empty() && !forgotten_.count(i)) return std::make_pair(i, lost_[i]);
    }
    return std::nullopt;
  }
  // Index and report of the first agent with a transfer in flight for
  // longer than stall_ms (an I/O stuck in the kernel: the agent still answers).
  std::optional<std::pair<size_t, std::string>> Stalled() {
    absl::MutexLock lock(&mu_);
    for (size_t i = 0; i < stalled_.size(); ++i) {
      if (!stalled_[i].empty() && !forgotten_.count(i)) return std::make_pair(i, stalled_[i]);
    }
    return std::nullopt;
  }
  void ClearStalled() {
    absl::MutexLock lock(&mu_);
    for (auto& s : stalled_) s.clear();
  }
  // The run goes on without agent `i`: no more heartbeats, no more reports.
  void Forget(size_t i) {
    absl::MutexLock lock(&mu_);
    forgotten_.insert(i);
    if (lost_[i].empty()) lost_[i] = "left out of the run";
  }

 private:
  void Loop() {
    const absl::Duration period = absl::Milliseconds(std::max<uint32_t>(lease_ms_ / 3, 20));
    for (;;) {
      {
        absl::MutexLock lock(&mu_);
        mu_.AwaitWithTimeout(absl::Condition(&stop_), period);
        if (stop_) return;
      }
      // Lost agents get no more heartbeats: queued in a hung agent's socket,
      // they could renew a lease that should lapse.
      std::vector<AgentClient*> targets;
      std::vector<size_t> which;
      std::vector<v1::HeartbeatRequest> reqs;
      {
        absl::MutexLock lock(&mu_);
        for (size_t i = 0; i < agents_.size(); ++i) {
          if (!lost_[i].empty()) continue;
          targets.push_back(agents_[i]);
          which.push_back(i);
          reqs.emplace_back().set_session_id(agents_[i]->session_id);
          reqs.back().set_stall_ms(stall_ms_);
        }
      }
      if (targets.empty()) continue;
      // A round waits for its slowest answer: with a deadline of the lease, one
      // hung agent would space the rounds lease + period apart and let every
      // other agent's lease expire. The period keeps rounds ≤ 2 periods apart.
      auto replies = FanOut<v1::HeartbeatRequest, v1::HeartbeatReply>(
          targets, reqs, period, LOCKSTEP_ASYNC(Heartbeat));
      int64_t now = MonotonicNs();
      absl::MutexLock lock(&mu_);
      for (size_t k = 0; k < targets.size(); ++k) {
        const size_t i = which[k];
        if (replies[k].ok()) {
          last_ok_ns_[i] = now;
          if (replies[k]->stalled_size() > 0 && stalled_[i].empty()) {
            stalled_[i] = absl::StrJoin(replies[k]->stalled(), "; ");
          }
        } else if (absl::IsFailedPrecondition(replies[k].status())) {
          lost_[i] = std::string(replies[k].status().message()) +
                     " (the agent dropped our session: restarted, or its lease expired)";
        } else if (now - last_ok_ns_[i] > int64_t{lease_ms_} * 1'000'000) {
          lost_[i] = absl::StrFormat("no heartbeat answer for %d ms (lease %u ms): %s",
                                     (now - last_ok_ns_[i]) / 1'000'000, lease_ms_,
                                     replies[k].status().message());
        }
      }
    }
  }

  std::vector<AgentClient*> agents_;
  uint32_t lease_ms_;
  uint32_t stall_ms_;
  absl::Mutex mu_;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<int64_t> last_ok_ns_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> lost_ ABSL_GUARDED_BY(mu_);
  std::set<size_t> forgotten_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> stalled_ ABSL_GUARDED_BY(mu_) = std::vector<std::string>(agents_.size());
  std::thread thread_;
};

class Coordinator {
 public:
  Coordinator(const Plan& plan, const RunOptions& options) : plan_(plan), options_(options) {}
  RunOutcome Run();

 private:
  void Print(const std::string& text) {
    report_ += text;
    if (options_.print) options_.print(text);
  }
  // IOR's layout (IorReport's text): all of it, or with ior_text off (mdtest
  // prints its own) only Lockstep's '#' lines.
  void PrintIor(const std::string& text) {
    if (options_.ior_text) return Print(text);
    std::string own;
    for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
      if (absl::StartsWith(line, "#")) absl::StrAppend(&own, line, "\n");
    }
    if (!own.empty()) Print(own);
  }
  Failure SetUpAgents();
  Failure RunTest(uint32_t test_id);
  Failure RunPhase(const PhasePlan& phase, uint32_t test_id, uint32_t rep, v1::TestRecord* test,
                   std::vector<const v1::PhaseRecord*>* accepted);
  Failure RunPhaseOnce(const PhasePlan& phase, const v1::PhaseSpec& base, v1::PhaseRecord* pr);
  Failure CacheBarrier(const std::string& mode, const std::string& phase_id,
                       std::map<AgentClient*, v1::CacheReply>* done);
  Failure MeasureClocks();
  std::vector<std::string> TelemetryLines(const v1::PhaseRecord& pr) const;
  Failure RemoveFiles(const std::vector<v1::PhaseSpec>& specs, uint32_t rep, bool timed,
                      v1::PhaseRecord* last_phase);
  void AbortAll(const std::string& phase_id, const std::string& reason);
  // Records that `agent` is gone (status "lost" in run.json). Lost agents get
  // no further calls: a hung one would hold every fan-out until its deadline,
  // and its own lease watchdog removes its files.
  void MarkLost(AgentClient* agent, const std::string& reason);
  // Takes lost agents out of the run (on_agent_loss = "continue").
  void DropLostAgents();
  // Set once an agent was lost and the run went on without it.
  Failure partial_;
  std::vector<AgentClient*> Reachable(const std::vector<AgentClient*>& agents) const;
  // Agents lost because they no longer know our session but still answer
  // (restarted): the new process does not know what the old one wrote, so
  // attach again only to remove the files of `bases`, then detach.
  void CleanUpRestarted(const std::vector<v1::PhaseSpec>& bases);
  // Tells the agents that kept files (keep = true) are no longer theirs to
  // remove if this controller goes silent.
  void ReleaseFiles(const std::vector<v1::PhaseSpec>& bases);
  // Cleanup (or, with release_only, Release) of `base`'s files on every
  // client not lost; *targets receives the agents asked, in reply order.
  std::vector<absl::StatusOr<v1::CleanupReply>> CleanupOnClients(
      const v1::PhaseSpec& base, bool release_only, std::vector<AgentClient*>* targets);
  std::vector<v1::PhaseSpec> ClientSpecs(const v1::PhaseSpec& base);
  v1::PhaseSpec BaseSpec(const PhasePlan& phase, uint32_t test_id, uint32_t rep);
  bool Interrupted() const { return options_.interrupted && options_.interrupted->load(); }
  void Finish(RunOutcome* outcome, const Failure& failure);

  const Plan& plan_;
  const RunOptions& options_;
  std::unique_ptr<LocalAgents> local_;
  std::unique_ptr<RunStore> store_;
  std::vector<std::unique_ptr<AgentClient>> agents_;
  std::vector<AgentClient*> clients_;  // role client, in rank order
  std::vector<AgentClient*> servers_;  // roles oss and mds
  std::vector<AgentClient*> all_;
  std::vector<ClockEstimate> clocks_;  // by index in agents_
  std::map<AgentClient*, size_t> index_;
  std::unique_ptr<Heartbeater> heartbeat_;
  std::set<AgentClient*> lost_;
  std::set<AgentClient*> restarted_;  // lost with "no session": they answer
  std::string controller_name_;       // "host pid N", sent with Attach
  v1::RunRecord record_;
  std::string report_;  // everything printed, for summary.txt
  IorReport ior_{options_.ior_verbose};
  v1::TestRecord* current_test_ = nullptr;  // the test RunTest is running
};

Failure Coordinator::SetUpAgents() {
  std::vector<AgentPlan> plans = plan_.agents;
  int local = options_.local_agents;
  if (local == 0 && plans.empty()) local = 2;
  bool insecure = options_.insecure;
  if (local > 0) {
    LocalAgentsOptions lo;
    lo.count = local;
    lo.root = options_.local_root;
    // Local agents trust the plan's absolute directories; relative ones go
    // below the temporary root and must stay there.
    std::set<std::string> extra;
    for (const PhasePlan& p : plan_.phases) {
      if (!p.dir.empty() && p.dir[0] == '/') {
        const std::string dir = std::filesystem::path(p.dir).lexically_normal().string();
        const std::string& root = options_.local_root;
        // Below --local_root already (mdtest's -d, made by the agent): no root of its own.
        if (root.empty() || (dir != root && dir.rfind(root + "/", 0) != 0)) extra.insert(dir);
        continue;
      }
      const std::string norm = std::filesystem::path(p.dir).lexically_normal().string();
      if (norm == ".." || norm.rfind("../", 0) == 0) {
        return Fail(RunFailure::kBadPlan,
                    absl::StrFormat("phase '%s': dir \"%s\" climbs out of the local agents' root; "
                                    "with --local use an absolute dir, or --local_root DIR",
                                    p.name, p.dir));
      }
    }
    lo.extra_roots.assign(extra.begin(), extra.end());
    auto started = LocalAgents::Start(lo);
    if (!started.ok()) return Fail(RunFailure::kConnect, std::string(started.status().message()));
    local_ = std::move(*started);
    plans.clear();
    for (const std::string& a : local_->addresses()) plans.push_back({a, v1::CLIENT});
    insecure = true;  // loopback only, by construction
  }
  std::shared_ptr<grpc::ChannelCredentials> creds = options_.credentials;
  if (insecure) {
    for (const AgentPlan& a : plans) {
      auto hp = SplitHostPort(a.address);
      if (!hp.ok() || !IsLoopbackHost(hp->first)) {
        return Fail(RunFailure::kBadPlan,
                    absl::StrFormat("--insecure is allowed only for loopback agents, and %s is "
                                    "not one: set up certificates (deploy/certs.sh) and pass "
                                    "--tls_dir",
                                    a.address));
      }
    }
    creds = grpc::InsecureChannelCredentials();
  } else if (!creds) {
    return Fail(RunFailure::kBadPlan,
                "no TLS material: pass --tls_dir DIR (made by deploy/certs.sh), or --insecure "
                "for agents on loopback");
  }
  for (const AgentPlan& a : plans) {
    agents_.push_back(std::make_unique<AgentClient>(a.address, a.role, creds));
    all_.push_back(agents_.back().get());
    index_[agents_.back().get()] = agents_.size() - 1;
    if (a.role == v1::CLIENT) {
      clients_.push_back(agents_.back().get());
    } else {
      servers_.push_back(agents_.back().get());
    }
  }
  // Connect to all at once: the slowest decides, not the sum.
  std::vector<absl::Status> connected(agents_.size());
  std::vector<std::thread> threads;
  for (size_t i = 0; i < agents_.size(); ++i) {
    threads.emplace_back([&, i] {
      connected[i] = agents_[i]->Connect(absl::Milliseconds(plan_.connect_timeout_ms));
    });
  }
  for (auto& t : threads) t.join();
  std::vector<std::string> unreachable;
  for (size_t i = 0; i < agents_.size(); ++i) {
    v1::AgentRecord* ar = record_.add_agents();
    ar->set_address(agents_[i]->address());
    ar->set_role(agents_[i]->role());
    ar->set_status(connected[i].ok() ? "ok" : "unreachable");
    if (!connected[i].ok()) {
      ar->set_error(std::string(connected[i].message()));
      unreachable.push_back(std::string(connected[i].message()));
    }
  }
  if (!unreachable.empty()) return Fail(RunFailure::kConnect, absl::StrJoin(unreachable, "\n"));

  char host[256] = {0};
  ::gethostname(host, sizeof(host) - 1);
  controller_name_ = absl::StrFormat("%s pid %d", host, ::getpid());
  std::vector<v1::AttachRequest> attach(agents_.size());
  for (auto& r : attach) {
    r.set_run_id(record_.run_id());
    r.set_controller(controller_name_);
    r.set_lease_ms(plan_.lease_ms);
  }
  auto replies = FanOut<v1::AttachRequest, v1::AttachReply>(all_, attach, kRpcTimeout,
                                                            LOCKSTEP_ASYNC(Attach));
  std::vector<std::string> refused;
  for (size_t i = 0; i < agents_.size(); ++i) {
    v1::AgentRecord* ar = record_.mutable_agents(static_cast<int>(i));
    if (!replies[i].ok()) {
      ar->set_status("refused");
      ar->set_error(std::string(replies[i].status().message()));
      refused.push_back(std::string(replies[i].status().message()));
      continue;
    }
    agents_[i]->session_id = replies[i]->session_id();
    agents_[i]->facts = replies[i]->facts();
    *ar->mutable_facts() = replies[i]->facts();
    if (replies[i]->facts().role() != agents_[i]->role()) {
      refused.push_back(absl::StrFormat(
          "agent %s runs with role %s but the plan says %s; fix the plan or the agent's --role",
          agents_[i]->address(), RoleName(replies[i]->facts().role()),
          RoleName(agents_[i]->role())));
    }
  }
  if (!refused.empty()) return Fail(RunFailure::kConnect, absl::StrJoin(refused, "\n"));

  Failure f = MeasureClocks();
  if (f) return f;
  heartbeat_ = std::make_unique<Heartbeater>(all_, plan_.lease_ms, plan_.io_stall_timeout_ms);
  return {};
}

Failure Coordinator::MeasureClocks() {
  // Map every agent timestamp into our time base; re-measured before every
  // test so that drift over a long run stays small.
  std::vector<ClockEstimate> clocks = clocks_;
  clocks.resize(agents_.size());
  std::vector<absl::Status> errors(agents_.size());
  std::vector<std::thread> threads;
  for (size_t i = 0; i < agents_.size(); ++i) {
    if (lost_.count(agents_[i].get())) continue;  // left out of the run; keep its last estimate
    threads.emplace_back([&, i] {
      auto est = EstimateClock(agents_[i].get(), 8);
      if (est.ok()) {
        clocks[i] = *est;
      } else {
        errors[i] = est.status();
      }
    });
  }
  for (auto& t : threads) t.join();
  std::vector<std::string> bad;
  for (size_t i = 0; i < agents_.size(); ++i) {
    if (lost_.count(agents_[i].get())) continue;
    if (!errors[i].ok()) return Fail(RunFailure::kAgentLost, std::string(errors[i].message()));
    v1::ClockEstimate* ce = record_.mutable_agents(static_cast<int>(i))->mutable_clock();
    ce->set_offset_ns(clocks[i].offset_ns);
    ce->set_delay_ns(clocks[i].delay_ns);
    ce->set_uncertainty_ns(clocks[i].delay_ns / 2);
    ce->set_samples(clocks[i].samples);
    const int64_t bound_ns = int64_t{plan_.max_clock_uncertainty_us} * 1000;
    if (bound_ns > 0 && clocks[i].delay_ns / 2 > bound_ns) {
      bad.push_back(absl::StrFormat(
          "agent %s: clock offset uncertainty %.1f us (half the best of %u round trips of %.1f "
          "us) exceeds max_clock_uncertainty_us = %u; the network is too slow or loaded for "
          "that bound",
          agents_[i]->address(), clocks[i].delay_ns / 2e3, clocks[i].samples,
          clocks[i].delay_ns / 1e3, plan_.max_clock_uncertainty_us));
    }
  }
  clocks_ = clocks;
  if (!bad.empty()) {
    if (plan_.on_clock == "fail") return Fail(RunFailure::kConnect, absl::StrJoin(bad, "\n"));
    for (const std::string& b : bad) Print(IorReport::Note("warning: " + b));
  }
  return {};
}

Failure Coordinator::CacheBarrier(const std::string& mode, const std::string& phase_id,
                                  std::map<AgentClient*, v1::CacheReply>* done) {
  if (mode == "none") return {};
  std::vector<AgentClient*> servers = mode == "all" ? servers_ : std::vector<AgentClient*>{};
  // The order people follow by hand: sync clients (their dirty data goes to
  // the servers), then sync servers, then drop caches everywhere.
  auto step = [&](const std::vector<AgentClient*>& who, bool sync, uint32_t drop,
                  bool lru) -> Failure {
    if (who.empty()) return {};
    std::vector<v1::CacheRequest> reqs(who.size());
    for (size_t i = 0; i < who.size(); ++i) {
      reqs[i].set_session_id(who[i]->session_id);
      reqs[i].set_phase_id(phase_id);
      reqs[i].set_sync(sync);
      reqs[i].set_drop_mode(drop);
      reqs[i].set_required(plan_.cache_required);
      reqs[i].set_lustre_lru_clear(lru && who[i]->role() == v1::CLIENT);
    }
    auto replies = FanOut<v1::CacheRequest, v1::CacheReply>(who, reqs, kCacheTimeout,
                                                           LOCKSTEP_ASYNC(CacheBarrier));
    for (size_t i = 0; i < who.size(); ++i) {
      if (!replies[i].ok()) {
        return Fail(absl::IsPermissionDenied(replies[i].status()) ||
                            absl::IsFailedPrecondition(replies[i].status())
                        ? RunFailure::kBadPlan
                        : RunFailure::kAgentLost,
                    absl::StrFormat("cache barrier before %s: %s", phase_id,
                                    replies[i].status().message()));
      }
      v1::CacheReply& acc = (*done)[who[i]];
      if (replies[i]->synced()) {
        acc.set_synced(true);
        acc.set_sync_duration_ns(replies[i]->sync_duration_ns());
      }
      if (replies[i]->dropped()) {
        acc.set_dropped(true);
        acc.set_drop_duration_ns(replies[i]->drop_duration_ns());
      }
      if (replies[i]->lru_cleared()) {
        acc.set_lru_cleared(true);
        acc.set_lru_duration_ns(replies[i]->lru_duration_ns());
      }
      if (!replies[i]->warning().empty()) {
        acc.set_warning(replies[i]->warning());
        Print(IorReport::Note(absl::StrFormat("warning: %s %s: %s", RoleName(who[i]->role()),
                              who[i]->address(), replies[i]->warning())));
      }
    }
    return {};
  };
  std::vector<AgentClient*> everyone = clients_;
  everyone.insert(everyone.end(), servers.begin(), servers.end());
  if (Failure f = step(clients_, true, 0, false)) return f;
  if (Failure f = step(servers, true, 0, false)) return f;
  return step(everyone, false, plan_.drop_mode, plan_.lustre_lru_clear);
}

std::vector<std::string> Coordinator::TelemetryLines(const v1::PhaseRecord& pr) const {
  // One line per role, like the seed reports: "oss (2): sys 50%, iowait 10%".
  struct Acc {
    int n = 0;
    double busy_cores = 0, cores = 0, user = 0, sys = 0, iowait = 0;
    double disk_mb_s = 0, net_mb_s = 0;
  };
  std::map<v1::Role, Acc> by_role;
  std::map<v1::Role, std::set<std::string>> hosts_seen;
  std::map<std::string, std::string> host_of;
  for (const auto& a : agents_) host_of[a->address()] = a->facts.hostname();
  for (const v1::AgentPhaseRecord& a : pr.agents()) {
    // /proc/stat has 10 ms ticks: over a shorter window the shares mean little.
    if (!a.has_telemetry() || a.telemetry().samples() == 0 || a.telemetry().interval_s() < 0.2) {
      continue;
    }
    // Several agents on one host see the same host: count it once.
    if (!hosts_seen[a.role()].insert(host_of[a.address()]).second) continue;
    const v1::TelemetrySummary& t = a.telemetry();
    Acc& acc = by_role[a.role()];
    ++acc.n;
    acc.busy_cores += t.cpu().busy_cores().mean();
    acc.cores += t.cpu().cores();
    acc.user += t.cpu().user_pct().mean();
    acc.sys += t.cpu().system_pct().mean();
    acc.iowait += t.cpu().iowait_pct().mean();
    for (const auto& d : t.disks()) acc.disk_mb_s += d.read_mb_s().mean() + d.write_mb_s().mean();
    for (const auto& n : t.nets()) acc.net_mb_s += n.rx_mb_s().mean() + n.tx_mb_s().mean();
  }
  std::vector<std::string> lines;
  for (const auto& [role, acc] : by_role) {
    lines.push_back(absl::StrFormat(
        "  %s (%d host%s): cpu %.0f%% user, %.0f%% sys, %.0f%% iowait; busy %.1f of %.0f cores; "
        "disk %.1f MB/s, net %.1f MB/s",
        role == v1::CLIENT ? "clients" : RoleName(role), acc.n, acc.n == 1 ? "" : "s",
        acc.user / acc.n,
        acc.sys / acc.n, acc.iowait / acc.n, acc.busy_cores, acc.cores, acc.disk_mb_s,
        acc.net_mb_s));
  }
  return lines;
}

v1::PhaseSpec Coordinator::BaseSpec(const PhasePlan& phase, uint32_t test_id, uint32_t rep) {
  v1::PhaseSpec s;
  s.set_phase_id(absl::StrFormat("t%u/r%u/%s", test_id, rep, phase.name));
  s.set_phase_name(phase.name);
  s.set_kind(phase.kind);
  s.set_test_id(test_id);
  s.set_repetition(rep);
  s.set_dir(phase.dir);
  s.set_file_name(phase.file_name);
  s.set_file_per_process(phase.file_per_process);
  uint32_t tpa = plan_.TasksPerAgent(phase, test_id);
  s.set_tasks(tpa);
  s.set_total_tasks(tpa * static_cast<uint32_t>(clients_.size()));
  s.set_transfer_bytes(phase.transfer_bytes);
  s.set_block_bytes(phase.block_bytes);
  s.set_segments(phase.segments);
  s.set_fsync_at_end(phase.fsync);
  s.set_fsync_per_transfer(phase.fsync_per_transfer);
  s.set_direct(phase.direct);
  s.set_verify(phase.verify);
  s.set_pattern_seed(plan_.seed);
  // IOR -C (-Q N): read what the tasks N agents further wrote. Ranks are
  // block-mapped to agents, so that is N × tasks per agent ranks further
  // (IOR's shift for a by-slot mapping); with one agent it is the task itself.
  if (phase.reorder_tasks) {
    s.set_reorder_node_offset(phase.reorder_node_offset);
    s.set_reorder_shift(static_cast<uint32_t>(
        (uint64_t{phase.reorder_node_offset} * tpa) % std::max<uint32_t>(s.total_tasks(), 1)));
  }
  s.set_set_stripe(phase.set_stripe);
  s.set_stripe_count(phase.stripe_count);
  s.set_stripe_size_bytes(phase.stripe_size_bytes);
  s.set_stripe_index(phase.stripe_index);
  s.set_stripe_pool(phase.stripe_pool);
  s.set_checksums(phase.checksums);
  s.set_ignore_free_space(options_.force);
  SetWorkloadFields(phase, plan_.seed, &s);
  return s;
}

std::vector<v1::PhaseSpec> Coordinator::ClientSpecs(const v1::PhaseSpec& base) {
  std::vector<v1::PhaseSpec> out;
  for (size_t i = 0; i < clients_.size(); ++i) {
    v1::PhaseSpec s = base;
    s.set_first_rank(static_cast<uint32_t>(i) * base.tasks());
    out.push_back(s);
  }
  return out;
}

void Coordinator::DropLostAgents() {
  auto drop = [&](std::vector<AgentClient*>* v) {
    v->erase(std::remove_if(v->begin(), v->end(),
                            [&](AgentClient* a) {
                              if (!lost_.count(a)) return false;
                              heartbeat_->Forget(index_[a]);
                              return true;
                            }),
             v->end());
  };
  drop(&clients_);
  drop(&servers_);
}

void Coordinator::MarkLost(AgentClient* agent, const std::string& reason) {
  if (!lost_.insert(agent).second) return;
  if (reason.find("no session") != std::string::npos) restarted_.insert(agent);
  v1::AgentRecord* ar = record_.mutable_agents(static_cast<int>(index_[agent]));
  ar->set_status("lost");
  ar->set_error(reason);
}

std::vector<AgentClient*> Coordinator::Reachable(const std::vector<AgentClient*>& agents) const {
  std::vector<AgentClient*> out;
  for (AgentClient* a : agents) {
    if (!lost_.count(a)) out.push_back(a);
  }
  return out;
}

std::vector<absl::StatusOr<v1::CleanupReply>> Coordinator::CleanupOnClients(
    const v1::PhaseSpec& base, bool release_only, std::vector<AgentClient*>* targets) {
  // Each client handles the files of its own ranks; lost agents clean up by
  // themselves when their lease expires.
  std::vector<v1::PhaseSpec> specs = ClientSpecs(base);
  std::vector<v1::CleanupRequest> reqs;
  for (size_t i = 0; i < clients_.size(); ++i) {
    if (lost_.count(clients_[i])) continue;
    targets->push_back(clients_[i]);
    v1::CleanupRequest& r = reqs.emplace_back();
    r.set_session_id(clients_[i]->session_id);
    *r.mutable_spec() = specs[i];
    r.set_release_only(release_only);
  }
  return FanOut<v1::CleanupRequest, v1::CleanupReply>(
      *targets, reqs, release_only ? kRpcTimeout : kPrepareTimeout, LOCKSTEP_ASYNC(Cleanup));
}

void Coordinator::ReleaseFiles(const std::vector<v1::PhaseSpec>& bases) {
  // Best effort: a failure only means a crash later would remove them.
  for (const v1::PhaseSpec& base : bases) {
    std::vector<AgentClient*> targets;
    CleanupOnClients(base, /*release_only=*/true, &targets);
  }
}

void Coordinator::CleanUpRestarted(const std::vector<v1::PhaseSpec>& bases) {
  for (size_t i = 0; i < clients_.size(); ++i) {
    AgentClient* c = clients_[i];
    if (!restarted_.count(c)) continue;
    v1::AttachRequest attach;
    attach.set_run_id(record_.run_id());
    attach.set_controller(controller_name_ + " (removing files after a failure)");
    attach.set_lease_ms(plan_.lease_ms);
    auto attached = FanOut<v1::AttachRequest, v1::AttachReply>({c}, {attach}, absl::Seconds(5),
                                                               LOCKSTEP_ASYNC(Attach));
    if (!attached[0].ok()) continue;  // taken by someone else, or gone again
    for (const v1::PhaseSpec& base : bases) {
      v1::CleanupRequest req;
      req.set_session_id(attached[0]->session_id());
      *req.mutable_spec() = ClientSpecs(base)[i];
      FanOut<v1::CleanupRequest, v1::CleanupReply>({c}, {req}, absl::Seconds(30),
                                                   LOCKSTEP_ASYNC(Cleanup));
    }
    v1::DetachRequest detach;
    detach.set_session_id(attached[0]->session_id());
    FanOut<v1::DetachRequest, v1::DetachReply>({c}, {detach}, absl::Seconds(5),
                                               LOCKSTEP_ASYNC(Detach));
  }
}

void Coordinator::AbortAll(const std::string& phase_id, const std::string& reason) {
  std::vector<AgentClient*> targets = Reachable(clients_);
  std::vector<v1::AbortRequest> reqs(targets.size());
  for (size_t i = 0; i < targets.size(); ++i) {
    reqs[i].set_session_id(targets[i]->session_id);
    reqs[i].set_phase_id(phase_id);
    reqs[i].set_reason(reason);
  }
  FanOut<v1::AbortRequest, v1::AbortReply>(targets, reqs, absl::Seconds(5), LOCKSTEP_ASYNC(Abort));
}

Failure Coordinator::RemoveFiles(const std::vector<v1::PhaseSpec>& bases, uint32_t rep,
                                 bool timed, v1::PhaseRecord* last_phase) {
  int64_t start = INT64_MAX, stop = 0;
  std::vector<std::string> errors;
  for (const v1::PhaseSpec& base : bases) {
    std::vector<AgentClient*> targets;
    auto replies = CleanupOnClients(base, /*release_only=*/false, &targets);
    for (size_t i = 0; i < targets.size(); ++i) {
      if (!replies[i].ok()) {
        errors.push_back(std::string(replies[i].status().message()));
        continue;
      }
      int64_t off = clocks_[index_[targets[i]]].offset_ns;
      start = std::min(start, replies[i]->remove_start_unix_ns() - off);
      stop = std::max(stop, replies[i]->remove_stop_unix_ns() - off);
    }
  }
  if (timed && stop >= start && start != INT64_MAX) {
    double seconds = static_cast<double>(stop - start) / 1e9;
    PrintIor(IorReport::FilesRemoved(seconds, rep));
    if (last_phase) {
      v1::IterationRow* r = last_phase->mutable_remove_row();
      r->set_access("remove");
      r->set_total_s(seconds);
      r->set_iter(rep);
    }
  }
  if (!errors.empty()) return Fail(RunFailure::kIoError, absl::StrJoin(errors, "\n"));
  return {};
}

Failure Coordinator::RunPhase(const PhasePlan& phase, uint32_t test_id, uint32_t rep,
                              v1::TestRecord* test,
                              std::vector<const v1::PhaseRecord*>* accepted) {
  const v1::PhaseSpec base = BaseSpec(phase, test_id, rep);
  const int max_attempts = plan_.on_skew == "repeat" ? 3 : 1;
  for (int attempt = 1;; ++attempt) {
    v1::PhaseRecord* pr = test->add_phases();
    pr->set_attempts(static_cast<uint32_t>(attempt));
    Failure f = RunPhaseOnce(phase, base, pr);
    bool repeat = false;
    std::string why;
    if (!f && pr->skew_exceeded()) {
      why = absl::StrFormat(
          "start skew %.1f us (± %.1f us of clock uncertainty) of %s exceeds max_start_skew_us = "
          "%u",
          pr->start_skew_ns() / 1e3, pr->start_skew_uncertainty_ns() / 1e3, base.phase_id(),
          plan_.max_start_skew_us);
      if (plan_.on_skew == "fail") {
        f = Fail(RunFailure::kSkew, why);
        pr->set_ok(false);
        pr->set_error(why);
      } else if (attempt < max_attempts) {
        pr->set_error("superseded: " + why);  // before the journal sees it
        repeat = true;
      }
    }
    absl::Status js = store_->AppendJournal(*pr);
    if (!js.ok()) Print(IorReport::Note(absl::StrFormat("warning: %s", js.message())));
    if (f) return f;
    if (repeat) {
      Print(IorReport::Note(
          absl::StrFormat("%s; repeating (attempt %d of %d)", why, attempt + 1, max_attempts)));
      continue;
    }
    PrintIor(ior_.PhaseDone(*pr));
    accepted->push_back(pr);
    return {};
  }
}

Failure Coordinator::RunPhaseOnce(const PhasePlan& phase, const v1::PhaseSpec& base,
                                  v1::PhaseRecord* pr) {
  std::vector<v1::PhaseSpec> specs = ClientSpecs(base);
  const uint32_t rep = base.repetition();
  pr->set_phase_id(base.phase_id());
  pr->set_phase(phase.name);
  pr->set_kind(phase.kind);
  pr->set_repetition(rep);
  *pr->mutable_spec() = base;
  const std::string cache = plan_.CacheMode(phase);
  pr->set_cache(cache);

  // 1. Prepare everywhere before anyone starts (IOR's barrier before open).
  std::vector<v1::PrepareRequest> prep(clients_.size());
  for (size_t i = 0; i < clients_.size(); ++i) {
    prep[i].set_session_id(clients_[i]->session_id);
    *prep[i].mutable_spec() = specs[i];
  }
  pr->set_prepare_sent_unix_ns(RealtimeNs());
  auto prepared = FanOut<v1::PrepareRequest, v1::PrepareReply>(clients_, prep, kPrepareTimeout,
                                                               LOCKSTEP_ASYNC(Prepare));
  pr->set_prepared_unix_ns(RealtimeNs());
  for (size_t i = 0; i < clients_.size(); ++i) {
    if (!prepared[i].ok()) {
      const absl::Status& st = prepared[i].status();
      const RunFailure code = FailureForSetup(st);
      std::string message =
          code == RunFailure::kAgentLost
              ? absl::StrFormat("agent %s lost before %s: %s", clients_[i]->address(),
                                base.phase_id(), st.message())
              : absl::StrFormat("phase %s: %s", base.phase_id(), st.message());
      if (code == RunFailure::kAgentLost) MarkLost(clients_[i], std::string(st.message()));
      AbortAll(base.phase_id(), "another agent failed to prepare");
      pr->set_ok(false);
      pr->set_error(message);
      return Fail(code, message);
    }
  }

  if (!prepared.empty()) *pr->mutable_dir_fs() = prepared[0]->dir_fs();
  PrintIor(ior_.TestStarted(*current_test_, *pr));

  // 2. Cache barrier: sync and drop on clients (and servers) after the
  // files are laid out and before the start.
  std::map<AgentClient*, v1::CacheReply> cache_done;
  if (Failure f = CacheBarrier(cache, base.phase_id(), &cache_done)) {
    AbortAll(base.phase_id(), "cache barrier failed");
    pr->set_ok(false);
    pr->set_error(f.message);
    return f;
  }
  if (Interrupted()) {
    AbortAll(base.phase_id(), "interrupted");
    return Fail(RunFailure::kInterrupted, "interrupted before the start of " + base.phase_id());
  }

  // 3. Servers take part through telemetry windows around the phase.
  auto server_window = [&](bool end) {
    std::vector<v1::TelemetryRequest> reqs(servers_.size());
    for (size_t i = 0; i < servers_.size(); ++i) {
      reqs[i].set_session_id(servers_[i]->session_id);
      reqs[i].set_phase_id(base.phase_id());
      reqs[i].set_end(end);
    }
    return FanOut<v1::TelemetryRequest, v1::TelemetryReply>(servers_, reqs, kRpcTimeout,
                                                           LOCKSTEP_ASYNC(Telemetry));
  };
  if (!servers_.empty()) server_window(false);

  // 4. One instant for all, far enough ahead for the slowest to hear of it.
  int64_t max_delay = 0;
  for (AgentClient* c : clients_) max_delay = std::max(max_delay, clocks_[index_[c]].delay_ns);
  // 10 ms covers scheduling on a busy controller; 4 round trips cover the
  // network; the per-agent term covers starting the streams one by one.
  const int64_t lead_ns = 10'000'000 + 4 * max_delay + 200'000 * int64_t(clients_.size());
  const int64_t start_at = RealtimeNs() + lead_ns;
  pr->set_start_at_unix_ns(start_at);
  // Spin only where a host's tasks fit on its cores.
  std::map<std::string, uint32_t> tasks_on_host;
  for (AgentClient* c : clients_) tasks_on_host[c->facts.hostname()] += base.tasks();
  std::vector<std::unique_ptr<PhaseStream>> calls;
  std::vector<v1::Progress> progress(clients_.size());
  absl::Mutex progress_mu;
  const int64_t phase_t0 = MonotonicNs();
  for (size_t i = 0; i < clients_.size(); ++i) {
    AgentClient* c = clients_[i];
    v1::StartRequest req;
    req.set_session_id(c->session_id);
    req.set_phase_id(base.phase_id());
    req.set_start_at_unix_ns(start_at + clocks_[index_[c]].offset_ns);
    req.set_progress_interval_ms(plan_.progress_interval_ms);
    bool fits = tasks_on_host[c->facts.hostname()] <= std::max<uint32_t>(c->facts.cores(), 1);
    req.set_spin_duration_ns(fits ? kSpinNs : 0);
    calls.push_back(std::make_unique<PhaseStream>(
        c, i, req, [&](size_t idx, const v1::Progress& p) {
          absl::MutexLock lock(&progress_mu);
          progress[idx] = p;
        }));
  }

  // 5. Wait for every result; watch leases and interrupts meanwhile.
  Failure failure;
  const uint64_t expected = AggregateBytes(base);
  int64_t next_plain_ns = phase_t0 + 10'000'000'000;
  for (size_t i = 0; i < calls.size(); ++i) {
    while (!calls[i]->WaitDone(absl::Milliseconds(100))) {
      uint64_t bytes = 0;
      {
        absl::MutexLock lock(&progress_mu);
        for (const auto& p : progress) bytes += p.bytes();
      }
      const int64_t now = MonotonicNs();
      double elapsed = static_cast<double>(now - phase_t0) / 1e9;
      double rate = elapsed > 0 ? static_cast<double>(bytes) / elapsed / (1 << 20) : 0;
      double eta = rate > 0 && expected > bytes
                       ? static_cast<double>(expected - bytes) / (1 << 20) / rate
                       : 0;
      double cpu = 0, iowait = 0;
      int reporting = 0;
      {
        absl::MutexLock lock(&progress_mu);
        for (const auto& p : progress) {
          if (p.elapsed_ns() == 0) continue;
          cpu += p.cpu_busy_pct();
          iowait += p.cpu_iowait_pct();
          ++reporting;
        }
      }
      std::string line = absl::StrFormat(
          "%s: %.0f MiB/s, %.1f%%, %.1f s elapsed, ETA %.0f s; clients cpu %.0f%%, iowait %.0f%%",
          base.phase_id(), rate,
          expected ? 100.0 * static_cast<double>(bytes) / static_cast<double>(expected) : 0.0,
          elapsed, eta, reporting ? cpu / reporting : 0.0, reporting ? iowait / reporting : 0.0);
      if (options_.progress) {
        options_.progress(line);
      } else if (now >= next_plain_ns && options_.print_progress_lines) {
        // Not a terminal: a plain line every 10 s, kept out of the report.
        options_.print_progress_lines(line);
        next_plain_ns = now + 10'000'000'000;
      }
      if (auto lost = heartbeat_->Lost(); lost && !failure) {
        failure = Fail(RunFailure::kAgentLost, absl::StrFormat("agent %s lost during %s: %s",
                                                       all_[lost->first]->address(),
                                                       base.phase_id(), lost->second));
        MarkLost(all_[lost->first], lost->second);
        AbortAll(base.phase_id(), failure.message);
        for (auto& c : calls) c->Cancel();
      }
      if (auto stalled = heartbeat_->Stalled(); stalled && !failure) {
        // A task stuck in the kernel (a hung mount): the agent still answers
        // but cannot finish or clean up; it counts as lost.
        AgentClient* hung = all_[stalled->first];
        std::string why = absl::StrFormat("I/O stalled beyond io_stall_timeout_ms = %u: %s",
                                          plan_.io_stall_timeout_ms, stalled->second);
        failure = Fail(RunFailure::kAgentLost, absl::StrFormat("agent %s lost during %s: %s",
                                                       hung->address(), base.phase_id(), why));
        MarkLost(hung, why);
        AbortAll(base.phase_id(), failure.message);
        for (auto& c : calls) c->Cancel();
      }
      if (Interrupted() && !failure) {
        failure = Fail(RunFailure::kInterrupted, "interrupted during " + base.phase_id());
        AbortAll(base.phase_id(), "interrupted by the operator");
      }
    }
  }
  if (options_.progress) options_.progress("");
  std::vector<absl::StatusOr<v1::TelemetryReply>> server_telemetry;
  if (!servers_.empty()) server_telemetry = server_window(true);

  // 6. Collect, map into our time base, reduce.
  std::vector<v1::TaskResult> all_tasks;
  for (size_t i = 0; i < calls.size(); ++i) {
    AgentClient* c = clients_[i];
    const int64_t off = clocks_[index_[c]].offset_ns;
    v1::AgentPhaseRecord* apr = pr->add_agents();
    apr->set_address(c->address());
    apr->set_role(c->role());
    apr->set_stripe_layout(prepared[i]->stripe_layout());
    if (cache_done.count(c)) *apr->mutable_cache() = cache_done[c];
    auto result = calls[i]->Result();
    if (!result.ok()) {
      apr->set_error(std::string(result.status().message()));
      // Our own cancellation after another agent's loss is not this agent's fault.
      if (!absl::IsCancelled(result.status()) || !failure) {
        MarkLost(c, std::string(result.status().message()));
      }
      if (!failure) {
        failure = Fail(RunFailure::kAgentLost, absl::StrFormat("agent %s lost during %s: %s", c->address(),
                                                       base.phase_id(), result.status().message()));
      }
      continue;
    }
    apr->set_series_interval_ms(result->series_interval_ms());
    *apr->mutable_series_bytes() = result->series_bytes();
    if (result->has_telemetry()) *apr->mutable_telemetry() = result->telemetry();
    for (v1::TaskResult t : result->tasks()) {
      for (auto [get, set] :
           std::initializer_list<std::pair<int64_t (v1::TaskResult::*)() const,
                                           void (v1::TaskResult::*)(int64_t)>>{
               {&v1::TaskResult::open_start_unix_ns, &v1::TaskResult::set_open_start_unix_ns},
               {&v1::TaskResult::open_stop_unix_ns, &v1::TaskResult::set_open_stop_unix_ns},
               {&v1::TaskResult::rdwr_start_unix_ns, &v1::TaskResult::set_rdwr_start_unix_ns},
               {&v1::TaskResult::rdwr_stop_unix_ns, &v1::TaskResult::set_rdwr_stop_unix_ns},
               {&v1::TaskResult::close_start_unix_ns, &v1::TaskResult::set_close_start_unix_ns},
               {&v1::TaskResult::close_stop_unix_ns, &v1::TaskResult::set_close_stop_unix_ns},
               {&v1::TaskResult::first_io_unix_ns, &v1::TaskResult::set_first_io_unix_ns},
               {&v1::TaskResult::release_unix_ns, &v1::TaskResult::set_release_unix_ns},
               {&v1::TaskResult::readback_start_unix_ns, &v1::TaskResult::set_readback_start_unix_ns},
               {&v1::TaskResult::readback_stop_unix_ns, &v1::TaskResult::set_readback_stop_unix_ns}}) {
        if ((t.*get)() != 0) (t.*set)((t.*get)() - off);
      }
      *apr->add_tasks() = t;
      all_tasks.push_back(t);
    }
    if (!result->ok()) {
      apr->set_error(result->error());
      if (!failure) {
        bool verify = false;
        for (const auto& t : result->tasks()) verify |= t.verify_failed();
        failure = Fail(verify ? RunFailure::kVerify : RunFailure::kIoError,
                       absl::StrFormat("phase %s on agent %s: %s", base.phase_id(), c->address(),
                                       result->error()));
      }
    }
  }
  for (size_t i = 0; i < servers_.size(); ++i) {
    AgentClient* sv = servers_[i];
    v1::AgentPhaseRecord* apr = pr->add_agents();
    apr->set_address(sv->address());
    apr->set_role(sv->role());
    if (cache_done.count(sv)) *apr->mutable_cache() = cache_done[sv];
    if (i < server_telemetry.size()) {
      if (server_telemetry[i].ok()) {
        *apr->mutable_telemetry() = server_telemetry[i]->telemetry();
      } else {
        apr->set_error(std::string(server_telemetry[i].status().message()));
      }
    }
  }
  std::vector<const v1::TaskResult*> ptrs;
  for (const auto& t : all_tasks) ptrs.push_back(&t);
  ReducePhase(ptrs, base, rep, pr);
  pr->set_start_skew_ns(StartSkewNs(ptrs));
  pr->set_release_skew_ns(ReleaseSkewNs(ptrs));
  {
    std::vector<int64_t> unc;
    for (AgentClient* c : clients_) unc.push_back(clocks_[index_[c]].delay_ns / 2);
    std::sort(unc.rbegin(), unc.rend());
    pr->set_start_skew_uncertainty_ns(unc.size() >= 2 ? unc[0] + unc[1] : 0);
  }
  *pr->mutable_latency() = SummarizeLatency(ptrs);
  for (const std::string& line : TelemetryLines(*pr)) pr->add_telemetry_lines(line);
  if (plan_.max_start_skew_us > 0 &&
      pr->start_skew_ns() + pr->start_skew_uncertainty_ns() >
          int64_t{plan_.max_start_skew_us} * 1000) {
    pr->set_skew_exceeded(true);
  }
  pr->set_ok(!failure);
  if (failure) pr->set_error(failure.message);
  pr->set_partial(static_cast<bool>(partial_));
  return failure;
}

Failure Coordinator::RunTest(uint32_t test_id) {
  v1::TestRecord* test = record_.add_tests();
  test->set_test_id(test_id);
  const PhasePlan& first = plan_.phases.front();
  uint32_t tpa = plan_.TasksPerAgent(first, test_id);
  test->set_tasks_per_agent(tpa);
  test->set_total_tasks(tpa * static_cast<uint32_t>(clients_.size()));
  test->set_client_agents(static_cast<uint32_t>(clients_.size()));

  test->set_repetitions(plan_.repetitions);
  test->set_started_at(FormatRfc3339(RealtimeNs()));
  for (const PhasePlan& phase : plan_.phases) *test->add_plan_specs() = BaseSpec(phase, test_id, 0);
  current_test_ = test;

  std::map<std::string, std::vector<const v1::PhaseRecord*>> accepted;  // by phase
  for (uint32_t rep = 0; rep < plan_.repetitions; ++rep) {
    bool abandoned = false;
    // Files this iteration wrote, by (dir, name, layout), and whether to keep them.
    std::vector<v1::PhaseSpec> written;
    std::set<std::string> kept;
    for (const PhasePlan& phase : plan_.phases) {
      if (phase.keep) kept.insert(phase.dir + "/" + phase.file_name);
    }
    for (const PhasePlan& phase : plan_.phases) {
      if (phase.kind == v1::WRITE || phase.kind == v1::SMALL_FILES ||
          (phase.kind == v1::READ && phase.remove_files)) {
        written.push_back(BaseSpec(phase, test_id, rep));
      }
      Failure f = RunPhase(phase, test_id, rep, test, &accepted[phase.name]);
      if (f) {
        // Leave nothing behind: remove what this iteration wrote, kept or not.
        RemoveFiles(written, rep, false, nullptr);
        CleanUpRestarted(written);
        if (f.kind != RunFailure::kAgentLost || plan_.on_agent_loss != "continue") return f;
        // on_agent_loss = "continue": drop the lost agents, abandon this
        // repetition, and go on; every later result is partial.
        DropLostAgents();
        if (clients_.empty()) {
          return Fail(RunFailure::kAgentLost, f.message + "; no client agent is left to continue with");
        }
        partial_ = f;
        Print(IorReport::Note(absl::StrFormat("%s: continuing without it (on_agent_loss = "
                                              "\"continue\"); results from here on are partial",
                                              f.message)));
        // A lost agent that is only slow still holds its lease and, when it
        // lapses, removes the files it wrote, whose names the survivors'
        // renumbered ranks may reuse: let the lease run out first.
        const int64_t until = MonotonicNs() + (int64_t{plan_.lease_ms} + 250) * 1'000'000;
        while (MonotonicNs() < until && !Interrupted()) {
          absl::SleepFor(absl::Milliseconds(50));
        }
        abandoned = true;
        break;
      }
    }
    if (abandoned) continue;
    std::vector<v1::PhaseSpec> remove, keep;
    for (const v1::PhaseSpec& s : written) {
      (kept.count(s.dir() + "/" + s.file_name()) ? keep : remove).push_back(s);
    }
    if (!keep.empty()) ReleaseFiles(keep);
    if (!remove.empty()) {
      Failure f = RemoveFiles(remove, rep, true, test->mutable_phases(test->phases_size() - 1));
      if (f) return f;
    }
    if (Interrupted()) return Fail(RunFailure::kInterrupted, "interrupted");
  }
  // IOR prints -C's and -Z's columns for the whole test, its write rows too.
  const TestReorder reorder = TestReorderOf(test->plan_specs());
  for (const PhasePlan& phase : plan_.phases) {
    *test->add_summary() = SummarizePhase(accepted[phase.name], BaseSpec(phase, test_id, 0),
                                          phase.name, test_id, reorder);
  }
  PrintIor(ior_.TestDone(*test));
  return {};
}

void Coordinator::Finish(RunOutcome* outcome, const Failure& failure) {
  if (failure) {
    record_.set_status(failure.kind == RunFailure::kInterrupted ? "interrupted"
                       : record_.tests_size() > 0 && record_.tests(0).summary_size() > 0
                           ? "partial"
                           : "failed");
    record_.set_error(failure.message);
    outcome->failure = failure.kind;
    outcome->error = failure.message;
  } else if (partial_) {
    // The run went on without a lost agent: every result is there, but those
    // after the loss used fewer agents.
    record_.set_status("partial");
    record_.set_error(partial_.message);
    outcome->failure = partial_.kind;
    outcome->error = partial_.message + " (the run went on without it: results after it are partial)";
  } else {
    record_.set_status("complete");
  }
  record_.set_finished_at(FormatRfc3339(RealtimeNs()));
  PrintIor(ior_.Footer(record_, store_ ? store_->dir() : ""));
  if (store_) {
    absl::Status s = store_->WriteRunJson(record_);
    if (s.ok()) s = store_->WriteSummary(report_);
    if (!s.ok()) {
      Print(IorReport::Note(absl::StrFormat("error: %s", s.message())));
      if (outcome->failure == RunFailure::kNone) outcome->failure = RunFailure::kOther;
    }
    outcome->run_dir = store_->dir();
  }
  outcome->record = record_;
}

RunOutcome Coordinator::Run() {
  RunOutcome outcome;
  auto store = RunStore::Create(options_.out_dir, plan_.name, plan_.text);
  if (!store.ok()) {
    outcome.failure = RunFailure::kBadPlan;
    outcome.error = std::string(store.status().message());
    return outcome;
  }
  store_ = std::move(*store);
  char host[256] = {0};
  ::gethostname(host, sizeof(host) - 1);
  record_.set_format_version(1);
  record_.set_run_id(store_->run_id());
  record_.set_name(plan_.name);
  record_.set_plan_sha256(Sha256Hex(plan_.text));
  record_.set_plan_file(plan_.source);
  record_.set_started_at(FormatRfc3339(RealtimeNs()));
  record_.set_controller_host(host);
  record_.set_lockstep_version(LOCKSTEP_VERSION);
  record_.set_command_line(options_.command_line);

  record_.set_ior_command_line(options_.ior_command_line);
  record_.set_ior_verbose(options_.ior_verbose);
  record_.set_ior_reference_number(options_.ior_reference_number);
  PrintIor(ior_.Header(record_));

  Failure failure = SetUpAgents();
  if (!failure) {
    PrintIor(ior_.AgentsReady(record_));
    for (uint32_t t = 0; t < plan_.tests() && !failure; ++t) {
      if (t > 0) failure = MeasureClocks();
      if (!failure) failure = RunTest(t);
    }
  }
  heartbeat_.reset();
  // Hand the agents back, even after a failure (best effort).
  std::vector<AgentClient*> attached;
  std::vector<v1::DetachRequest> detach;
  for (AgentClient* a : all_) {
    if (a->session_id.empty() || lost_.count(a)) continue;
    attached.push_back(a);
    detach.emplace_back().set_session_id(a->session_id);
  }
  if (!attached.empty()) {
    FanOut<v1::DetachRequest, v1::DetachReply>(attached, detach, absl::Seconds(5),
                                               LOCKSTEP_ASYNC(Detach));
  }
  Finish(&outcome, failure);
  return outcome;
}

}  // namespace

RunOutcome RunPlan(const Plan& plan, const RunOptions& options) {
  Coordinator c(plan, options);
  return c.Run();
}

}  // namespace lockstep
