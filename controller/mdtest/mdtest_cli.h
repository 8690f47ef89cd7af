// `lockstep mdtest <mdtest options>`: see ior_cli.h. Each mdtest sub-phase
// becomes one plan phase of kind "mdtest", so the controller's start barrier
// separates them as mdtest's MPI barriers do.
#ifndef LOCKSTEP_CONTROLLER_MDTEST_MDTEST_CLI_H_
#define LOCKSTEP_CONTROLLER_MDTEST_MDTEST_CLI_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "controller/ior/ior_cli.h"
#include "controller/mdtest/mdtest_output.h"

namespace lockstep {

// mdtest 4.1's options: -n -I -b -z -u -L -F -D -C -T -E -r -U -w -e -i -d
// -N -P -Z -t -a POSIX, plus --tasks N (total tasks, as mpirun -np; mdtest's
// own -N is its neighbour shift) and the ControllerCli options. Without -n
// and -I the sub-phases run on no items, as mdtest's do; without -d the
// directory is ./out. `info` (may be null) receives what mdtest's output
// needs. Options mdtest has and Lockstep cannot honour exactly are refused
// by name.
absl::StatusOr<CliCommand> ParseMdtestCommandLine(const std::vector<std::string>& args,
                                                  const FileReader& read_file,
                                                  MdtestCommandInfo* info = nullptr);

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_MDTEST_MDTEST_CLI_H_
