// lockstep: the controller CLI.
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_join.h"
#include "common/log.h"
#include "common/tls.h"
#include "controller/certs_command.h"
#include "controller/cli_commands.h"
#include "controller/coordinator.h"
#include "controller/history.h"
#include "controller/journal_report.h"
#include "controller/results_commands.h"
#include "controller/exit_codes.h"
#include "controller/plan.h"

ABSL_FLAG(int, local, 0, "start N agents on loopback (the embedded default) instead of the plan's");
ABSL_FLAG(std::string, out, "./lockstep-results", "results directory; each run gets <out>/<run-id>/");
ABSL_FLAG(bool, insecure, false, "plaintext gRPC to agents; allowed only for loopback addresses");
ABSL_FLAG(std::string, local_root, "",
          "with --local: the agents' allowed root (default: a new directory under /tmp, removed "
          "afterwards)");
ABSL_FLAG(bool, force, false, "run even where an agent has less free space than its share");
ABSL_FLAG(std::string, db, "", "history database (default <out>/history.db)");
ABSL_FLAG(bool, history, true, "record the run in the history database");
ABSL_FLAG(std::string, site, "", "site name recorded with the run (for comparing sites)");
ABSL_FLAG(std::vector<std::string>, tag, {}, "tags recorded with the run (comma-separated)");
ABSL_FLAG(std::string, tls_dir, "",
          "directory made by deploy/certs.sh: uses ca.pem, controller.pem, controller.key");
ABSL_FLAG(std::string, tls_ca, "", "CA certificate (PEM) agents must chain to (overrides --tls_dir)");
ABSL_FLAG(std::string, tls_cert, "", "controller certificate (PEM) (overrides --tls_dir)");
ABSL_FLAG(std::string, tls_key, "", "controller private key (PEM) (overrides --tls_dir)");

namespace lockstep {
namespace {

std::atomic<bool> g_interrupted{false};

void OnSignal(int) { g_interrupted.store(true); }

constexpr char kUsage[] =
    "usage:\n"
    "  lockstep run [--local N] [--out DIR] [--insecure | --tls_dir DIR] PLAN.toml\n"
    "  lockstep history [--db F] [--plan NAME] [--site S] [--tag T] [--since DATE] [--limit N]\n"
    "  lockstep import RUN.json... | lockstep export RUN_ID [OUT.json]\n"
    "  lockstep compare RUN RUN [RUN...]\n"
    "  lockstep gate RUN --baseline ID|PATH|last-good [--max-drop 5%] [--noise-window N] [--junit FILE]\n"
    "  lockstep report RUN... --html FILE [--csv FILE]\n"
    "  lockstep report RUN_DIR      (summary again; rebuilt from journal.jsonl if run.json is missing)\n"
    "  lockstep ior <IOR options> [--agents H:P,... | --hostfile F | --local N] [--out DIR]\n"
    "  lockstep mdtest <mdtest options> [--tasks N] [--agents ... as for ior]\n"
    "  lockstep certs init --dir DIR [--agent NAME[,SAN...]]... [--controller NAME]\n"
    "\n"
    "Runs PLAN.toml on its agents (or on N local agents) and prints IOR-style results;\n"
    "writes <out>/<run-id>/{plan.toml,run.json,summary.txt,journal.jsonl}.\n";

int RunCommand(int argc, char** argv, const std::string& command_line) {
  std::vector<char*> positional = absl::ParseCommandLine(argc, argv);
  if (positional.size() != 2) {
    std::fprintf(stderr, "%s", kUsage);
    return kExitUsage;
  }
  auto plan = LoadPlan(positional[1]);
  if (!plan.ok()) {
    std::fprintf(stderr, "lockstep: %s\n", std::string(plan.status().message()).c_str());
    return kExitUsage;
  }
  RunOptions options;
  options.out_dir = absl::GetFlag(FLAGS_out);
  options.local_agents = absl::GetFlag(FLAGS_local);
  if (options.local_agents < 0 || options.local_agents > 256) {
    std::fprintf(stderr, "lockstep: --local %d: use 1 to 256 agents\n", options.local_agents);
    return kExitUsage;
  }
  options.insecure = absl::GetFlag(FLAGS_insecure);
  options.force = absl::GetFlag(FLAGS_force);
  options.local_root = absl::GetFlag(FLAGS_local_root);
  if (!options.insecure) {
    std::string dir = absl::GetFlag(FLAGS_tls_dir);
    TlsFiles files;
    files.ca_pem = !absl::GetFlag(FLAGS_tls_ca).empty() ? absl::GetFlag(FLAGS_tls_ca)
                   : dir.empty()                        ? ""
                                                        : dir + "/ca.pem";
    files.cert_pem = !absl::GetFlag(FLAGS_tls_cert).empty() ? absl::GetFlag(FLAGS_tls_cert)
                     : dir.empty()                          ? ""
                                                            : dir + "/controller.pem";
    files.key_pem = !absl::GetFlag(FLAGS_tls_key).empty() ? absl::GetFlag(FLAGS_tls_key)
                    : dir.empty()                         ? ""
                                                          : dir + "/controller.key";
    if (!files.ca_pem.empty() || !files.cert_pem.empty() || !files.key_pem.empty()) {
      auto creds = MakeChannelCredentials(files);
      if (!creds.ok()) {
        std::fprintf(stderr, "lockstep: %s\n", std::string(creds.status().message()).c_str());
        return kExitUsage;
      }
      options.credentials = *creds;
    }
  }
  options.command_line = command_line;
  options.print = [](const std::string& s) {
    std::fwrite(s.data(), 1, s.size(), stdout);
    std::fflush(stdout);
  };
  if (::isatty(2)) {
    options.progress = [](const std::string& s) {
      std::fprintf(stderr, "\r\033[K%s", s.c_str());
      std::fflush(stderr);
    };
  } else {
    options.print_progress_lines = [](const std::string& s) {
      std::fprintf(stderr, "progress: %s\n", s.c_str());
    };
  }
  options.interrupted = &g_interrupted;
  struct sigaction sa = {};
  sa.sa_handler = OnSignal;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  RunOutcome outcome = RunPlan(*plan, options);
  if (outcome.exit_code != kExitOk) {
    std::fprintf(stderr, "lockstep: %s\n", outcome.error.c_str());
  }
  if (absl::GetFlag(FLAGS_history) && !outcome.run_dir.empty()) {
    std::string db = absl::GetFlag(FLAGS_db);
    if (db.empty()) db = options.out_dir + "/history.db";
    auto store = HistoryStore::Open(db);
    absl::Status s = store.ok() ? (*store)->Record(outcome.record, absl::GetFlag(FLAGS_site),
                                                   absl::GetFlag(FLAGS_tag))
                                : store.status();
    if (!s.ok()) {
      std::fprintf(stderr,
                   "lockstep: warning: run not recorded in history (%s); its files are in %s and "
                   "`lockstep import %s/run.json` records it later\n",
                   std::string(s.message()).c_str(), outcome.run_dir.c_str(),
                   outcome.run_dir.c_str());
    }
  }
  return outcome.exit_code;
}

int Main(int argc, char** argv) {
  SetLogTag("lockstep");
  absl::SetProgramUsageMessage(kUsage);
  std::vector<std::string> words(argv, argv + argc);
  std::string command_line = absl::StrJoin(words, " ");
  if (argc < 2) {
    std::fprintf(stderr, "%s", kUsage);
    return kExitUsage;
  }
  std::string cmd = argv[1];
  if (cmd == "run") {
    // Let absl see "lockstep run ..." as the program and its flags.
    return RunCommand(argc - 1, argv + 1, command_line);
  }
  std::vector<std::string> rest(argv + 2, argv + argc);
  if (cmd == "ior" || cmd == "mdtest") {
    struct sigaction sa = {};
    sa.sa_handler = OnSignal;
    sigaction(SIGINT, &sa, nullptr);
    sigaction(SIGTERM, &sa, nullptr);
    return cmd == "ior" ? IorCommand(rest, command_line, &g_interrupted)
                        : MdtestCommand(rest, command_line, &g_interrupted);
  }
  if (cmd == "history") return HistoryCommand(rest);
  if (cmd == "import") return ImportCommand(rest);
  if (cmd == "export") return ExportCommand(rest);
  if (cmd == "compare") return CompareCommand(rest);
  if (cmd == "gate") return GateCommand(rest);
  if (cmd == "report") {
    // `lockstep report RUN_DIR`: the summary again, rebuilt from the journal
    // if run.json is missing; with --html/--csv/...: the HTML report.
    if (rest.size() == 1 && rest[0].rfind("--", 0) != 0 &&
        ::access((rest[0] + "/journal.jsonl").c_str(), F_OK) == 0) {
      return ReportRunDirCommand(rest[0]);
    }
    return ReportHtmlCommand(rest);
  }
  if (cmd == "certs") {
    return RunCertsCommand(std::vector<std::string>(argv + 2, argv + argc));
  }
  if (cmd == "--help" || cmd == "-h" || cmd == "help") {
    std::printf("%s", kUsage);
    return kExitOk;
  }
  std::fprintf(stderr, "lockstep: unknown command \"%s\"\n%s", cmd.c_str(), kUsage);
  return kExitUsage;
}

}  // namespace
}  // namespace lockstep

int main(int argc, char** argv) { return lockstep::Main(argc, argv); }
