// `lockstep run --dry-run` and `lockstep run --smoke`: the command-line side
// of controller/plan/plan_smoke.h (which agents a dry run counts, whether a
// smoke run's directories are on Lustre).
#ifndef LOCKSTEP_CONTROLLER_CLI_RUN_PREVIEW_H_
#define LOCKSTEP_CONTROLLER_CLI_RUN_PREVIEW_H_

#include "common/flags.h"
#include "controller/plan/plan.h"

namespace lockstep {

// Prints the dry run of `plan` for the agents the flags of `f` name (the
// plan's [[agent]] tables, --local N, --agents, --hostfile, --agents-from
// with --expect; else the 2 local agents `lockstep run` would start) and
// returns the exit code. Contacts no agent.
int DryRun(const ParsedFlags& f, const Plan& plan);

// Makes `plan` a smoke plan (MakeSmokePlan). Lustre settings are kept only
// when the run's local root is on Lustre, or the agents are remote (each
// agent then refuses striping on a directory that is not on Lustre).
void ApplySmoke(const ParsedFlags& f, Plan* plan);

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_CLI_RUN_PREVIEW_H_
