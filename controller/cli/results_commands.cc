#include "controller/cli/results_commands.h"

#include <sys/stat.h>

#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/files.h"
#include "common/flags.h"
#include "common/status_macros.h"
#include "controller/cli/bundle_commands.h"
#include "controller/cli/command_specs.h"
#include "controller/cli/exit_codes.h"
#include "controller/cli/service_history.h"
#include "controller/results/compare.h"
#include "controller/results/gate.h"
#include "controller/results/history.h"
#include "controller/results/journal_report.h"
#include "controller/results/report.h"
#include "controller/results/run_ref.h"

namespace lockstep {
namespace {

int Fail(const char* cmd, const absl::Status& s) {
  std::fprintf(stderr, "lockstep %s: %s\n", cmd, std::string(s.message()).c_str());
  return s.code() == absl::StatusCode::kInvalidArgument ? kExitUsage : kExitFailure;
}

// Fail for a run reference that could not be read (ExitCodeForRunRef).
int FailRef(const char* cmd, const absl::Status& s) {
  Fail(cmd, s);
  return ExitCodeForRunRef(s);
}

// The run `ref` names (results/run_ref.h); what a damaged telemetry side file
// left out goes to stderr as a warning, and the run is read all the same.
absl::StatusOr<ResolvedRun> ReadRunRef(const char* cmd, const std::string& ref,
                                       LazyHistory* db, const RunRefOptions& options = {}) {
  absl::StatusOr<ResolvedRun> run = ResolveRunRef(ref, db, options);
  if (run.ok() && !run->warning.empty()) {
    std::fprintf(stderr, "lockstep %s: warning: %s\n", cmd, run->warning.c_str());
  }
  return run;
}

absl::StatusOr<v1::RunRecord> ReadRun(const char* cmd, const std::string& ref, LazyHistory* db,
                                      const RunRefOptions& options = {}) {
  absl::StatusOr<ResolvedRun> run = ReadRunRef(cmd, ref, db, options);
  if (!run.ok()) return run.status();
  return std::move(run->record);
}

// A usage error found after parsing: the error and the usage lines, exit 2.
int Usage(const CommandSpec& command, const std::string& error) {
  std::fprintf(stderr, "%s: %s\n%s", command.FullName().c_str(), error.c_str(),
               FormatUsage(command).c_str());
  return kExitUsage;
}

// The site whose runs may be the gate's baseline and noise window: --site;
// else the site the gated run was recorded with; else, against a results
// service (whose mirror holds every site's shared runs, and whose runs any
// site may push with any start time), the credential's site; else any.
absl::StatusOr<std::optional<std::string>> GateSite(const ParsedFlags& f, const std::string& db_path,
                                                    LazyHistory* db, const std::string& run_id) {
  if (f.Has("site")) return f.GetString("site");
  if (absl::StatusOr<HistoryStore*> store = db->Get(); store.ok()) {
    if (absl::StatusOr<std::string> site = (*store)->SiteOf(run_id); site.ok()) return *site;
  }
  return ServiceSiteFor(db_path);
}

int GateExitCodeFor(GateVerdict verdict) {
  switch (verdict) {
    case GateVerdict::kPass: return kGatePass;
    case GateVerdict::kRegression: return kGateRegression;
    case GateVerdict::kNoBaseline: return kGateNoBaseline;
  }
  return kGateBadInput;
}

bool IsDirectory(const std::string& p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

bool HasOutputs(const ParsedFlags& f) {
  return f.Has("html") || f.Has("csv") || f.Has("openmetrics") || f.Has("influx");
}

// What the history db recorded with each run (site, tags), when every run
// is in it; otherwise none.
std::vector<RunTags> TagsOf(const std::vector<v1::RunRecord>& runs, LazyHistory* db) {
  if (db == nullptr) return {};
  absl::StatusOr<HistoryStore*> store = db->Get();
  if (!store.ok()) return {};
  std::vector<RunTags> out;
  for (const v1::RunRecord& r : runs) {
    absl::StatusOr<RunSummary> s = (*store)->Summary(r.run_id());
    if (!s.ok()) return {};
    out.push_back({s->site, s->tags});
  }
  return out;
}

absl::Status WriteOutputs(const ParsedFlags& f, const std::vector<v1::RunRecord>& runs,
                          LazyHistory* db = nullptr) {
  if (f.Has("html")) {
    HtmlOptions o;
    o.title = f.GetString("title");
    o.run_tags = TagsOf(runs, db);
    RETURN_IF_ERROR(WriteReportFile(f.GetString("html"), RenderHtml(runs, o), "HTML report"));
    std::printf("wrote %s\n", f.GetString("html").c_str());
  }
  if (f.Has("csv")) {
    RETURN_IF_ERROR(WriteReportFile(f.GetString("csv"), RenderCsv(runs), "CSV"));
    std::printf("wrote %s\n", f.GetString("csv").c_str());
  }
  if (f.Has("openmetrics")) {
    RETURN_IF_ERROR(
        WriteReportFile(f.GetString("openmetrics"), RenderOpenMetrics(runs), "OpenMetrics"));
    std::printf("wrote %s\n", f.GetString("openmetrics").c_str());
  }
  if (f.Has("influx")) {
    RETURN_IF_ERROR(WriteReportFile(f.GetString("influx"), RenderInfluxLines(runs), "Influx lines"));
    std::printf("wrote %s\n", f.GetString("influx").c_str());
  }
  return absl::OkStatus();
}

// Prints a run's summary; when run.json is missing, writes run.json (with the
// status the run gave, or "interrupted" when the journal has no end) and
// summary.txt atomically.
int ReportRunDirCommand(const std::string& run_dir) {
  auto rebuilt = RebuildRun(run_dir);
  if (!rebuilt.ok()) {
    std::fprintf(stderr, "lockstep report: %s\n", std::string(rebuilt.status().message()).c_str());
    return kExitUsage;
  }
  std::fwrite(rebuilt->text.data(), 1, rebuilt->text.size(), stdout);
  if (!rebuilt->warning.empty()) {
    std::fprintf(stderr, "lockstep report: warning: %s\n", rebuilt->warning.c_str());
  }
  if (rebuilt->torn_lines > 0) {
    std::fprintf(stderr,
                 "lockstep report: %d journal line(s) did not parse (cut by a crash, or written "
                 "by a later lockstep) and were left out\n",
                 rebuilt->torn_lines);
  }
  if (rebuilt->running) {
    std::fprintf(stderr,
                 "lockstep report: %s is still running (its controller holds journal.jsonl): "
                 "this is its journal so far; run.json is left for its controller to write\n",
                 run_dir.c_str());
  } else if (rebuilt->from_journal) {
    if (absl::Status s = WriteRebuiltRun(run_dir, *rebuilt); !s.ok()) {
      std::fprintf(stderr, "lockstep report: %s\n", std::string(s.message()).c_str());
      return kExitFailure;
    }
    std::fprintf(stderr, "lockstep report: wrote %s/run.json (status %s) and summary.txt\n",
                 run_dir.c_str(), rebuilt->record.status().c_str());
  }
  return kExitOk;
}

}  // namespace

// ---- history ---------------------------------------------------------------------

int HistoryCommand(const std::vector<std::string>& args) {
  const CommandSpec& spec = HistoryCommandSpec();
  auto f = ParseFlags(args, spec);
  if (auto code = HelpOrUsageExit(spec, f)) return *code;
  if (!f->positional().empty()) return Usage(spec, "unexpected argument " + f->positional()[0]);
  RunFilter filter;
  filter.plan = f->GetString("plan");
  filter.site = f->GetString("site");
  filter.tag = f->GetString("tag");
  filter.since = f->GetString("since");
  filter.until = f->GetString("until");
  filter.status = f->GetString("status");
  filter.limit = static_cast<int>(f->GetUint("limit"));
  for (const char* d : {"since", "until"}) {
    if (f->Has(d)) {
      if (auto t = ParseDateOrTime(f->GetString(d)); !t.ok()) {
        return Usage(spec, absl::StrCat("--", d, ": ", t.status().message()));
      }
    }
  }
  const std::string& db_path = f->GetString("db");
  auto db_file = HistoryDbFor(db_path);
  if (!db_file.ok()) return Fail("history", db_file.status());
  LazyHistory db(*db_file);
  auto store = db.Get();
  if (!store.ok()) return Fail("history", store.status());
  auto runs = (*store)->List(filter);
  if (!runs.ok()) return Fail("history", runs.status());
  if (runs->empty()) {
    std::printf("no runs match (db %s)\n", db_path.c_str());
    return kExitOk;
  }
  std::printf("%-28s  %-30s  %-20s  %-12s  %-10s  %-11s  %7s  %s\n", "started", "run id", "name",
              "plan", "site", "status", "results", "tags");
  for (const auto& r : *runs) {
    std::printf("%-28s  %-30s  %-20s  %-12s  %-10s  %-11s  %7d  %s\n", r.started_at.c_str(),
                r.run_id.c_str(), r.name.c_str(), r.plan_sha256.substr(0, 12).c_str(),
                r.site.c_str(), r.status.c_str(), r.results, absl::StrJoin(r.tags, ",").c_str());
  }
  return kExitOk;
}

// ---- import / export ---------------------------------------------------------------

int ImportCommand(const std::vector<std::string>& args) {
  const CommandSpec& spec = ImportCommandSpec();
  auto f = ParseFlags(args, spec);
  if (auto code = HelpOrUsageExit(spec, f)) return *code;
  if (f->positional().empty()) return Usage(spec, "no run.json files given");
  auto store = HistoryStore::Open(f->GetString("db"));
  if (!store.ok()) return Fail("import", store.status());
  auto ids = (*store)->Import(f->positional(), f->GetString("site"), f->GetList("tag"));
  if (!ids.ok()) return Fail("import", ids.status());
  for (size_t i = 0; i < ids->size(); ++i) {
    std::printf("imported %s from %s\n", (*ids)[i].c_str(), f->positional()[i].c_str());
  }
  return kExitOk;
}

int ExportCommand(const std::vector<std::string>& args) {
  const CommandSpec& spec = ExportCommandSpec();
  auto f = ParseFlags(args, spec);
  if (auto code = HelpOrUsageExit(spec, f)) return *code;
  if (f->GetBool("bundle")) return ExportBundleCommand(*f);
  if (f->positional().empty() || f->positional().size() > 2) {
    return Usage(spec, "give one run and at most one output path");
  }
  auto db_file = HistoryDbFor(f->GetString("db"));
  if (!db_file.ok()) return Fail("export", db_file.status());
  LazyHistory db(*db_file);
  auto run = ReadRunRef("export", f->positional()[0], &db);
  if (!run.ok()) return FailRef("export", run.status());
  const bool others = HasOutputs(*f);
  std::string out = f->positional().size() == 2 ? f->positional()[1] : (others ? "" : "-");
  if (out == "-") {
    std::printf("%s\n", RunToJson(run->record).c_str());
  } else if (!out.empty()) {
    // The run.json as recorded, byte for byte.
    absl::Status s;
    if (run->origin == ResolvedRun::Origin::kHistory) {
      auto store = db.Get();
      s = store.ok() ? (*store)->Export(run->record.run_id(), out) : store.status();
    } else {
      auto text = ReadFileToString(run->path);
      s = text.ok() ? WriteFileAtomically(out, *text) : text.status();
    }
    if (!s.ok()) return Fail("export", s);
    std::printf("wrote %s\n", out.c_str());
  }
  if (others) {
    if (auto s = WriteOutputs(*f, {run->record}); !s.ok()) return Fail("export", s);
  }
  return kExitOk;
}

// ---- compare -------------------------------------------------------------------------

int CompareCommand(const std::vector<std::string>& args) {
  const CommandSpec& spec = CompareCommandSpec();
  auto f = ParseFlags(args, spec);
  if (auto code = HelpOrUsageExit(spec, f)) return *code;
  const bool sites = !f->GetList("sites").empty();
  if (sites && !f->positional().empty()) return Usage(spec, "give --sites or runs, not both");
  if (!sites && f->positional().size() < 2) return Usage(spec, "give at least two runs");
  auto db_file = HistoryDbFor(f->GetString("db"));  // a service's runs, copied
  if (!db_file.ok()) return Fail("compare", db_file.status());
  if (sites) return CompareSitesCommand(*f, *db_file);
  LazyHistory db(*db_file);
  // A side is RUN or RUN,RUN,...: a group pooled (its median over all runs).
  std::vector<std::vector<v1::RunRecord>> groups;
  std::vector<v1::RunRecord> runs;
  for (const auto& side : f->positional()) {
    std::vector<v1::RunRecord>& group = groups.emplace_back();
    for (absl::string_view ref : absl::StrSplit(side, ',', absl::SkipEmpty())) {
      auto run = ReadRun("compare", std::string(ref), &db);
      if (!run.ok()) return FailRef("compare", run.status());
      group.push_back(*run);
      runs.push_back(std::move(*run));
    }
    if (group.empty()) return Usage(spec, absl::StrCat("\"", side, "\" names no run"));
  }
  if (groups.size() == 2) {
    std::printf("%s", FormatComparison(CompareGroups(groups[0], groups[1])).c_str());
  } else {
    std::printf("%s", FormatMatrix(groups).c_str());
  }
  if (auto s = WriteOutputs(*f, runs, &db); !s.ok()) return Fail("compare", s);
  return kExitOk;
}

// ---- gate ------------------------------------------------------------------------------

int GateCommand(const std::vector<std::string>& args) {
  const CommandSpec& spec = GateCommandSpec();
  auto f = ParseFlags(args, spec);
  if (auto code = HelpOrUsageExit(spec, f)) return *code;
  if (f->positional().size() != 1) return Usage(spec, "give exactly one run to gate");
  GateOptions options;
  for (const auto& m : f->GetList("max-drop")) {
    if (auto s = ParseMaxDrop(m, &options.max_drop); !s.ok()) {
      return Usage(spec, std::string(s.message()));
    }
  }
  auto window = f->Has("noise-window") ? ParseNoiseWindow(f->GetString("noise-window")) : 0;
  if (!window.ok()) return Usage(spec, std::string(window.status().message()));
  const std::string& db_path = f->GetString("db");
  auto db_file = HistoryDbFor(db_path);
  if (!db_file.ok()) return Fail("gate", db_file.status());
  LazyHistory db(*db_file);
  auto run = ReadRun("gate", f->positional()[0], &db);
  if (!run.ok()) {
    Fail("gate", run.status());
    return kGateBadInput;
  }
  auto site = GateSite(*f, db_path, &db, run->run_id());
  if (!site.ok()) {
    Fail("gate", site.status());
    return kGateBadInput;
  }
  const std::string& baseline_ref = f->GetString("baseline");
  v1::RunRecord baseline;
  if (baseline_ref == "last-good") {
    auto store = db.Get();
    if (!store.ok()) {
      std::fprintf(stderr, "lockstep gate: no baseline found: %s\n",
                   std::string(store.status().message()).c_str());
      return store.status().code() == absl::StatusCode::kNotFound ? kGateNoBaseline : kGateBadInput;
    }
    auto id = (*store)->LastGood(*run, *site);
    if (!id.ok()) {
      std::fprintf(stderr, "lockstep gate: no baseline found: %s\n",
                   std::string(id.status().message()).c_str());
      return id.status().code() == absl::StatusCode::kNotFound ? kGateNoBaseline : kGateBadInput;
    }
    auto b = (*store)->Load(*id);
    if (!b.ok()) {
      Fail("gate", b.status());
      return kGateBadInput;
    }
    baseline = std::move(*b);
  } else {
    auto b = ReadRun("gate", baseline_ref, &db);
    if (!b.ok()) {
      std::fprintf(stderr, "lockstep gate: baseline %s\n", std::string(b.status().message()).c_str());
      return b.status().code() == absl::StatusCode::kNotFound ? kGateNoBaseline : kGateBadInput;
    }
    baseline = std::move(*b);
  }
  if (*window > 0) {
    auto store = db.Get();
    auto loaded = store.ok() ? LoadNoiseWindow(**store, baseline, *window, run->run_id(), *site)
                             : Annotate(store.status(), "--noise-window needs the history db");
    if (!loaded.ok()) {
      Fail("gate", loaded.status());
      return kGateBadInput;
    }
    options.noise_window = std::move(*loaded);
  }
  if (auto s = CheckMaxDropMetrics(options.max_drop, baseline, *run); !s.ok()) {
    Fail("gate", s);
    return kGateBadInput;
  }
  GateReport report = EvaluateGate(baseline, *run, options);
  std::printf("%s", report.Text().c_str());
  if (f->Has("junit")) {
    if (auto s = WriteReportFile(f->GetString("junit"), GateJunitXml(report), "JUnit XML");
        !s.ok()) {
      Fail("gate", s);
      return kGateBadInput;
    }
  }
  if (report.verdict() == GateVerdict::kNoBaseline) {
    std::printf("%s", FormatComparison(CompareRuns(baseline, *run)).c_str());
  }
  return GateExitCodeFor(report.verdict());
}

// ---- report ---------------------------------------------------------------------------

int ReportCommand(const std::vector<std::string>& args) {
  const CommandSpec& spec = ReportCommandSpec();
  auto f = ParseFlags(args, spec);
  if (auto code = HelpOrUsageExit(spec, f)) return *code;
  if (f->positional().empty()) return Usage(spec, "give at least one run");
  auto db_file = HistoryDbFor(f->GetString("db"));
  if (!db_file.ok()) return Fail("report", db_file.status());
  LazyHistory db(*db_file);
  if (!HasOutputs(*f)) {
    // The summary of each run again. A run directory goes through its
    // journal, which also writes back a run.json its controller never wrote.
    for (const std::string& ref : f->positional()) {
      if (IsDirectory(ref)) {
        if (int code = ReportRunDirCommand(ref); code != kExitOk) return code;
        continue;
      }
      auto run = ReadRun("report", ref, &db);
      if (!run.ok()) return FailRef("report", run.status());
      std::string text = FormatRunSummary(*run);
      std::fwrite(text.data(), 1, text.size(), stdout);
    }
    return kExitOk;
  }
  std::vector<v1::RunRecord> runs;
  for (const auto& ref : f->positional()) {
    auto run = ReadRun("report", ref, &db, {.allow_journal = true});
    if (!run.ok()) return FailRef("report", run.status());
    runs.push_back(std::move(*run));
  }
  if (auto s = WriteOutputs(*f, runs, &db); !s.ok()) return Fail("report", s);
  return kExitOk;
}

}  // namespace lockstep
