// `lockstep certs`: makes the private CA and the certificates for mutual TLS
// between the controller and its agents (see common/tls.h).
//
//   lockstep certs init  --dir DIR [--agent NAME[,SAN...]]... [--controller NAME]
//                        [--days N] [--force]
//   lockstep certs issue --dir DIR [--agent NAME[,SAN...]]... [--controller NAME]
//                        [--days N] [--force]
//
// init writes DIR/ca.pem + DIR/ca.key (the CA), DIR/controller.pem + .key (CN =
// --controller, default "controller") and DIR/agent-NAME.pem + .key for
// every --agent (CN = NAME; SANs = NAME and the extra SANs: every host name
// and IP address the controller dials the agent by). Keys are mode 0600.
// Refuses to replace any existing file unless --force (a new CA invalidates
// every certificate the old one issued). Prints what it wrote and the flags
// to use.
// issue signs new agent certificates (and the controller's, when --controller
// is given) with the existing DIR/ca.pem + ca.key, e.g. for an added node;
// it too refuses to replace files unless --force.
#ifndef LOCKSTEP_CONTROLLER_CLI_CERTS_COMMAND_H_
#define LOCKSTEP_CONTROLLER_CLI_CERTS_COMMAND_H_

#include <string>
#include <vector>

namespace lockstep {

// `args` are the words after "certs" ({"init", "--dir", "x", ...}).
// Returns the process exit code: 0 done (or --help), 1 failed (message on
// stderr naming the file or value), 2 usage error (usage on stderr).
int RunCertsCommand(const std::vector<std::string>& args);

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_CLI_CERTS_COMMAND_H_
