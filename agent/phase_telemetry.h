// The telemetry of each phase on this agent, over the window the phase ran:
//   - on a client, the host's telemetry rides on the phase's result (WrapSink);
//   - on a server (OSS/MDS), the controller opens and closes a window around
//     the phase with Telemetry calls (Window), which adds the served Ceph
//     daemons' counters.
// Both windows start from the sample Prime() took at the end of Prepare or
// the cache barrier when it is recent, so that no sample is read between a
// Start's arrival and its instant.
//
// Thread-safe. Never calls back into AgentCore.
#ifndef LOCKSTEP_AGENT_PHASE_TELEMETRY_H_
#define LOCKSTEP_AGENT_PHASE_TELEMETRY_H_

#include <cstdint>
#include <map>
#include <string>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "agent/fs/ceph_daemons.h"
#include "agent/phase_runner.h"
#include "agent/telemetry.h"
#include "lockstep/v1/agent.pb.h"

namespace lockstep {

class PhaseTelemetry {
 public:
  // A primed sample older than this is not used: a window never spans much
  // more than its phase.
  static constexpr absl::Duration kPrimedMaxAge = absl::Seconds(5);

  // `sampler` null: no host telemetry (agent telemetry off). `daemons`
  // never null, may be empty. Both must outlive this.
  PhaseTelemetry(TelemetrySampler* sampler, CephDaemons* daemons);

  // Takes the sample the next window starts from (a no-op without sampler).
  void Prime();

  // `sink`, with the host telemetry of the window from now to the phase's
  // result set on that result (or a warning saying why there is none).
  // Without a sampler: `sink` unchanged.
  PhaseRunner::EventSink WrapSink(PhaseRunner::EventSink sink);

  // A Telemetry call: `request.end()` false opens the window of
  // `request.phase_id()` (replacing one open for it); true closes it and
  // returns the summary, with each daemon's counters and warnings.
  // FailedPrecondition when closing a window that is not open. With neither
  // a sampler nor daemons: an empty reply, with the warning "telemetry is
  // off on this agent" when closing.
  absl::StatusOr<v1::TelemetryReply> Window(const v1::TelemetryRequest& request);

  // Forgets every open window (the session ended).
  void Clear();

 private:
  struct Open {
    uint64_t host = 0;     // sampler window id
    uint64_t daemons = 0;  // daemons window id; 0: none
  };

  TelemetrySampler* const sampler_;
  CephDaemons* const daemons_;
  absl::Mutex mu_;
  std::map<std::string, Open> windows_ ABSL_GUARDED_BY(mu_);  // by phase id
};

}  // namespace lockstep

#endif  // LOCKSTEP_AGENT_PHASE_TELEMETRY_H_
