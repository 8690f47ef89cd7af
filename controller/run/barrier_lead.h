// How far ahead the start instant is set: far enough that the slowest agent
// has its Start before the instant, no further (every millisecond of lead is
// a millisecond of barrier round). The lead adapts to what was measured:
//
//   measured: lead = kFloor + kSafety × delivery
//   else:     lead = kFloor + kFirstSafety × Prepare round + 4 × max RTT
//   (then clamped to [kMinLead, kMaxLead])
//
// where `delivery` is how long it took, from choosing the instant, until the
// slowest agent had its Start (sending every Start, the network, the agent's
// handler): the largest over the last kWindow phases of (lead − smallest
// start margin) (PhaseRecord.start_margin_ns). Before any phase was
// observed: the phase's own Prepare round (a fan-out to the same agents that
// also does work, so an over-estimate) and the clock round trips; without a
// Prepare round, 0.2 ms per agent (the fixed term of earlier versions). A
// missed instant (negative margin) shows as a delivery longer than the lead,
// so the next lead grows past it. The run's first delivery leaves the window
// once a second one is observed: the first Start reaches agents on cold paths
// (131 ms against 30-47 ms later at 128 processes on 2 cores), and it kept
// the next kWindow leads padded.
//
// Owns: the last observations. Thread: the coordinator's.
#ifndef LOCKSTEP_CONTROLLER_RUN_BARRIER_LEAD_H_
#define LOCKSTEP_CONTROLLER_RUN_BARRIER_LEAD_H_

#include <cstddef>
#include <deque>

#include "absl/time/time.h"

namespace lockstep {

class BarrierLead {
 public:
  static constexpr absl::Duration kFloor = absl::Milliseconds(2);
  // Not less: with 1.25 the 1,024 swarm agents missed the instant in two of
  // 35 adapted phases (by 567 and 739 ms). Where agents share cores, the tasks
  // of the agents that already had their Start begin at the instant and
  // slow the delivery to the rest, so a small miss grows.
  static constexpr double kSafety = 1.5;
  static constexpr double kFirstSafety = 2.0;
  static constexpr absl::Duration kMinLead = absl::Milliseconds(2);
  static constexpr absl::Duration kMaxLead = absl::Seconds(30);
  static constexpr size_t kWindow = 3;

  // The lead for the next start instant. `max_rtt`: the slowest client's
  // clock round trip; `prepare_round`: this phase's Prepare fan-out
  // (zero: unknown); `clients`: how many get a Start.
  absl::Duration Next(absl::Duration max_rtt, absl::Duration prepare_round,
                      size_t clients) const;

  // After a phase whose every client answered: the lead it used and the
  // smallest margin by which a client had its Start before the instant.
  void Observe(absl::Duration lead, absl::Duration min_margin);

 private:
  std::deque<absl::Duration> deliveries_;  // newest last, at most kWindow
  size_t observed_ = 0;
};

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_RUN_BARRIER_LEAD_H_
