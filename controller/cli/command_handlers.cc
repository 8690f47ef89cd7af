#include "controller/cli/command_handlers.h"

#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/build_info.h"
#include "common/files.h"
#include "common/tls.h"
#include "controller/cli/agents_command.h"
#include "controller/cli/bundle_commands.h"
#include "controller/cli/certs_command.h"
#include "controller/cli/cli_commands.h"
#include "controller/cli/cli_common.h"
#include "controller/cli/command_specs.h"
#include "controller/cli/exit_codes.h"
#include "controller/cli/printed_report.h"
#include "controller/cli/push_command.h"
#include "controller/cli/reach_agents.h"
#include "controller/cli/results_commands.h"
#include "controller/cli/run_preview.h"
#include "controller/io500/io500_command.h"
#include "controller/plan/plan.h"
#include "controller/plan/write_places.h"
#include "controller/results/history.h"
#include "controller/results/visibility.h"
#include "controller/run/coordinator.h"

namespace lockstep {

std::string UnknownCommand(const std::string& word) {
  std::vector<std::string> names;
  for (const CommandSpec* c : LockstepCommands()) names.emplace_back(c->name);
  std::string close = ClosestName(word, names);
  return absl::StrCat("unknown command \"", word, "\"",
                      close.empty() ? "" : absl::StrCat("; did you mean ", close, "?"),
                      " (commands: ", absl::StrJoin(names, ", "), "; see lockstep --help)");
}

namespace {

// Local agents take the plan's directories as their roots: where the plan
// may write is checked here, as a real agent's --root list would (kExitUsage
// and the plan line when refused).
std::optional<int> RefuseLocalWritePlaces(const ParsedFlags& f, const Plan& plan,
                                          const RunOptions& options) {
  if (options.local_agents == 0 && (!options.agents.empty() || !plan.agents.empty())) {
    return std::nullopt;
  }
  std::error_code ec;
  LocalWritePlaces places;
  places.cwd = std::filesystem::current_path(ec).string();
  if (!options.local_root.empty()) {
    places.local_root = std::filesystem::absolute(options.local_root, ec).lexically_normal();
  }
  places.roots = f.GetList("root");
  absl::Status s = CheckLocalWritePlaces(plan, places);
  if (s.ok() && !options.local_root.empty()) {  // the agents' root itself, as a plan's dir
    s = CheckLocalWritePlace(options.local_root, places, "--local_root");
  }
  if (s.ok()) return std::nullopt;
  std::fprintf(stderr, "lockstep: %s\n", std::string(s.message()).c_str());
  return kExitUsage;
}

// `--push URL` or the plan's [run] push: where the run goes at its end,
// each flag over the plan's key of its name (an empty url: nowhere), decided
// before anything runs. kExitUsage, said on stderr, for a visibility the
// service would not take.
std::optional<int> PushSettingsOf(const ParsedFlags& f, const Plan& plan,
                                  const std::string& out_dir, PushSettings* s) {
  auto pick = [&f, &plan](const char* key) {
    return f.GetString(key).empty() ? PlanRunString(plan.text, key) : f.GetString(key);
  };
  *s = {.url = pick("push"), .credentials = pick("push_credentials"), .ca = pick("push_ca"),
        .site = f.GetString("site"), .spool = f.GetString("spool"),
        .db = f.GetString("db").empty() ? out_dir + "/history.db" : f.GetString("db")};
  const std::string words = pick("push_visibility");
  if (s->url.empty() || words.empty()) return std::nullopt;
  absl::StatusOr<RunVisibility> v = ParseRunVisibility(words);
  absl::Status checked =
      v.ok() ? CheckChosenVisibility(*v, absl::ToUnixSeconds(absl::Now())) : v.status();
  if (checked.ok()) {
    s->visibility = *v;
    return std::nullopt;
  }
  std::fprintf(stderr, "lockstep: --push_visibility or [run] push_visibility: %s\n",
               std::string(checked.message()).c_str());
  return kExitUsage;
}

// The run goes to the results service (or waits in the spool); the run's
// exit code stays its own.
void PushAtRunEnd(const PushSettings& s, const std::string& run_dir) {
  if (s.url.empty() || run_dir.empty()) return;
  if (PushRunDirectory(s, run_dir) != kExitOk) {
    std::fprintf(stderr, "lockstep: warning: run %s was not pushed to %s (see above)\n",
                 run_dir.c_str(), s.url.c_str());
  }
}

}  // namespace

int RunCommand(const CommandCall& call) {
  const CommandSpec& spec = RunCommandSpec();
  auto flags = ParseFlags(call.args, spec);
  if (auto code = HelpOrUsageExit(spec, flags)) return *code;
  const ParsedFlags& f = *flags;
  if (f.positional().size() != 1) {
    std::fprintf(stderr, "lockstep run: give one PLAN.toml%s\n%s",
                 f.positional().empty()
                     ? ""
                     : absl::StrCat(", not ", absl::StrJoin(f.positional(), " ")).c_str(),
                 FormatUsage(spec).c_str());
    return kExitUsage;
  }
  auto plan = LoadPlan(f.positional()[0]);
  if (!plan.ok()) {
    std::fprintf(stderr, "lockstep: %s\n", std::string(plan.status().message()).c_str());
    return kExitUsage;
  }
  if (f.GetBool("smoke")) ApplySmoke(f, &*plan);
  PushSettings push;
  if (auto refused = PushSettingsOf(f, *plan, f.GetString("out"), &push)) return *refused;
  if (f.GetBool("dry-run")) return DryRun(f, *plan);
  RunOptions options;
  options.out_dir = f.GetString("out");
  options.local_agents = static_cast<int>(f.GetUint("local"));
  options.insecure = f.GetBool("insecure");
  options.force = f.GetBool("force");
  options.local_root = f.GetString("local_root");
  options.named_roots = f.GetList("root");
  if (absl::Status tls = TlsFromFlags(f, &options); !tls.ok()) {
    std::fprintf(stderr, "lockstep: %s\n", std::string(tls.message()).c_str());
    return kExitUsage;
  }
  call.watch_signals();
  auto agents =
      AgentsFromFlags(f, absl::Milliseconds(plan->connect_timeout_ms), call.interrupted);
  if (!agents.ok()) {
    std::fprintf(stderr, "lockstep: %s\n", std::string(agents.status().message()).c_str());
    if (absl::IsCancelled(agents.status())) return kExitInterrupted;
    return absl::IsInvalidArgument(agents.status()) ? kExitUsage : kExitConnect;
  }
  options.agents = *std::move(agents);
  if (auto refused = RefuseLocalWritePlaces(f, *plan, options)) return *refused;
  options.command_line = call.command_line;
  // A plan's report is IOR's at -v: with the Max Write/Read lines.
  options.record_fields.set_ior_verbose(true);
  PrintedReport report(options.record_fields);
  report.Attach(&options);
  ShowProgress(&options, /*lines_otherwise=*/true);
  options.interrupted = call.interrupted;
  RunOutcome outcome = RunPlan(*plan, options);
  if (outcome.failure != RunFailure::kNone) {
    std::fprintf(stderr, "lockstep: %s\n", outcome.error.c_str());
  }
  RecordRunInHistory(f, options.out_dir, outcome, "lockstep");
  PushAtRunEnd(push, outcome.run_dir);
  return ExitCodeFor(outcome.failure);
}

// `lockstep help [COMMAND]`, `lockstep --help`; `lockstep help --man` prints
// lockstep.1 (the build makes the installed man page with it).
int HelpCommand(const CommandCall& call) {
  const CommandSpec& spec = HelpCommandSpec();
  auto f = ParseFlags(call.args, spec);
  if (auto code = HelpOrUsageExit(spec, f)) return *code;
  if (f->GetBool("man")) {
    std::fputs(FormatManPage(LockstepProgram(), LOCKSTEP_VERSION).c_str(), stdout);
    return kExitOk;
  }
  if (f->GetBool("bash-completion")) {
    std::fputs(FormatBashCompletion(LockstepProgram()).c_str(), stdout);
    return kExitOk;
  }
  if (f->positional().empty()) {
    std::fputs(FormatProgramHelp(LockstepProgram()).c_str(), stdout);
    return kExitOk;
  }
  const CommandSpec* command = FindLockstepCommand(f->positional()[0]);
  if (f->positional().size() > 1 || command == nullptr) {
    std::fprintf(stderr, "lockstep help: %s\n", UnknownCommand(absl::StrJoin(f->positional(), " ")).c_str());
    return kExitUsage;
  }
  std::fputs(FormatCommandHelp(*command).c_str(), stdout);
  return kExitOk;
}

namespace {

// A wrapped tool's `--help` or `-h` anywhere on its line: our help.
std::optional<int> ToolHelp(const CommandSpec& spec, const CommandCall& call) {
  for (const std::string& a : call.args) {
    if (a == "--help" || a == "-h") {
      std::fputs(FormatCommandHelp(spec).c_str(), stdout);
      return kExitOk;
    }
  }
  return std::nullopt;
}

}  // namespace

int IorHandler(const CommandCall& call) {
  if (auto help = ToolHelp(IorCommandSpec(), call)) return *help;
  call.watch_signals();
  return IorCommand(call.args, call.command_line, call.interrupted);
}

int MdtestHandler(const CommandCall& call) {
  if (auto help = ToolHelp(MdtestCommandSpec(), call)) return *help;
  call.watch_signals();
  return MdtestCommand(call.args, call.command_line, call.interrupted);
}

int IozoneHandler(const CommandCall& call) {
  if (auto help = ToolHelp(IozoneCommandSpec(), call)) return *help;
  call.watch_signals();
  return IozoneCommand(call.args, call.command_line, call.interrupted);
}

int Io500Handler(const CommandCall& call) {
  call.watch_signals();
  return Io500Command(call.args, call.command_line, call.interrupted);
}

int DlioHandler(const CommandCall& call) {
  call.watch_signals();
  return DlioCommand(call.args, call.command_line, call.interrupted);
}

int AgentsHandler(const CommandCall& call) {
  call.watch_signals();
  return AgentsCommand(call.args, call.interrupted);
}

int CheckHandler(const CommandCall& call) { return CheckCommand(call.args); }
int HistoryHandler(const CommandCall& call) { return HistoryCommand(call.args); }
int ImportHandler(const CommandCall& call) { return ImportCommand(call.args); }
int ExportHandler(const CommandCall& call) { return ExportCommand(call.args); }
int CompareHandler(const CommandCall& call) { return CompareCommand(call.args); }
int GateHandler(const CommandCall& call) { return GateCommand(call.args); }
int ReportHandler(const CommandCall& call) { return ReportCommand(call.args); }
int VerifyHandler(const CommandCall& call) { return VerifyCommand(call.args); }
int PushHandler(const CommandCall& call) { return PushCommand(call.args); }
int CertsHandler(const CommandCall& call) { return RunCertsCommand(call.args); }

}  // namespace lockstep
