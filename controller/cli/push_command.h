// `lockstep push`: sends runs to a results service (issue 40).
//
//   lockstep push RUN...|FILE.lsbundle... --to URL --credentials DIR --ca CA.pem
//   lockstep push --all --db history.db --to URL ...   every run of a history db, ids kept
//   lockstep push --pending [--to URL ...]             list (or send) the spool
//
// Every push first sends what waits in the spool. A run the service cannot
// take now (unreachable, 5xx) is spooled and said to be; the command then
// exits 3 (kExitConnect) so CI notices, but nothing is lost. A refusal (bad
// credential, another site's run, a failed bundle check) exits 1 naming it.
#ifndef LOCKSTEP_CONTROLLER_CLI_PUSH_COMMAND_H_
#define LOCKSTEP_CONTROLLER_CLI_PUSH_COMMAND_H_

#include <array>
#include <string>
#include <vector>

#include "common/flags.h"
#include "controller/results/visibility.h"

namespace lockstep {

extern const CommandSpec kPushCommandSpec;

// `lockstep run`'s flags for pushing at the end of the run (each overrides
// the plan's [run] key of the same name).
inline constexpr std::array<FlagSpec, 5> kRunPushFlags = {{
    {.name = "push", .value_name = "URL",
     .help = "at the end of the run, push it to this results service (https://HOST:PORT); "
             "when it cannot take it the run still succeeds and waits in the spool "
             "(lockstep push --pending). Plan: [run] push"},
    {.name = "push_credentials", .value_name = "DIR",
     .help = "with --push: the site's certificate and key (lockstep-service admit). Plan: [run] "
             "push_credentials"},
    {.name = "push_ca", .value_name = "FILE",
     .help = "with --push: the service's CA certificate. Plan: [run] push_ca"},
    {.name = "push_visibility", .value_name = "WHO",
     .help = "with --push: who else sees the run: shared (the default), private or \"embargo "
             "YYYY-MM-DD\", stored with it. Plan: [run] push_visibility"},
    {.name = "spool", .value_name = "DIR", .default_value = "lockstep-results/spool",
     .help = "with --push: where a run waits while the service cannot take it"},
}};

int PushCommand(const std::vector<std::string>& args);

// Where and as whom to push (push's flags, or run's --push flags and the
// plan's [run] push).
struct PushSettings {
  std::string url, credentials, ca, site, site_file;
  std::string spool = "lockstep-results/spool";
  std::string db = "lockstep-results/history.db";
  // Who else sees the runs pushed now; when given on the command line, also
  // set on a run the service has already.
  RunVisibility visibility;
  bool visibility_given = false;
};

// The plan's [run] KEY (push, push_credentials, push_ca, push_visibility)
// from its text; ""
// when absent (ParsePlan has checked that it is a string).
std::string PlanRunString(const std::string& plan_text, const char* key);

// For `lockstep run --push URL`: sends the spool, then the run directory
// just written (or spools it). Returns the push command's exit code.
int PushRunDirectory(const PushSettings& settings, const std::string& run_dir);

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_CLI_PUSH_COMMAND_H_
