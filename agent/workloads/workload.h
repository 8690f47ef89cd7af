// The interface between the phase runner and one kind of work.
//
// The phase runner (agent/phase_runner.h) owns the threads, the start instant,
// the progress events and the result; a Workload does one kind of I/O for
// each task: IOR's transfers (write, read), rewrite, small files, an mdtest
// step. One class per PhaseKind, made by MakeWorkload from the kind → factory
// table in registry.cc. Adding a kind: one new workloads/KIND.{h,cc} and one
// line (plus its #include) in that table.
//
// Life of a workload, and which thread calls what:
//
//   MakeWorkload(spec)      any thread; no I/O, holds no resources.
//   Validate()              the Prepare call's thread, after the runner checked
//                           what every kind shares (CheckCommonSpec: file
//                           name, tasks, ranks).
//   TaskPath(dir, rank)     any thread; pure.
//   Prepare(dir, results)   the Prepare call's thread, once, before any task
//                           thread exists: stale files removed or the files to
//                           read checked, each task's buffers allocated.
//   RunTask(task)           each task's own thread, all tasks at once, from
//                           the start instant; once per task. Brackets its
//                           first timed operation with task.FirstOpIssuing()
//                           and task.FirstOpReturned() (see PhaseTasks).
//   Finish()                the runner's monitor thread, once, after every
//                           task thread was joined and before the result.
//   RemoveFiles(dir)        any thread, with or without Prepare (Cleanup, the
//                           lease watchdog): the files the agent's tasks own.
//
// Every file operation goes through the phase directory `dir`, a BeneathDir
// (agent/beneath.h) held open since Prepare: no path is opened, made or
// removed by its name from /, so that no symlink swapped in below the root
// can lead a task outside it. The runner keeps `dir` alive as long as the
// workload; a workload may keep a pointer to it from Prepare.
#ifndef LOCKSTEP_AGENT_WORKLOADS_WORKLOAD_H_
#define LOCKSTEP_AGENT_WORKLOADS_WORKLOAD_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "agent/beneath.h"
#include "common/histogram.h"
#include "lockstep/v1/agent.pb.h"

namespace lockstep {

class CephDaemons;  // agent/fs/ceph_daemons.h
class LustreTools;  // agent/fs/lustre_tools.h

struct WorkloadOptions {
  // Test only (lockstep-agent --test_delay_per_transfer_us): every transfer
  // takes this much longer, as on a slower device.
  absl::Duration test_delay_per_transfer = absl::ZeroDuration();
  // Test only: called by the transfer loop right before task `index` issues
  // its operation number `op` (0 and 1 only), with the monotonic instant.
  std::function<void(uint32_t index, uint64_t op, int64_t mono_ns)> test_on_issue;
  // Test only: called when task `index` has ended its transfers (after the
  // agent's first end was noted, if it was the first).
  std::function<void(uint32_t index)> test_on_done;
  // Test only: false keeps a start gate (agent/start_gate.h) from using
  // SCHED_FIFO, as for an agent without the privilege.
  bool allow_realtime = true;
  // lockstep-agent --start_spin: false never spins before the instant (the
  // tasks sleep to it with a 1 ns timer slack), as where a host's cores are
  // shared with work the agent cannot see.
  bool spin_start = true;
  // COMMAND phases (agent/workloads/command.h): the agent config's
  // allow_commands (absolute paths; the only programs a phase may run) and
  // command_user (the account they run as; "" = the default, see
  // ResolveCommandAccount). Not test hooks: AgentCore sets them.
  std::vector<std::string> allow_commands;
  std::string command_user;
  // The agent config's limits.max_bytes_per_phase (0 = any), set by
  // PhasePreparer from its own: for writes known only at Prepare (a seeks
  // phase lays out what is missing of its file). AgentWriteBytes is checked
  // against it before.
  uint64_t max_bytes_per_phase = 0;
  // BACKEND osd_bench (agent/workloads/backend.h): the Ceph daemons this
  // agent serves; null or empty on an agent that serves none. Set by
  // AgentCore; outlives every workload.
  CephDaemons* ceph_daemons = nullptr;
  // BACKEND obdfilter: lfs/lctl of an agent that may use Lustre's tools
  // (allow_lustre); null otherwise. Set by AgentCore.
  const LustreTools* lustre = nullptr;
};

// What a task has done so far. The task writes; the monitor thread (progress,
// throughput series) and Stalled() read at any time.
struct TaskCounters {
  std::atomic<uint64_t> bytes{0};
  std::atomic<uint64_t> ops{0};
  // The operation in flight, for stall reports: its monotonic start instant
  // (0 = none) and file offset. Set by workloads whose operations can hang
  // on a file system (the transfer loop).
  std::atomic<int64_t> op_start_mono_ns{0};
  std::atomic<uint64_t> op_offset{0};
};

// Why a task stopped. The runner turns it into the task's error
// ("task 3: read from /d/f at offset 4096: Input/output error (errno 5)
// after 4096 bytes"), its error_kind (IO_FAILED, or VERIFY_FAILED with
// `verify`) and stops the phase.
struct TaskFailure {
  std::string what;       // "read from", "cannot create directory"
  std::string path;
  int err = 0;            // errno; 0 for a short read or a data mismatch
  uint64_t offset = 0;    // file offset where it happened
  bool verify = false;    // the data read differs from what was written
  // When set, the whole error after "task N: " (what, path and offset unused):
  // a failure that is no system call's, such as a program's exit status.
  std::string message;
};

// What the runner offers every task of the phase; any task thread calls it.
class PhaseTasks {
 public:
  virtual ~PhaseTasks() = default;
  // Records `failure` as the task's error (its first one wins) and stops the
  // phase: every task sees abort at its next check.
  virtual void Fail(uint32_t index, const TaskFailure& failure) = 0;
  // Waits until every task of this agent arrived (IOR -g) and, when the spec
  // has sync_across_agents, every task of every agent; or the phase stops.
  // Every task must make the same sequence of Barrier/WearOut calls.
  virtual void Barrier() = 0;
  // Reports `pairs` (or mdtest items) and waits like Barrier; returns the
  // largest over the tasks waited for (IOR's stonewall wear-out, mdtest -W),
  // or early when the phase stops.
  virtual uint64_t WearOut(uint64_t pairs) = 0;
  // The start when tasks outnumber cores (agent/start_gate.h): a workload
  // calls FirstOpIssuing right before its task's first timed operation
  // enters the kernel (never blocks) and FirstOpReturned after it returned
  // and before the second (waits until every task of this agent issued its
  // first, or the phase stops). A task that ends without an operation needs
  // neither. No-ops when the tasks fit on the cores.
  virtual void FirstOpIssuing(uint32_t index) = 0;
  virtual void FirstOpReturned(uint32_t index) = 0;
  // After the task's open (and IOR -g's barrier), before its transfers are
  // timed: where the tasks spin, waits until the phase's first-transfer
  // instant (StartRequest.first_transfer_after_ns) if it is still ahead.
  virtual void BeforeFirstTransfer(uint32_t /*index*/) {}
};

// One task, as RunTask sees it. Everything is owned by the runner and
// outlives RunTask.
struct TaskContext {
  uint32_t rank = 0;   // global rank
  uint32_t index = 0;  // 0 .. spec.tasks() - 1 on this agent
  const std::atomic<bool>* abort = nullptr;
  // The task's timers, bytes, ops and what else its kind reports; the
  // runner fills rank, file, latency and error.
  v1::TaskResult* result = nullptr;
  LatencyHistogram* latency = nullptr;  // one sample per timed operation
  TaskCounters* counters = nullptr;
  PhaseTasks* phase = nullptr;

  // True once the phase stops: check between operations, return soon after.
  bool Aborted() const { return abort->load(std::memory_order_relaxed); }
  void Fail(const TaskFailure& failure) const { phase->Fail(index, failure); }
  void FirstOpIssuing() const { phase->FirstOpIssuing(index); }
  void FirstOpReturned() const { phase->FirstOpReturned(index); }
};

class Workload {
 public:
  virtual ~Workload() = default;

  // The kind's own fields of the spec. InvalidArgument "phase ID: ..." naming
  // the value and the limit.
  virtual absl::Status Validate() const = 0;

  // The file (or tree root) task `rank` works on, with `dir` the resolved
  // phase directory: TaskResult.file, PrepareReply.files, stall reports.
  virtual std::string TaskPath(const std::string& dir, uint32_t rank) const = 0;

  // Untimed: removes stale files (a phase that creates) or checks that the
  // files exist and are long enough (a read), allocates each task's buffers.
  // `results[i]` is the result of task i, for what is known before the start.
  // Errors name the file and the task: FailedPrecondition (missing or short
  // files), ResourceExhausted (buffers), Internal.
  virtual absl::Status Prepare(const BeneathDir& dir, std::span<v1::TaskResult* const> results) = 0;

  // Task `task.index`'s share of the phase, timed: fills its timers, bytes
  // and ops, counts progress in task.counters and records each operation's
  // latency. On an error calls task.Fail and returns; returns early once
  // task.Aborted().
  virtual void RunTask(const TaskContext& task) = 0;

  // On task `index`'s own thread after Prepare, before it waits for the
  // start instant: work of its first operation that does not depend on when
  // it starts (a write's pattern), so that it is not between the instant and
  // the first operation.
  virtual void PrimeTask(uint32_t /*index*/) {}

  // Untimed work once all tasks ended (mdtest removes an emptied test-dir).
  virtual void Finish() {}

  // Removes the files this agent's tasks own (one per task, a shared file, a
  // tree per task); returns how many it removed. Missing files are no error.
  virtual absl::StatusOr<uint32_t> RemoveFiles(const BeneathDir& dir) const = 0;

  // ---- What the agent needs to know before Prepare --------------------------
  // The phase lays down files the session must remove if the controller dies.
  virtual bool CreatesFiles() const = 0;
  // Bytes this agent's tasks will write (0 when it does not grow files): the
  // agent's per-phase limit and its free-space check.
  virtual uint64_t AgentWriteBytes() const { return 0; }
  // Bytes of the buffers this agent's tasks of the phase will allocate over
  // the phase's life (Prepare's and RunTask's): every allocation whose size
  // the spec sets, per task, reader thread or stream, at the size asked
  // (AllocateAligned's rounding up to 4 KiB not counted). Saturating
  // (UINT64_MAX when it does not fit) and defined for any spec, one that
  // Validate would refuse included: PhasePreparer weighs it before Validate
  // and before anything is made, against kMaxAgentBufferBytes and the
  // host's memory (CheckAgentBufferBytes). Whoever changes what a workload
  // allocates changes this with it (tests/unit/agent_buffers_test.cc pins
  // the formulas).
  virtual uint64_t AgentBufferBytes() const = 0;
  // The plan keys that size AgentBufferBytes, for its refusal's fix:
  // "tasks_per_agent or transfer_size".
  virtual std::string AgentBufferKeys() const = 0;
  // mdtest creates its -d directory when it is missing (rank 0's agent).
  virtual bool CreatesMissingDir() const { return false; }
  // Prepare creates the phase directory itself when it is missing, on every
  // agent (COMMAND: owned by the account programs run as); the agent then
  // passes the path it would have (AllowedRoots::ResolveNew).
  virtual bool PreparesMissingDir() const { return false; }
  // The phase removes the trees of its directory (mdtest tree_remove): a
  // directory the session created may go at Detach.
  virtual bool RemovesTrees() const { return false; }
  // false: the phase touches no file (NET); the agent holds its first root
  // as the phase directory instead of resolving PhaseSpec.dir.
  virtual bool UsesDir() const { return true; }

  // ---- Between Prepare and Start --------------------------------------------
  // What the workload opened in Prepare that the controller must know
  // (NET: the port it listens on), into the Prepare call's reply.
  virtual void DescribePrepared(v1::PrepareReply* /*reply*/) const {}
  // The endpoints other agents opened in their Prepare that this agent's
  // tasks connect to (StartRequest.peers), before the start; the Start
  // call's thread. InvalidArgument when the kind takes none or not as many.
  virtual absl::Status SetPeers(const std::vector<v1::NetPeer>& peers) {
    if (peers.empty()) return absl::OkStatus();
    return absl::InvalidArgumentError("this phase's kind connects to no peers");
  }
};

// The workload of `spec.kind()`. InvalidArgument naming the kind and the
// kinds this agent runs for a kind without one (a newer controller's).
absl::StatusOr<std::unique_ptr<Workload>> MakeWorkload(const v1::PhaseSpec& spec,
                                                       const WorkloadOptions& options = {});

// Whether server agents (role oss or mds) run phases of `kind` (net,
// backend); every other kind's I/O is the clients'.
bool RunsOnServers(v1::PhaseKind kind);

// The kinds MakeWorkload knows, in table order.
std::vector<v1::PhaseKind> WorkloadKinds();

// InvalidArgument "phase ID: why", for Validate.
absl::Status SpecError(const v1::PhaseSpec& spec, const std::string& why);

// What every kind's spec shares, checked by the phase runner before the
// kind's own Validate: a plain file name; task file names only for a file
// per process, one plain name per task; this agent's tasks and ranks within
// the total. A SpecError naming the value, else OK.
absl::Status CheckCommonSpec(const v1::PhaseSpec& spec);

// The IOR layout every transfer-based kind needs (write, read, rewrite,
// seeks): a transfer size that is a positive multiple of kTransferAlignBytes
// (and of kDirectIoAlignBytes with O_DIRECT), a non-zero block that is a
// multiple of it, segments. A SpecError naming the value, else OK.
absl::Status CheckTransferLayout(const v1::PhaseSpec& spec);

// The buffers CheckTransferLayout weighs (a transfer kind's
// AgentBufferBytes): tasks x transfer size, x 2 with verify or
// verify_after_write (a scratch buffer for the pattern check); saturating.
uint64_t TransferBufferBytes(const v1::PhaseSpec& spec);

// `buffer_bytes` of buffers against kMaxAgentBufferBytes and this host's
// physical memory (sysconf): a SpecError "phase ID: kind KIND: WHAT need N
// of buffers on this agent, more than BOUND ...; lower KEYS" when over
// either, else OK. `what` says what needs them ("4 tasks x transfer size
// 1 MiB"), `keys` the plan keys that lower them (AgentBufferKeys).
absl::Status CheckAgentBufferBytes(const v1::PhaseSpec& spec, uint64_t buffer_bytes,
                                   const std::string& what, const std::string& keys);

// One transfer-like operation of a task (the transfer loop, a seek): Begin
// marks it in flight at `offset` in `c` (the heartbeat's stall report reads
// it), waits options.test_delay_per_transfer (tests: a slower device) and
// returns its start (monotonic ns); End clears the mark, records the
// latency and returns the end instant.
int64_t BeginTransferOp(TaskCounters* c, const WorkloadOptions& options, uint64_t offset);
int64_t EndTransferOp(TaskCounters* c, int64_t start_mono_ns, LatencyHistogram* latency);

// A task timed as a whole (an mdtest sub-phase, a find walk, a command): every
// IOR timer of `r` (open, transfers, close) spans [start, stop].
void SetWholeSpanTimers(int64_t start_unix_ns, int64_t stop_unix_ns, v1::TaskResult* r);

}  // namespace lockstep

#endif  // LOCKSTEP_AGENT_WORKLOADS_WORKLOAD_H_
