// `lockstep mdtest <mdtest options>`: see ior_cli.h. Each mdtest sub-phase
// becomes one plan phase of kind "mdtest", so the controller's start barrier
// separates them as mdtest's MPI barriers do.
#ifndef LOCKSTEP_CONTROLLER_MDTEST_CLI_H_
#define LOCKSTEP_CONTROLLER_MDTEST_CLI_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "controller/ior_cli.h"

namespace lockstep {

// Options: -n -b -z -u -w -e -i -d -I -F -D -C -T -E -r -v -a POSIX, plus
// --tasks N (total tasks, as mpirun -np) and the ControllerCli options.
absl::StatusOr<CliCommand> ParseMdtestCommandLine(const std::vector<std::string>& args,
                                                  const FileReader& read_file);

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_MDTEST_CLI_H_
