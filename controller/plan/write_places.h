// Where a plan run on local agents (`--local`, or a plan without agents) may
// write: the runner's own places, never a system directory it did not name.
// A real agent has its --root list (agent/roots.h); local agents take the
// plan's directories as roots, so this check stands in for that list.
#ifndef LOCKSTEP_CONTROLLER_PLAN_WRITE_PLACES_H_
#define LOCKSTEP_CONTROLLER_PLAN_WRITE_PLACES_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "common/files.h"
#include "controller/plan/plan.h"

namespace lockstep {

struct LocalWritePlaces {
  std::string cwd;                 // absolute; the runner's working directory
  std::string local_root;          // --local_root, empty if not given
  std::vector<std::string> roots;  // --root DIR, as given on the command line
  // The command line itself names the directory (lockstep ior -o, mdtest
  // -d): a path outside the places above is meant, unless it is a system
  // directory.
  bool named_on_command_line = false;
};

// The places of a front end whose command line names its directories
// (`lockstep ior -o`, mdtest -d, iozone -F, io500's ini, dlio's folders):
// this process's working directory, `roots` (its --root) and
// named_on_command_line.
LocalWritePlaces CommandLineWritePlaces(std::vector<std::string> roots);

// IsSystemDirectory: common/files.h (the agents refuse such roots too).

// `dir` made absolute (against `cwd`), normalized, and with the symlinks of
// its longest existing prefix resolved: where a write there would land.
std::string WhereItLands(const std::string& dir, const std::string& cwd);

// Each absolute phase directory of `plan` must land below a --root, or below
// the working directory, --local_root, /tmp or /dev/shm (or be named on the
// command line) without being a system directory. Relative directories go
// below the local agents' root and are not checked here. InvalidArgument
// naming the plan line (source:line), the phase, the directory, where it
// lands, and the fix (--root DIR, or another dir).
absl::Status CheckLocalWritePlaces(const Plan& plan, const LocalWritePlaces& places);

// One directory, as CheckLocalWritePlaces checks each; `what` names it in
// the error ("-o /etc/x", "plan.toml:7: phase 'write': dir").
absl::Status CheckLocalWritePlace(const std::string& dir, const LocalWritePlaces& places,
                                  const std::string& what);

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_PLAN_WRITE_PLACES_H_
