// Runs one agent's share of one phase: one thread per task, parked after
// Prepare and released together at the start instant. What each task does
// is its kind's Workload (agent/workloads/workload.h); the runner owns the
// threads, the start, progress, the throughput series and the result.
#ifndef LOCKSTEP_AGENT_PHASE_RUNNER_H_
#define LOCKSTEP_AGENT_PHASE_RUNNER_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "agent/workloads/workload.h"
#include "lockstep/v1/agent.pb.h"

namespace lockstep {

// The runner's options are its workloads' (test hooks only).
using RunnerOptions = WorkloadOptions;

class PhaseRunner {
 public:
  // Called from the runner's monitor thread: Progress events while tasks
  // run, then exactly one PhaseResult. Must not block for long.
  using EventSink = std::function<void(const v1::PhaseEvent&)>;

  // Checks the spec (the fields every kind shares, then the kind's own), has
  // the kind's workload prepare its files and buffers (Workload::Prepare)
  // and parks one thread per task. `dir` is the phase directory held open
  // below its root (agent/beneath.h): every file operation of the phase
  // goes through it; the runner keeps it until destroyed. Errors:
  // InvalidArgument (spec, or a kind without a workload), NotFound /
  // FailedPrecondition (read files missing or short: names the file and the
  // task), Internal.
  static absl::StatusOr<std::unique_ptr<PhaseRunner>> Prepare(
      const v1::PhaseSpec& spec, std::shared_ptr<const BeneathDir> dir,
      const RunnerOptions& options = {});
  // The same with the workload the caller already made of `spec`
  // (MakeWorkload(spec, options)): the agent's Prepare makes it once.
  static absl::StatusOr<std::unique_ptr<PhaseRunner>> Prepare(
      std::unique_ptr<Workload> workload, const v1::PhaseSpec& spec,
      std::shared_ptr<const BeneathDir> dir, const RunnerOptions& options = {});
  // The same with `dir` opened as a directory trusted as a whole (its own
  // path may hold symlinks): tests, and callers with no root to hold.
  static absl::StatusOr<std::unique_ptr<PhaseRunner>> Prepare(const v1::PhaseSpec& spec,
                                                              const std::string& dir,
                                                              const RunnerOptions& options = {});

  // Aborts and joins all threads.
  ~PhaseRunner();

  // Releases the parked tasks at `start_at_unix_ns` (this host's wall clock).
  // With `spin_duration_ns` > 0 each task sleeps until that much before the
  // instant and spins the rest (use only when tasks do not outnumber free
  // cores). With 0 (more tasks than cores) a StartGate (agent/start_gate.h)
  // orders the tasks' first operations before any second one and, where
  // SCHED_FIFO is permitted, issues them close together; the result's
  // start_note says how. `host_agents`: how many agents share this host
  // (the controller's count; 0 or 1: this one alone), which decides whether
  // the gate's guard polls (agent/start_gate.h). The spin is kept only where
  // the host's tasks fit the cores the agent can use (agent/spin_start.h);
  // spinning tasks then issue their first transfer no earlier than
  // `first_transfer_after_ns` after the instant (StartRequest's field of that
  // name). Before it returns, `sink` gets PhaseEvent.started, the stream's
  // first event (the controller's delivery check). REQUIRES: called once.
  // FailedPrecondition when called twice; Aborted, with the kind Abort was
  // given, after an Abort.
  // The workload's part of the Prepare reply (Workload::DescribePrepared).
  void DescribePrepared(v1::PrepareReply* reply) const;
  // StartRequest.peers, before Start (Workload::SetPeers).
  absl::Status SetPeers(const std::vector<v1::NetPeer>& peers);

  absl::Status Start(int64_t start_at_unix_ns, int64_t spin_duration_ns,
                     uint32_t progress_interval_ms, EventSink sink, uint32_t host_agents = 1,
                     int64_t first_transfer_after_ns = 0);

  // Ends rendezvous `seq` (IOR -g barrier, stonewall wear-out agreement) of a
  // phase whose spec has sync_across_agents: the waiting tasks go on with
  // `value`, the largest over all agents. FailedPrecondition when the phase
  // does not synchronise across agents or not all of this agent's tasks are
  // waiting at `seq` (a stale or early Release).
  absl::Status Release(uint32_t seq, uint64_t value);

  // Stops every task at its next operation boundary; the result reports the
  // phase as failed with `reason`, each stopped task as "task N stopped:
  // REASON" (error_kind STOPPED). `kind` says why, for a Start that comes
  // after: STOPPED (the controller, the lease) or SUPERSEDED (a newer
  // Prepare or session took the agent). Safe to call at any time,
  // repeatedly; the first reason wins.
  void Abort(const std::string& reason, v1::ErrorKind kind = v1::STOPPED);

  // True once the result has been delivered (false for a runner never started).
  bool Done() const;
  bool Started() const;

  // Tasks whose current transfer has been in flight for `threshold` or
  // more: "task 3 stuck in write /d/f at offset 1048576 for 61.0 s".
  std::vector<std::string> Stalled(absl::Duration threshold) const;

  const v1::PhaseSpec& spec() const;
  // Files (or tree roots) this agent's tasks open (write: create).
  const std::vector<std::string>& files() const;

  PhaseRunner(const PhaseRunner&) = delete;
  PhaseRunner& operator=(const PhaseRunner&) = delete;

  struct Impl;

 private:
  explicit PhaseRunner(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Removes the files this agent's tasks of `spec` own (Workload::RemoveFiles:
// file per process, one per task; shared file, the file; small files and
// mdtest, the trees). Returns the number removed; a missing file is not an
// error. InvalidArgument for a kind without a workload. Through `dir`, held
// open since Prepare (agent/beneath.h); the string form opens `dir` itself
// as trusted (tests).
absl::StatusOr<uint32_t> RemovePhaseFiles(const v1::PhaseSpec& spec, const BeneathDir& dir);
absl::StatusOr<uint32_t> RemovePhaseFiles(const v1::PhaseSpec& spec, const std::string& dir);

}  // namespace lockstep

#endif  // LOCKSTEP_AGENT_PHASE_RUNNER_H_
