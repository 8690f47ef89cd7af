// `lockstep io500 CONFIG.ini [flags]`: IO500's phases and score without MPI.
// Reads the ini (controller/io500/io500_config.h), checks the data directory
// (empty or missing; created with its sub-directories when this host sees
// it), runs the plan of controller/io500/io500_plan.h through the run layer
// (run.json, journal and history in --out), then writes IO500's files to
// <resultdir>/<YYYY.MM.DD-HH.MM.SS>/ (controller/io500/io500_output.h) with
// whatever was measured, also when a phase failed. The flags are
// Io500CommandSpec() of command_specs.h; the steps are a FrontEnd's
// (controller/cli/front_end.h).
#ifndef LOCKSTEP_CONTROLLER_IO500_IO500_COMMAND_H_
#define LOCKSTEP_CONTROLLER_IO500_IO500_COMMAND_H_

#include <atomic>
#include <string>
#include <vector>

#include "absl/status/status.h"

namespace lockstep {

// `args` excludes the program and the subcommand. Returns the exit code
// (exit_codes.h): 2 for a bad ini or data directory, the run's code
// otherwise, 1 when IO500's files could not be written.
int Io500Command(const std::vector<std::string>& args, const std::string& command_line,
                 const std::atomic<bool>* interrupted);

// The data directory before a run: refused (InvalidArgument, naming it and
// what is in it) when it exists and is not an empty directory, as IO500
// refuses to reuse one; else created with IO500's sub-directories
// (kIo500DataSubdirs). When `must_see` is false (remote agents) and this
// host does not see its parent, nothing is done and *note says so.
absl::Status PrepareIo500DataDir(const std::string& datadir, bool must_see, std::string* note);

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_IO500_IO500_COMMAND_H_
