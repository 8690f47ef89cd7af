// lockstep: the controller CLI.
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <new>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/build_info.h"
#include "common/files.h"
#include "common/flags.h"
#include "common/log.h"
#include "common/tls.h"
#include "controller/cli/agents_command.h"
#include "controller/cli/certs_command.h"
#include "controller/io500/io500_command.h"
#include "controller/cli/printed_report.h"
#include "controller/cli/push_command.h"
#include "controller/cli/reach_agents.h"
#include "controller/cli/cli_commands.h"
#include "controller/cli/command_specs.h"
#include "controller/run/coordinator.h"
#include "controller/cli/cli_common.h"
#include "controller/results/history.h"
#include "controller/cli/bundle_commands.h"
#include "controller/cli/results_commands.h"
#include "controller/cli/run_preview.h"
#include "controller/cli/exit_codes.h"
#include "controller/plan/plan.h"
#include "controller/plan/write_places.h"

namespace lockstep {
namespace {

std::atomic<bool> g_interrupted{false};

// The first SIGINT/SIGTERM asks the run to stop: it aborts the phase,
// removes files for at most a few hundred ms, writes run.json and exits 130
// within a second. A second one exits at once; the agents then remove the
// run's files when its lease expires.
void OnSignal(int) {
  if (!g_interrupted.exchange(true)) return;
  static constexpr char kMessage[] =
      "\nlockstep: interrupted again: exiting now; the agents remove the run's files when its "
      "lease expires\n";
  (void)!::write(2, kMessage, sizeof(kMessage) - 1);
  ::_exit(kExitInterrupted);
}

void HandleSignals() {
  struct sigaction sa = {};
  sa.sa_handler = OnSignal;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

// "unknown command "X"; did you mean Y? (commands: ...)".
std::string UnknownCommand(const std::string& word) {
  std::vector<std::string> names;
  for (const CommandSpec* c : LockstepCommands()) names.emplace_back(c->name);
  std::string close = ClosestName(word, names);
  return absl::StrCat("unknown command \"", word, "\"",
                      close.empty() ? "" : absl::StrCat("; did you mean ", close, "?"),
                      " (commands: ", absl::StrJoin(names, ", "), "; see lockstep --help)");
}

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
  if (s.ok()) return std::nullopt;
  std::fprintf(stderr, "lockstep: %s\n", std::string(s.message()).c_str());
  return kExitUsage;
}

// `--push URL` or the plan's [run] push: the run goes to the results
// service (or waits in the spool); the run's exit code stays its own.
void PushAtRunEnd(const ParsedFlags& f, const Plan& plan, const std::string& out_dir,
                  const std::string& run_dir) {
  auto pick = [&f, &plan](const char* key) {
    return f.GetString(key).empty() ? PlanRunString(plan.text, key) : f.GetString(key);
  };
  PushSettings s{.url = pick("push"), .credentials = pick("push_credentials"),
                 .ca = pick("push_ca"), .site = f.GetString("site"),
                 .spool = f.GetString("spool"),
                 .db = f.GetString("db").empty() ? out_dir + "/history.db" : f.GetString("db")};
  if (s.url.empty() || run_dir.empty()) return;
  if (PushRunDirectory(s, run_dir) != kExitOk) {
    std::fprintf(stderr, "lockstep: warning: run %s was not pushed to %s (see above)\n",
                 run_dir.c_str(), s.url.c_str());
  }
}

int RunCommand(const std::vector<std::string>& args, const std::string& command_line) {
  const CommandSpec& spec = RunCommandSpec();
  auto flags = ParseFlags(args, spec);
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
  if (f.GetBool("dry-run")) return DryRun(f, *plan);
  RunOptions options;
  options.out_dir = f.GetString("out");
  options.local_agents = static_cast<int>(f.GetUint("local"));
  options.insecure = f.GetBool("insecure");
  options.force = f.GetBool("force");
  options.local_root = f.GetString("local_root");
  if (absl::Status tls = TlsFromFlags(f, &options); !tls.ok()) {
    std::fprintf(stderr, "lockstep: %s\n", std::string(tls.message()).c_str());
    return kExitUsage;
  }
  HandleSignals();
  auto agents = AgentsFromFlags(f, absl::Milliseconds(plan->connect_timeout_ms), &g_interrupted);
  if (!agents.ok()) {
    std::fprintf(stderr, "lockstep: %s\n", std::string(agents.status().message()).c_str());
    if (absl::IsCancelled(agents.status())) return kExitInterrupted;
    return absl::IsInvalidArgument(agents.status()) ? kExitUsage : kExitConnect;
  }
  options.agents = *std::move(agents);
  if (auto refused = RefuseLocalWritePlaces(f, *plan, options)) return *refused;
  options.command_line = command_line;
  // A plan's report is IOR's at -v: with the Max Write/Read lines.
  options.record_fields.set_ior_verbose(true);
  PrintedReport report(options.record_fields);
  report.Attach(&options);
  ShowProgress(&options, /*lines_otherwise=*/true);
  options.interrupted = &g_interrupted;
  RunOutcome outcome = RunPlan(*plan, options);
  if (outcome.failure != RunFailure::kNone) {
    std::fprintf(stderr, "lockstep: %s\n", outcome.error.c_str());
  }
  RecordRunInHistory(f, options.out_dir, outcome, "lockstep");
  PushAtRunEnd(f, *plan, options.out_dir, outcome.run_dir);
  return ExitCodeFor(outcome.failure);
}

// `lockstep help [COMMAND]`, `lockstep --help`; `lockstep help --man` prints
// lockstep.1 (the build makes the installed man page with it).
int HelpCommand(const std::vector<std::string>& args) {
  const CommandSpec& spec = HelpCommandSpec();
  auto f = ParseFlags(args, spec);
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

int Main(int argc, char** argv) {
  SetLogTag("lockstep");
  std::vector<std::string> words(argv, argv + argc);
  std::string command_line = absl::StrJoin(words, " ");
  if (argc < 2) {
    std::fputs(FormatProgramHelp(LockstepProgram()).c_str(), stderr);
    return kExitUsage;
  }
  const std::string cmd = argv[1];
  const std::vector<std::string> rest(argv + 2, argv + argc);
  if (cmd == "--help" || cmd == "-h" || cmd == "help") return HelpCommand(rest);
  if (cmd == "--version") {
    std::printf("%s\n", VersionLine("lockstep").c_str());
    return kExitOk;
  }
  const CommandSpec* spec = FindLockstepCommand(cmd);
  if (spec == nullptr) {
    std::fprintf(stderr, "lockstep: %s\n", UnknownCommand(cmd).c_str());
    return kExitUsage;
  }
  if (cmd == "run") return RunCommand(rest, command_line);
  if (cmd == "ior" || cmd == "mdtest" || cmd == "iozone") {
    // IOR's, mdtest's and IOzone's own options are theirs (-h included): the
    // translators parse the line; only help is answered here.
    for (const std::string& a : rest) {
      if (a == "--help" || a == "-h") {
        std::fputs(FormatCommandHelp(*spec).c_str(), stdout);
        return kExitOk;
      }
    }
    HandleSignals();
    if (cmd == "iozone") return IozoneCommand(rest, command_line, &g_interrupted);
    return cmd == "ior" ? IorCommand(rest, command_line, &g_interrupted)
                        : MdtestCommand(rest, command_line, &g_interrupted);
  }
  if (cmd == "dlio") {
    HandleSignals();
    return DlioCommand(rest, command_line, &g_interrupted);
  }
  if (cmd == "io500") {
    HandleSignals();
    return Io500Command(rest, command_line, &g_interrupted);
  }
  if (cmd == "history") return HistoryCommand(rest);
  if (cmd == "import") return ImportCommand(rest);
  if (cmd == "export") return ExportCommand(rest);
  if (cmd == "compare") return CompareCommand(rest);
  if (cmd == "gate") return GateCommand(rest);
  if (cmd == "report") return ReportCommand(rest);
  if (cmd == "verify") return VerifyCommand(rest);
  if (cmd == "push") return PushCommand(rest);
  if (cmd == "certs") return RunCertsCommand(rest);
  if (cmd == "check") return CheckCommand(rest);
  if (cmd == "agents") {
    HandleSignals();
    return AgentsCommand(rest, &g_interrupted);
  }
  std::fprintf(stderr, "lockstep: command %s has a table but no handler\n", cmd.c_str());
  return kExitFailure;
}

constexpr char kOutOfMemory[] =
    "lockstep: out of memory (std::bad_alloc): this host (or its ulimit -v) cannot hold what "
    "was asked; lower the plan's sizes, phases or sweep, or raise the memory limit\n";

// A std::bad_alloc on another thread than main's ends here too, with the
// same message and code, not as an abort (exit 134).
[[noreturn]] void OnTerminate() {
  if (std::exception_ptr e = std::current_exception()) {
    try {
      std::rethrow_exception(e);
    } catch (const std::bad_alloc&) {
      (void)!::write(2, kOutOfMemory, sizeof(kOutOfMemory) - 1);
      ::_exit(kExitOutOfMemory);
    } catch (...) {
    }
  }
  std::abort();
}

// main's boundary: no std::bad_alloc escapes (our code does not throw;
// allocation can).
int GuardedMain(int argc, char** argv) {
  std::set_terminate(OnTerminate);
  try {
    return Main(argc, argv);
  } catch (const std::bad_alloc&) {
    (void)!::write(2, kOutOfMemory, sizeof(kOutOfMemory) - 1);
    return kExitOutOfMemory;
  }
}

}  // namespace
}  // namespace lockstep

int main(int argc, char** argv) { return lockstep::GuardedMain(argc, argv); }
