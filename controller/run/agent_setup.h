// The steps of a run with its agents before its first test: connect to
// every agent at once, attach (one session each, checked), and measure the
// agents' clocks (again before every later test). Each step fills the run
// record's agent lines and returns the RunError that stops the run, or none.
// The Coordinator (coordinator.h) drives them on its parts.
#ifndef LOCKSTEP_CONTROLLER_RUN_AGENT_SETUP_H_
#define LOCKSTEP_CONTROLLER_RUN_AGENT_SETUP_H_

#include <string>

#include "controller/plan/plan.h"
#include "controller/record/run_observer.h"
#include "controller/run/agent_roster.h"
#include "controller/run/coordinator.h"
#include "controller/run/run_error.h"
#include "lockstep/v1/results.pb.h"

namespace lockstep {

struct AgentSetUp {
  const Plan& plan;
  uint32_t lease_ms;  // asked of every agent at Attach
  const RunOptions& options;
  AgentRoster& roster;
  RunEmitter& events;     // notes: expiring certificates, clock bounds exceeded
  v1::RunRecord& record;  // one AgentRecord per roster agent, added by Connect

  // Every channel at once, the slowest deciding: an unreachable agent fails
  // the run, named with its error.
  RunError Connect();
  // A session on every agent for `controller_name` ("host pid N"): refused
  // agents (wire version, busy, role) fail the run, and one process listed
  // twice under two names is refused.
  RunError Attach(const std::string& controller_name);
  // Maps every agent's timestamps into the controller's time base; agents of
  // one host share one offset; lost agents keep their last estimate. An
  // uncertainty above max_clock_uncertainty_us fails the run or is noted
  // (on_clock).
  RunError MeasureClocks();

 private:
  RunError CheckAttached();
  bool interrupted() const { return options.interrupted && options.interrupted->load(); }
};

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_RUN_AGENT_SETUP_H_
