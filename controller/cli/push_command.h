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

#include <string>
#include <vector>

#include "common/flags.h"

namespace lockstep {

extern const CommandSpec kPushCommandSpec;

int PushCommand(const std::vector<std::string>& args);

// Where and as whom to push (push's flags, or run's --push flags and the
// plan's [run] push).
struct PushSettings {
  std::string url, credentials, ca, site, site_file;
  std::string spool = "lockstep-results/spool";
  std::string db = "lockstep-results/history.db";
};

// For `lockstep run --push URL`: sends the spool, then the run directory
// just written (or spools it). Returns the push command's exit code.
int PushRunDirectory(const PushSettings& settings, const std::string& run_dir);

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_CLI_PUSH_COMMAND_H_
