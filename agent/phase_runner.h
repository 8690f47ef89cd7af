// Runs one agent's share of one phase: one thread per task, parked after
// Prepare and released together at the start instant.
#ifndef LOCKSTEP_AGENT_PHASE_RUNNER_H_
#define LOCKSTEP_AGENT_PHASE_RUNNER_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "lockstep/v1/agent.pb.h"

namespace lockstep {

struct RunnerOptions {
  // Test only (lockstep-agent --test_delay_per_transfer_us): every transfer
  // takes this much longer, as on a slower device.
  int64_t test_delay_per_transfer_ns = 0;
};

class PhaseRunner {
 public:
  // Called from the runner's monitor thread: Progress events while tasks
  // run, then exactly one PhaseResult. Must not block for long.
  using EventSink = std::function<void(const v1::PhaseEvent&)>;

  // Checks the spec, removes stale files (write) or checks that every file
  // exists and is long enough (read), allocates aligned buffers and parks one
  // thread per task. `dir` is already resolved against the allowed roots.
  // Errors: InvalidArgument (spec), NotFound / FailedPrecondition (read
  // files missing or short: names the file and the task), Internal.
  static absl::StatusOr<std::unique_ptr<PhaseRunner>> Prepare(const v1::PhaseSpec& spec,
                                                              const std::string& dir,
                                                              const RunnerOptions& options = {});

  // Aborts and joins all threads.
  ~PhaseRunner();

  // Releases the parked tasks at `start_at_unix_ns` (this host's wall clock).
  // With `spin_duration_ns` > 0 each task sleeps until that much before the instant
  // and spins the rest (use only when tasks do not outnumber free cores).
  // REQUIRES: called once. FailedPrecondition when called twice.
  absl::Status Start(int64_t start_at_unix_ns, int64_t spin_duration_ns, uint32_t progress_interval_ms,
                     EventSink sink);

  // Stops every task at its next transfer boundary; the result reports the
  // phase as failed with `reason`. Safe to call at any time, repeatedly.
  void Abort(const std::string& reason);

  // True once the result has been delivered (false for a runner never started).
  bool Done() const;
  bool Started() const;

  // Tasks whose current transfer has been in flight for `threshold_ns` or
  // more: "task 3 stuck in write /d/f at offset 1048576 for 61.0 s".
  std::vector<std::string> Stalled(int64_t threshold_ns) const;

  const v1::PhaseSpec& spec() const;
  // Files this agent's tasks open (write: create).
  const std::vector<std::string>& files() const;

  PhaseRunner(const PhaseRunner&) = delete;
  PhaseRunner& operator=(const PhaseRunner&) = delete;

  struct Impl;

 private:
  explicit PhaseRunner(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Removes the files this agent's tasks of `spec` own (file per process: one
// per task; shared file: the file). Returns the number removed; a missing
// file is not an error.
absl::StatusOr<uint32_t> RemovePhaseFiles(const v1::PhaseSpec& spec, const std::string& dir);

}  // namespace lockstep

#endif  // LOCKSTEP_AGENT_PHASE_RUNNER_H_
