// Issue 40's commands that need no results service (the service's own,
// push and `verify URL`, are beside them):
//
//   lockstep export --bundle RUN FILE (--key F --cert F | --credentials DIR)
//                   [--site NAME] [--site-file site.toml] [--db FILE]
//   lockstep verify BUNDLE [--ca CA.pem]
//   lockstep compare --sites A,B,C --plan NAME [--runs N] [--force] [--db FILE]
//
// Exit codes (cli/exit_codes.h): 0 success; 2 bad flags, a bad site.toml or
// a file that is not a bundle; 1 other failures (no credential, run not
// found); verify: 6 (kExitVerify) when a check failed, naming it; compare:
// 2 when the sites' runs are not comparable without --force.
#ifndef LOCKSTEP_CONTROLLER_CLI_BUNDLE_COMMANDS_H_
#define LOCKSTEP_CONTROLLER_CLI_BUNDLE_COMMANDS_H_

#include <string>
#include <vector>

#include "common/flags.h"

namespace lockstep {

// `export` with --bundle given: `f` is export's parsed flags.
int ExportBundleCommand(const ParsedFlags& f);
// `compare` with --sites given: `f` is compare's parsed flags, `db_file`
// the history db its --db names (a local copy when that is a service).
int CompareSitesCommand(const ParsedFlags& f, const std::string& db_file);
int VerifyCommand(const std::vector<std::string>& args);

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_CLI_BUNDLE_COMMANDS_H_
