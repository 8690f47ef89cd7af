// HTTP/2 flow control on the controller's connections to agents, set alike
// at both ends (controller/run/agent_client.cc, agent/agent_service.cc).
//
// gRPC's BDP probing is off. It sends a PING with data it receives, to size
// the windows for bulk transfers, and every such ping is answered: on these
// connections (a few small calls per phase each) that is CPU spent at every
// fan-out for windows no call needs (what it cost at 1,024 agents:
// tests/bench/README.md, section 6). Instead each
// stream's window is fixed at kHttp2StreamWindowBytes, so that a message up
// to that size (a phase's result of many tasks, a server's telemetry)
// crosses in one round trip, also on a long link: without the probe it
// would stay at HTTP/2's 64 KiB.
#ifndef LOCKSTEP_COMMON_HTTP2_FLOW_H_
#define LOCKSTEP_COMMON_HTTP2_FLOW_H_

namespace lockstep {

inline constexpr int kHttp2StreamWindowBytes = 4 << 20;

}  // namespace lockstep

#endif  // LOCKSTEP_COMMON_HTTP2_FLOW_H_
