#include "controller/run/clock_sync.h"

#include "common/clock.h"
#include "controller/run/agent_client.h"

namespace lockstep {

ClockEstimate EstimateFromSamples(const std::vector<ClockSample>& samples) {
  ClockEstimate best;
  bool have = false;
  for (const ClockSample& s : samples) {
    int64_t delay = (s.t4 - s.t1) - (s.t3 - s.t2);
    if (delay < 0) delay = 0;
    if (!have || delay < best.delay_ns) {
      best.delay_ns = delay;
      best.offset_ns = ((s.t2 - s.t1) + (s.t3 - s.t4)) / 2;
      have = true;
    }
  }
  best.samples = static_cast<uint32_t>(samples.size());
  return best;
}

absl::StatusOr<ClockEstimate> EstimateClock(AgentClient* agent, int count) {
  std::vector<ClockSample> samples;
  for (int i = 0; i < count; ++i) {
    v1::ClockRequest req;
    req.set_session_id(agent->session_id);
    v1::ClockReply reply;
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
    ClockSample s;
    s.t1 = RealtimeNs();
    grpc::Status st = agent->stub()->Clock(&ctx, req, &reply);
    s.t4 = RealtimeNs();
    if (!st.ok()) return FromGrpcStatus(st, agent->address());
    s.t2 = reply.receive_unix_ns();
    s.t3 = reply.transmit_unix_ns();
    samples.push_back(s);
  }
  return EstimateFromSamples(samples);
}

}  // namespace lockstep
