// lockstep-agent's command line: its flag table (common/flags.h parses with
// it; `lockstep-agent --help` and the man page lockstep-agent.8 are rendered
// from it), and how the flags combine with a --config file.
#ifndef LOCKSTEP_AGENT_AGENT_FLAGS_H_
#define LOCKSTEP_AGENT_AGENT_FLAGS_H_

#include <string>

#include "absl/status/statusor.h"
#include "agent/config.h"
#include "common/flags.h"

namespace lockstep {

const CommandSpec& AgentCommandSpec();

// The node name an agent announces and picks its --tls_dir certificate by:
// --node's value when given, else $SLURMD_NODENAME, else the host name.
std::string AgentNodeName(const std::string& node_flag);
// lockstep-agent(8).
const ProgramSpec& AgentProgram();

// The agent's settings: those of the --config file when one is given (else
// AgentConfig's defaults), each overridden by a flag given explicitly;
// without --config, every flag's value (its default when not given). --root
// given at all replaces the config's roots. Errors (InvalidArgument): the
// config file's, naming file, line and key; a --role that is not client, oss
// or mds.
absl::StatusOr<AgentConfig> AgentConfigFromFlags(const ParsedFlags& flags);

}  // namespace lockstep

#endif  // LOCKSTEP_AGENT_AGENT_FLAGS_H_
