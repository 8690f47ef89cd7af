// IO500's figures of each phase, read from the run record of a
// `lockstep io500` run (never from the coordinator), and each phase's text
// (<phase>.txt): IOR's report or mdtest's summary of that phase's plan
// phases, as `lockstep ior` / `lockstep mdtest` print them, after an
// "exe = <command line>" line; find's counts.
//
// Figures (IO500's): an IOR phase scores bytes / whole phase time in GiB/s
// (its row); an mdtest phase the rate of its scored step (file create, stat,
// read, remove) in kIOPS, over the time of all its steps (the tree steps
// too); find the files scanned / the span from the first task's start to
// the last task's end / 1000. A phase with no record did not run (the run
// stopped before it: `stopped_reason`); a record that is not ok carries its
// error.
#ifndef LOCKSTEP_CONTROLLER_IO500_IO500_RESULTS_H_
#define LOCKSTEP_CONTROLLER_IO500_IO500_RESULTS_H_

#include <string>
#include <vector>

#include "controller/io500/io500_config.h"
#include "controller/io500/io500_output.h"
#include "controller/io500/io500_plan.h"
#include "lockstep/v1/results.pb.h"

namespace lockstep {

// Every phase of kIo500Phases, in order. `record` may have no tests (the
// run failed before its first phase). `run_dir` is shown in the IOR text.
std::vector<Io500PhaseOutput> Io500PhasesFromRecord(const v1::RunRecord& record,
                                                    const Io500Config& config,
                                                    const Io500Setup& setup,
                                                    const std::string& run_dir,
                                                    const std::string& stopped_reason);

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_IO500_IO500_RESULTS_H_
