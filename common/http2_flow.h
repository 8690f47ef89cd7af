// HTTP/2 flow control on the controller's connections to agents, set alike
// at both ends (controller/run/agent_client.cc, agent/agent_service.cc).
//
// gRPC's BDP probing is off. It sends a PING with data it receives, to size
// the windows for bulk transfers, and every such ping is answered: on these
// connections (a few small calls per phase each) the pings and their
// answers were about a quarter of the controller's CPU at 1,024 agents
// (tests/bench/README.md, section 6, ninth pass). Instead each stream's
// window is fixed at kHttp2StreamWindowBytes, more than a phase's result
// or telemetry message of any size seen, so that such a message crosses in
// one round trip, also on a long link.
#ifndef LOCKSTEP_COMMON_HTTP2_FLOW_H_
#define LOCKSTEP_COMMON_HTTP2_FLOW_H_

namespace lockstep {

inline constexpr int kHttp2StreamWindowBytes = 4 << 20;

}  // namespace lockstep

#endif  // LOCKSTEP_COMMON_HTTP2_FLOW_H_
