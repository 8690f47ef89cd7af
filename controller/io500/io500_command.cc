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
  Plan plan;
  RunOptions options;
  std::vector<std::string> notes;
};

int Fail(int code, const std::string& message) {
  std::fprintf(stderr, "lockstep io500: %s\n", message.c_str());
  return code;
}

// The agents (none: local ones) and the credentials; an exit code on error.
std::optional<int> ReachAgents(const ParsedFlags& f, const std::atomic<bool>* interrupted,
                               Io500Run* run) {
  RunOptions& o = run->options;
  if (auto e = FrontEndAgentsFromFlags(f, interrupted, &o)) {
    return e->message.empty() ? e->exit_code : Fail(e->exit_code, e->message);
  }
  // Named agents: one client for sure, or the count is learnt at Attach (0).
  const uint32_t clients = ClientAgentCount(o);
  run->setup.client_agents = o.agents.empty() || clients == 1 ? clients : 0;
  return std::nullopt;
}

// The configuration, the directories and the plan; an exit code on error.
std::optional<int> SetUp(const ParsedFlags& f, Io500Run* run) {
  const std::string& path = f.positional()[0];
  auto text = ReadPlanInput(path, "an IO500 ini file");
  if (!text.ok()) return Fail(kExitUsage, std::string(text.status().message()));
  auto config = ParseIo500Config(*text, path);
  if (!config.ok()) return Fail(kExitUsage, std::string(config.status().message()));
  run->config = *std::move(config);
  const Io500Config& c = run->config;
  Io500Setup& s = run->setup;
  const int64_t now_s = absl::ToUnixSeconds(absl::Now());
  const std::string stamp = Io500DirTimestamp(now_s);
  s.datadir = AbsolutePath(c.timestamp_datadir ? c.datadir + "/" + stamp : c.datadir);
  s.resultdir = AbsolutePath(c.timestamp_resultdir ? c.resultdir + "/" + stamp : c.resultdir);
  s.tasks_per_agent = static_cast<uint32_t>(f.GetUint("tasks-per-agent"));
  s.stonewall_seconds =
      f.Has("stonewall-s") ? static_cast<uint32_t>(f.GetUint("stonewall-s")) : c.stonewall_seconds;
  s.seed = static_cast<uint64_t>(now_s);  // the data pattern's seed
  s.timestamp = stamp;                    // IO500's -G of each group (Io500PhaseSeed)
  const bool local = run->options.local_agents > 0;
  // Where it may write, before anything is created: the ini names both
  // directories (as a command line would), but a system directory only
  // with --root.
  const LocalWritePlaces places = CommandLineWritePlaces(f.GetList("root"));
  if (local) {
    if (absl::Status w = CheckLocalWritePlace(s.datadir, places, "[global] datadir"); !w.ok()) {
      return Fail(kExitUsage, std::string(w.message()));
    }
  }
  if (absl::Status w = CheckLocalWritePlace(s.resultdir, places, "[global] resultdir"); !w.ok()) {
    return Fail(kExitUsage, std::string(w.message()));
  }
  std::string note;
  if (absl::Status d = PrepareIo500DataDir(s.datadir, local, &note); !d.ok()) {
    return Fail(kExitUsage, std::string(d.message()));
  }
  if (!note.empty()) run->notes.push_back(note);
  std::error_code ec;
  fs::create_directories(s.resultdir, ec);
  if (ec) {
    return Fail(kExitFailure, absl::StrFormat("cannot create the result directory %s: %s; fix "
                                              "[global] resultdir",
                                              s.resultdir, ec.message()));
  }
  run->plan = BuildIo500Plan(c, s, &run->notes);
  if (absl::Status s = SetPlanText(&run->plan, "io500"); !s.ok()) {
    return Fail(kExitUsage, std::string(s.message()));
  }
  if (s.stonewall_seconds != kIo500StonewallSeconds) {
    run->notes.push_back(absl::StrFormat("stonewall %u s, not 300: the run is [INVALID] for "
                                         "IO500",
                                         s.stonewall_seconds));
  }
  if (local) run->options.local_root = s.datadir;
  return std::nullopt;
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
  PrintToStdout("\n" + FormatIo500Summary(out));
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

int Io500Command(const std::vector<std::string>& args, const std::string& command_line,
                 const std::atomic<bool>* interrupted) {
  const CommandSpec& spec = Io500CommandSpec();
  auto flags = ParseFlags(args, spec);
  if (auto code = HelpOrUsageExit(spec, flags)) return *code;
  const ParsedFlags& f = *flags;
  if (f.positional().size() != 1) {
    std::fprintf(stderr, "lockstep io500: give one CONFIG.ini (IO500's configuration file)\n%s",
                 FormatUsage(spec).c_str());
    return kExitUsage;
  }
  Io500Run run;
  if (auto code = ReachAgents(f, interrupted, &run)) return *code;
  if (auto code = SetUp(f, &run)) return *code;
  RunOptions& o = run.options;
  o.out_dir = f.GetString("out");
  o.command_line = command_line;
  o.interrupted = interrupted;
  o.force = true;  // IO500's blockSize is a bound: the stonewall ends the writes
  // Lockstep's '#' lines as the run goes; IO500's summary instead of IOR's,
  // at the end.
  o.record_fields.mutable_front_end_report()->set_tool("io500");
  // IO500's files read every phase's per-agent records, a failed one's too,
  // and print the IOR phases' telemetry lines.
  PhaseAgents agents(/*keep_telemetry=*/true);
  ShowProgress(&o, /*lines_otherwise=*/false);
  PrintToStdout(absl::StrFormat("#%s\n# lockstep io500: data in %s, IO500's files in %s\n",
                        Io500ProvenanceLine().substr(1), run.setup.datadir,
                        run.setup.resultdir));
  for (const std::string& n : run.notes) PrintToStdout("# lockstep io500: " + n + "\n");
  const FrontEndRun ran = RunFrontEndPlan("io500", run.plan, /*text_to_stdout=*/true,
                                          HistoryRecordingOf(f), {&agents}, &o);
  const RunOutcome& outcome = ran.outcome;
  PurgeDataDir(run.setup.datadir);
  absl::Status written = WriteOutputs(run, outcome, agents.Full(outcome.record));
  if (!written.ok()) {
    std::fprintf(stderr, "lockstep io500: IO500's files: %s\n",
                 std::string(written.message()).c_str());
    if (outcome.failure == RunFailure::kNone) return kExitFailure;
  }
  return ExitCodeFor(outcome.failure);
}

}  // namespace lockstep
