// What an agent sends for people to read — errors, notes, warnings, a
// program's output, a process's or a daemon's name, a file system's own
// words — is escaped for the terminal where it enters the controller
// (common/text_escape.h, newlines kept), once: run.json, the reports and
// every line the run prints then carry it escaped. An agent's program
// (COMMAND phases run the user's), a process on its host (its name is its
// own to choose) or a compromised agent cannot clear the operator's screen
// or reorder a line with escape sequences. The agent's error messages are
// escaped by FromGrpcStatus (common/errors.h).
//
// Fields the controller acts on (addresses, ports, targets, the files an
// agent will open) are left as they are: they are data, not text.
#ifndef LOCKSTEP_CONTROLLER_RUN_AGENT_TEXT_H_
#define LOCKSTEP_CONTROLLER_RUN_AGENT_TEXT_H_

#include "lockstep/v1/agent.pb.h"
#include "lockstep/v1/telemetry.pb.h"

namespace lockstep {

// The phase's error and start note; each task's error, file and program
// output; the telemetry's warnings and names (disks, interfaces, counters,
// processes, daemons).
void EscapeAgentText(v1::PhaseResult* result);
// The warnings and names of a host's telemetry (disks, interfaces,
// counters, processes, daemons): a server's, sent apart from a result.
void EscapeAgentText(v1::TelemetrySummary* telemetry);
// The host's descriptions: its name, kernel, OS, CPU model, versions,
// clock discipline, NICs' kinds, disks' models, daemons' versions and
// warnings, extra facts. Not the roots' paths nor the allowed commands:
// plans are checked against those.
void EscapeAgentText(v1::HostFacts* facts);
// The layout and checksum texts, the file system's version.
void EscapeAgentText(v1::PrepareReply* reply);
// The warning and the daemons' cache lines.
void EscapeAgentText(v1::CacheReply* reply);

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_RUN_AGENT_TEXT_H_
