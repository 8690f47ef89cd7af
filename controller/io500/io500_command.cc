#include "controller/io500/io500_command.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/files.h"
#include "controller/plan/plan.h"
#include "common/flags.h"
#include "common/status_macros.h"
#include "controller/cli/cli_common.h"
#include "controller/cli/command_specs.h"
#include "controller/cli/exit_codes.h"
#include "controller/cli/front_end.h"
#include "controller/ior/ior_cli.h"
#include "controller/cli/reach_agents.h"
#include "controller/io500/io500_config.h"
#include "controller/io500/io500_output.h"
#include "controller/io500/io500_plan.h"
#include "controller/io500/io500_results.h"
#include "controller/plan/write_places.h"
#include "controller/results/history.h"
#include "controller/cli/printed_report.h"
#include "controller/run/coordinator.h"

namespace lockstep {
namespace {

namespace fs = std::filesystem;

// Everything one run needs, decided before it starts.
struct Io500Run {
  Io500Config config;
  Io500Setup setup;
  std::vector<std::string> notes;
};

// The directories and the plan of run->config (into *plan, through
// `lockstep run`'s checks); `o` holds the agents.
absl::Status SetUp(const ParsedFlags& f, RunOptions* o, Io500Run* run, Plan* plan) {
  const Io500Config& c = run->config;
  Io500Setup& s = run->setup;
  // Named agents: one client for sure, or the count is learnt at Attach (0).
  const uint32_t clients = ClientAgentCount(*o);
  s.client_agents = o->agents.empty() || clients == 1 ? clients : 0;
  const int64_t now_s = absl::ToUnixSeconds(absl::Now());
  const std::string stamp = Io500DirTimestamp(now_s);
  s.datadir = AbsolutePath(c.timestamp_datadir ? c.datadir + "/" + stamp : c.datadir);
  s.resultdir = AbsolutePath(c.timestamp_resultdir ? c.resultdir + "/" + stamp : c.resultdir);
  s.tasks_per_agent = static_cast<uint32_t>(f.GetUint("tasks-per-agent"));
  s.stonewall_seconds =
      f.Has("stonewall-s") ? static_cast<uint32_t>(f.GetUint("stonewall-s")) : c.stonewall_seconds;
  s.seed = static_cast<uint64_t>(now_s);  // the data pattern's seed
  s.timestamp = stamp;                    // IO500's -G of each group (Io500PhaseSeed)
  const bool local = o->local_agents > 0;
  // Where it may write, before anything is created: the ini names both
  // directories (as a command line would), but a system directory only
  // with --root.
  const LocalWritePlaces places = CommandLineWritePlaces(f.GetList("root"));
  if (local) {
    RETURN_IF_ERROR(UsageError(CheckLocalWritePlace(s.datadir, places, "[global] datadir")));
  }
  RETURN_IF_ERROR(UsageError(CheckLocalWritePlace(s.resultdir, places, "[global] resultdir")));
  std::string note;
  RETURN_IF_ERROR(UsageError(PrepareIo500DataDir(s.datadir, local, &note)));
  if (!note.empty()) run->notes.push_back(note);
  std::error_code ec;
  fs::create_directories(s.resultdir, ec);
  if (ec) {
    return absl::InternalError(absl::StrFormat(
        "cannot create the result directory %s: %s; fix [global] resultdir", s.resultdir,
        ec.message()));
  }
  *plan = BuildIo500Plan(c, s, &run->notes);
  RETURN_IF_ERROR(UsageError(SetPlanText(plan, "io500")));
  if (s.stonewall_seconds != kIo500StonewallSeconds) {
    run->notes.push_back(absl::StrFormat("stonewall %u s, not 300: the run is [INVALID] for "
                                         "IO500",
                                         s.stonewall_seconds));
  }
  if (local) o->local_root = s.datadir;
  return absl::OkStatus();
}

// IO500's timestampfile: made before the run, its time set afterwards to
// the instant of the timestamp phase (find's -newer reference).
void TouchTimestampFile(const std::string& resultdir, int64_t unix_ns) {
  const std::string path = resultdir + "/timestampfile";
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return;
  if (unix_ns > 0) {
    struct timespec t[2];
    t[0].tv_sec = t[1].tv_sec = unix_ns / 1000000000;
    t[0].tv_nsec = t[1].tv_nsec = unix_ns % 1000000000;
    ::futimens(fd, t);
  }
  ::close(fd);
}

// IO500's u_purge_datadir: the sub-directories and the data directory,
// each only when empty (what a failed phase left stays for a look).
void PurgeDataDir(const std::string& datadir) {
  for (const char* sub : kIo500DataSubdirs) ::rmdir((datadir + "/" + sub).c_str());
  ::rmdir(datadir.c_str());
}

// `record`: the run's, with the per-agent records of its phases.
absl::Status WriteOutputs(const Io500Run& run, const RunOutcome& outcome,
                          const v1::RunRecord& record) {
  Io500RunOutput out;
  const Io500Setup& s = run.setup;
  out.procs = record.tests_size() > 0 ? record.tests(0).total_tasks() : 0;
  absl::Time began;
  std::string unparsed;
  if (absl::ParseTime(absl::RFC3339_full, record.started_at(), &began, &unparsed)) {
    out.start_unix_ns = absl::ToUnixNanos(began);
  }
  out.version = absl::StrCat("lockstep-", LOCKSTEP_VERSION);
  out.verbosity = run.config.verbosity;
  out.end_unix_ns = absl::ToUnixNanos(absl::Now());  // IO500's "; END": after the cleanup
  out.config_hash = Io500ConfigHash(run.config);
  out.result_dir = s.resultdir;
  out.stonewall_seconds = s.stonewall_seconds;
  out.config_orig = run.config.text;
  out.config_resolved = ResolvedIo500Config(run.config);
  out.lockstep_run_dir = outcome.run_dir;
  out.notes = run.notes;
  const std::string stopped = outcome.failure == RunFailure::kNone ? "" : outcome.error;
  out.phases = Io500PhasesFromRecord(record, run.config, s, outcome.run_dir, stopped);
  for (const Io500PhaseOutput& p : out.phases) {
    if (p.figures.name == "timestamp") TouchTimestampFile(s.resultdir, p.start_unix_ns);
  }
  RETURN_IF_ERROR(WriteIo500Output(out, s.resultdir));
  // StrCat, not "\n" + string&&: GCC 12 warns falsely there (-Wrestrict, bug 105329).
  PrintToStdout(absl::StrCat("\n", FormatIo500Summary(out)));
  PrintToStdout(absl::StrFormat("# lockstep io500: IO500's files are in %s\n", s.resultdir));
  return absl::OkStatus();
}

// Whether this host sees the file system of `dir`, which does not exist:
// its nearest existing ancestor is not the root directory (IO500 makes the
// whole path, as mkdir -p; a controller without the agents' mount sees
// only "/" of "/lustre/scratch/io500").
bool VisibleHere(const fs::path& dir) {
  std::error_code ec;
  for (fs::path p = dir.parent_path(); !p.empty() && p != p.root_path(); p = p.parent_path()) {
    if (fs::is_directory(p, ec)) return true;
  }
  return false;
}

}  // namespace

absl::Status PrepareIo500DataDir(const std::string& datadir, bool must_see, std::string* note) {
  std::error_code ec;
  const fs::path dir(datadir);
  if (fs::exists(dir, ec)) {
    if (!fs::is_directory(dir, ec)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "[global] datadir %s exists and is not a directory; give a new or empty directory",
          datadir));
    }
    std::vector<std::string> names;
    for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
      names.push_back(e.path().filename().string());
      if (names.size() == 3) break;
    }
    if (!names.empty()) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "[global] datadir %s is not empty (it holds %s%s): IO500 does not reuse a data "
          "directory; remove what is in it, give another one, or set timestamp-datadir = TRUE",
          datadir, absl::StrJoin(names, ", "), names.size() == 3 ? ", ..." : ""));
    }
  } else if (!must_see && !VisibleHere(dir)) {
    *note = absl::StrFormat("the data directory %s is not visible on this host: create it and "
                            "%s/{ior-easy,ior-hard} on the agents' file system before the run",
                            datadir, datadir);
    return absl::OkStatus();
  }
  for (const char* sub : kIo500DataSubdirs) {
    fs::create_directories(dir / sub, ec);
    if (ec) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "cannot create %s/%s: %s; fix [global] datadir", datadir, sub, ec.message()));
    }
  }
  return absl::OkStatus();
}

namespace {

// IO500's ini and Lockstep's flags (ParsedFlags of Io500CommandSpec): the
// agents first (the plan needs the client count), then the directories and
// the plan; after the run IO500's files from every phase's per-agent
// records, also when a phase failed.
class Io500FrontEnd final : public FlagsFrontEnd {
 public:
  explicit Io500FrontEnd(const ParsedFlags& f) : FlagsFrontEnd(f) {}

  const char* name() const override { return "io500"; }
  // The ini, before any agent is reached.
  absl::StatusOr<CliCommand> Parse(const std::vector<std::string>& /*args*/,
                                   const FileReader& /*read_file*/) override {
    auto text = ReadInput("an IO500 ini file");
    if (!text.ok()) return text.status();
    auto config = ParseIo500Config(*text, f_.positional()[0]);
    if (!config.ok()) return UsageError(config.status());
    run_.config = *std::move(config);
    return CommandOfFlags();
  }
  absl::Status SetUpAgents(const std::atomic<bool>* interrupted, CliCommand* cmd,
                           RunOptions* o) override {
    RETURN_IF_ERROR(FrontEndAgentsFromFlags(f_, interrupted, o));
    RETURN_IF_ERROR(SetUp(f_, o, &run_, &cmd->plan));
    o->force = true;  // IO500's blockSize is a bound: the stonewall ends the writes
    ShowProgress(o, /*lines_otherwise=*/false);
    return absl::OkStatus();
  }
  // Lockstep's '#' lines as the run goes; IO500's summary instead of IOR's,
  // at the end.
  bool Describe(const CliCommand& /*cmd*/, v1::RunRecord* fields) override {
    fields->mutable_front_end_report()->set_tool("io500");
    PrintToStdout(absl::StrFormat("#%s\n# lockstep io500: data in %s, IO500's files in %s\n",
                                  Io500ProvenanceLine().substr(1), run_.setup.datadir,
                                  run_.setup.resultdir));
    for (const std::string& n : run_.notes) PrintToStdout(NoteLine(n));
    return true;
  }
  std::vector<RunObserver*> Observers() override { return {&agents_}; }
  std::optional<int> AfterRun(CliCommand* /*cmd*/, const RunOutcome& outcome,
                              const std::string& /*report_text*/) override {
    PurgeDataDir(run_.setup.datadir);
    absl::Status written = WriteOutputs(run_, outcome, agents_.Full(outcome.record));
    if (!written.ok()) {
      std::fprintf(stderr, "lockstep io500: IO500's files: %s\n",
                   std::string(written.message()).c_str());
      if (outcome.failure == RunFailure::kNone) return kExitFailure;
    }
    return ExitCodeFor(outcome.failure);
  }

 private:
  Io500Run run_;
  // IO500's files read every phase's per-agent records, a failed one's too,
  // and print the IOR phases' telemetry lines.
  PhaseAgents agents_{/*keep_telemetry=*/true};
};

}  // namespace

int Io500Command(const std::vector<std::string>& args, const std::string& command_line,
                 const std::atomic<bool>* interrupted) {
  const CommandSpec& spec = Io500CommandSpec();
  auto flags = ParseFlags(args, spec);
  if (auto code = HelpOrUsageExit(spec, flags)) return *code;
  if (flags->positional().size() != 1) {
    std::fprintf(stderr, "lockstep io500: give one CONFIG.ini (IO500's configuration file)\n%s",
                 FormatUsage(spec).c_str());
    return kExitUsage;
  }
  Io500FrontEnd io500(*flags);
  return RunFrontEnd(io500, args, command_line, interrupted);
}

}  // namespace lockstep
