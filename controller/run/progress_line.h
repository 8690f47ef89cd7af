// The live progress of one phase, from the agents' latest Progress events:
//   t0/r0/write: 812 MiB/s, 40.0%, 2.1 s elapsed, ETA 3 s; clients cpu 35%, iowait 2%
// shown as one line updated in place (`live`, stderr on a terminal) or, when
// there is no live sink, as a plain line every 10 s (`lines`). Neither goes
// into the report or summary.txt.
//
// Owns: the phase's start instant and when the next plain line is due.
// Thread: the coordinator's, which calls Update about every 100 ms while it
// waits for the phase's results, then Clear.
#ifndef LOCKSTEP_CONTROLLER_RUN_PROGRESS_LINE_H_
#define LOCKSTEP_CONTROLLER_RUN_PROGRESS_LINE_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "lockstep/v1/agent.pb.h"

namespace lockstep {

class ProgressLine {
 public:
  using Sink = std::function<void(const std::string&)>;

  // Starts the phase's clock. `expected_bytes`: what all tasks move (0:
  // unknown, no percentage or ETA). Either sink may be empty.
  ProgressLine(std::string phase_id, uint64_t expected_bytes, Sink live, Sink lines);

  // Shows the line for `latest` (one event per client agent).
  void Update(const std::vector<v1::Progress>& latest);
  // Erases the live line, if any.
  void Clear();

  // The text of the line, `elapsed` after the start: MiB/s, share and ETA of
  // `expected_bytes`; ops/s and ops done for a phase that moves no bytes
  // (expected_bytes 0: mdtest, find).
  static std::string Format(const std::string& phase_id, uint64_t expected_bytes,
                            const std::vector<v1::Progress>& latest, absl::Duration elapsed);

 private:
  static constexpr absl::Duration kPlainLinePeriod = absl::Seconds(10);

  const std::string phase_id_;
  const uint64_t expected_bytes_;
  const Sink live_;
  const Sink lines_;
  const int64_t start_mono_ns_;
  int64_t next_line_mono_ns_;
};

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_RUN_PROGRESS_LINE_H_
