// `lockstep ior ...`, `lockstep mdtest ...` and `lockstep iozone ...`:
// translate, run, report, each a FrontEnd run by RunFrontEnd (front_end.h).
#ifndef LOCKSTEP_CONTROLLER_CLI_CLI_COMMANDS_H_
#define LOCKSTEP_CONTROLLER_CLI_CLI_COMMANDS_H_

#include <atomic>
#include <string>
#include <vector>

namespace lockstep {

// `args` excludes the program and the subcommand. Returns the exit code.
int IorCommand(const std::vector<std::string>& args, const std::string& command_line,
               const std::atomic<bool>* interrupted);
int MdtestCommand(const std::vector<std::string>& args, const std::string& command_line,
                  const std::atomic<bool>* interrupted);
// `lockstep iozone ...` (iozone_command.cc).
int IozoneCommand(const std::vector<std::string>& args, const std::string& command_line,
                  const std::atomic<bool>* interrupted);
// `lockstep dlio CONFIG.yaml ...` (dlio_command.cc).
int DlioCommand(const std::vector<std::string>& args, const std::string& command_line,
                const std::atomic<bool>* interrupted);

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_CLI_CLI_COMMANDS_H_
