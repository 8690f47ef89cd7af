// How far ahead the start instant is set: far enough that the slowest agent
// has its Start before the instant, no further (every millisecond of lead is
// a millisecond of barrier round). The lead is planned from the measured cost
// of reaching every agent:
//
//   measured: lead = kFloor + kSafety × delivery × max(1, clients / its clients)
//   else:     lead = kFloor + kFirstSafety × Prepare round + 4 × max RTT
//
// where `delivery` is how long it took, from choosing the instant, until the
// slowest agent had its Start (sending every Start — the dispatch —, the
// network, the agent's handler): the largest over the last kWindow phases of
// (lead − smallest start margin) (PhaseRecord.start_margin_ns), scaled up
// linearly when this phase has more clients than the observed one (the
// dispatch is per agent). Before any phase was observed: the phase's own
// Prepare round (a fan-out to the same agents) and the clock round trips;
// without a Prepare round, 0.2 ms per agent. A missed instant (negative
// margin) shows as a delivery longer than the lead, so the next lead grows
// past it. The run's first delivery leaves the window once a second one is
// observed: the first Start reaches agents on cold paths (connections,
// threads and caches not yet warm) and is several times slower than the
// later ones, whose leads it must not pad (tests/bench/README.md, section
// 15).
//
// Having its Start before the instant is not enough: where the agents and
// the controller share a host's cores, the Starts' handling (the agents'
// gRPC threads, their acknowledgements, the controller's) still takes those
// cores for a while after the last delivery, and a task whose wait ends then
// waits for a core — on 16 cores with a task each, 1.5–2 ms late at a 3 ms
// lead, on time at 20 ms (tests/bench/README.md, section 20). So the lead
// also learns from the outcome: a phase in which a task whose agent had its
// Start in time still left its wait later than kReleaseTolerance past the
// instant (beyond its clock's uncertainty) adds twice that lateness to a
// settle time that every later lead of the run includes (at most
// kMaxSettle). It only grows: a lead that once was too short stays long
// enough.
//
// The lead is never cut below that estimate to fit a round number: up to
// kMaxLead it is used as planned, and LeadPlan says so (`long`) when it is
// above kLongLead; a lead that would need more than kMaxLead is capped there
// and LeadPlan::note says, before the phase, that the instant will likely be
// missed and what lead it would need.
//
// Owns: the last observations. Thread: the coordinator's.
#ifndef LOCKSTEP_CONTROLLER_RUN_BARRIER_LEAD_H_
#define LOCKSTEP_CONTROLLER_RUN_BARRIER_LEAD_H_

#include <cstddef>
#include <deque>
#include <string>
#include <vector>

#include "absl/time/time.h"

namespace lockstep {

// The lead for one phase and why.
struct LeadPlan {
  absl::Duration lead;    // what the phase uses
  absl::Duration needed;  // the estimate (above lead only when capped)
  bool capped = false;    // needed > kMaxLead
  std::string basis;      // "2 ms + 1.5 x delivery 4.1 ms (observed, 2 clients)", ...
  // A line to print before the phase when the lead is long or capped;
  // empty otherwise.
  std::string note;
};

class BarrierLead {
 public:
  static constexpr absl::Duration kFloor = absl::Milliseconds(2);
  // The margin over the slowest delivery observed. Where agents share
  // cores, the tasks of the agents that already had their Start begin at
  // the instant and slow the delivery to the rest, so a small miss grows:
  // the margin covers that growth (a smaller one missed instants at scale:
  // tests/bench/README.md, section 16).
  static constexpr double kSafety = 1.5;
  // Before any delivery was observed, the Prepare round stands in for it;
  // a Start's handler does more than Prepare's reply, so the delivery is a
  // multiple of that round, which this bounds (section 16 of the bench
  // README).
  static constexpr double kFirstSafety = 3.0;
  static constexpr absl::Duration kMinLead = absl::Milliseconds(2);
  // Above this the plan says, before the phase, how long the lead is.
  static constexpr absl::Duration kLongLead = absl::Seconds(30);
  static constexpr absl::Duration kMaxLead = absl::Minutes(10);
  static constexpr size_t kWindow = 3;

  // The lead for the next start instant. `max_rtt`: the slowest client's
  // clock round trip; `prepare_round`: this phase's Prepare fan-out
  // (zero: unknown); `clients`: how many get a Start.
  LeadPlan Plan(absl::Duration max_rtt, absl::Duration prepare_round, size_t clients) const;
  absl::Duration Next(absl::Duration max_rtt, absl::Duration prepare_round,
                      size_t clients) const {
    return Plan(max_rtt, prepare_round, clients).lead;
  }

  // After a phase whose every client answered: the lead it used, the
  // smallest margin by which a client had its Start before the instant, and
  // how many clients had a Start.
  void Observe(absl::Duration lead, absl::Duration min_margin, size_t clients = 0);
  // After the same phase: how late the latest task released whose agent had
  // its Start in time (release − instant − the clock's uncertainty; zero or
  // negative: on time).
  void ObserveRelease(absl::Duration latest_release_late);
  static constexpr absl::Duration kReleaseTolerance = absl::Microseconds(50);
  static constexpr absl::Duration kMaxSettle = absl::Milliseconds(100);

  // Where tasks spin, each issues its first transfer this long after the
  // instant (StartRequest.first_transfer_after_ns): kOpenSafety × the longest
  // task open of the last kWindow phases that had any, at most
  // kMaxFirstTransferAfter; zero before any open was observed. Opens in one
  // directory are serialised by its lock, so first transfers issued as each
  // open returns are as far apart as the opens; held to one instant past the
  // slowest open they are not.
  absl::Duration FirstTransferAfter() const;
  void ObserveOpens(absl::Duration longest_open);
  static constexpr double kOpenSafety = 1.5;
  static constexpr absl::Duration kMaxFirstTransferAfter = absl::Milliseconds(1);

 private:
  struct Delivery {
    absl::Duration duration;
    size_t clients = 0;  // 0: not known (counts as any)
  };
  std::deque<Delivery> deliveries_;  // newest last, at most kWindow
  std::deque<absl::Duration> opens_;  // longest open per phase, newest last
  size_t observed_ = 0;
  absl::Duration settle_;  // added to every lead; see the file comment
  absl::Duration settle_from_;  // the lateness that last grew it
};

// What the delivery check (PhaseAttempt) saw `before_instant` ahead of a
// phase's instant: which clients had acknowledged their Start (StartAck,
// wire minor 7). A client without an ack by then will most likely start
// late; the check says so while the instant is still ahead.
struct StartDelivery {
  size_t clients = 0;               // the clients checked
  size_t acknowledged = 0;          // of them, with an ack
  std::vector<std::string> late;    // the addresses of the others
  absl::Duration since_first_sent;  // the first Start sent → the check
  absl::Duration before_instant;    // the check → the instant
  absl::Duration lead;              // the phase's (LeadPlan.lead)
  std::string lead_basis;           // LeadPlan.basis
};

// The warning for a check at which some clients had no ack: how many and
// which (the first few addresses), when the last will have its Start at the
// rate the others had theirs, and the lead that rate needs. Empty when every
// client had acknowledged.
std::string LateStartWarning(const std::string& phase_id, const StartDelivery& d);

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_RUN_BARRIER_LEAD_H_
