// `lockstep iozone <IOzone options>`: IOzone's throughput mode (-t N) as a
// plan, a pure function of argv (no I/O but the injected reader of -+m's
// client file), like ior_cli.h. Every option Lockstep does not run is
// refused by name ("iozone: option -j is not supported by lockstep iozone;
// ..."), never ignored.
//
// Understood: -i 0 (initial write, rewrite) -i 1 (read, re-read) -i 2
// (random read, random write), -r SIZE, -s SIZE (IOzone's units: a bare
// number is kB, k/m/g suffixes), -t N, -c, -e, -w, -I, -T, -x, -F FILE...
// (N names, after -t, in one directory: the children's files, as named), -+m FILE (IOzone's client
// file: "host workdir path_to_iozone" a line, one child a line: the host is
// an agent, HOST or HOST:PORT, port 7070 by default, the agent's own
// default; workdir is the phase directory), -+k (-s is the aggregate of all
// children: total_size), and the ControllerCli options --local, --agents,
// --hostfile, --out, --insecure, --tls_dir.
#ifndef LOCKSTEP_CONTROLLER_IOZONE_IOZONE_CLI_H_
#define LOCKSTEP_CONTROLLER_IOZONE_IOZONE_CLI_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "controller/ior/ior_cli.h"
#include "controller/iozone/iozone_output.h"

namespace lockstep {

// The agent port of a -+m host given without one (lockstep-agent's default
// --listen port).
inline constexpr int kIozoneDefaultAgentPort = 7070;

// `args` excludes the program and the subcommand. `info` (may be null)
// receives what IOzone's text needs. InvalidArgument naming the option (and
// for -+m the file and line) and the fix.
absl::StatusOr<CliCommand> ParseIozoneCommandLine(const std::vector<std::string>& args,
                                                  const FileReader& read_file,
                                                  IozoneCommandInfo* info = nullptr);

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_IOZONE_IOZONE_CLI_H_
