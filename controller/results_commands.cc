#include "controller/results_commands.h"

#include <sys/stat.h>

#include <cstdio>
#include <map>
#include <memory>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/status_macros.h"
#include "controller/compare.h"
#include "controller/gate.h"
#include "controller/history.h"
#include "controller/report.h"

namespace lockstep {
namespace {

// ---- flags ---------------------------------------------------------------------

struct Flags {
  std::map<std::string, std::vector<std::string>> values;
  std::vector<std::string> positional;
  bool help = false;

  std::string Get(const std::string& name, const std::string& def = "") const {
    auto it = values.find(name);
    return it == values.end() || it->second.empty() ? def : it->second.back();
  }
  std::vector<std::string> All(const std::string& name) const {
    auto it = values.find(name);
    return it == values.end() ? std::vector<std::string>{} : it->second;
  }
  bool Has(const std::string& name) const { return values.count(name) > 0; }
};

// Every flag takes a value. Unknown flags and missing values are errors.
absl::StatusOr<Flags> ParseFlags(const std::vector<std::string>& args,
                                 const std::set<std::string>& known) {
  Flags f;
  bool only_positional = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (only_positional || a == "-" || !absl::StartsWith(a, "-")) {
      f.positional.push_back(a);
      continue;
    }
    if (a == "--") {
      only_positional = true;
      continue;
    }
    if (a == "-h" || a == "--help") {
      f.help = true;
      continue;
    }
    std::string name = a.substr(absl::StartsWith(a, "--") ? 2 : 1);
    std::string value;
    bool has_value = false;
    if (auto eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
      has_value = true;
    }
    if (!known.count(name)) {
      return absl::InvalidArgumentError(absl::StrFormat("unknown flag %s", a));
    }
    if (!has_value) {
      if (i + 1 >= args.size()) {
        return absl::InvalidArgumentError(absl::StrFormat("flag --%s needs a value", name));
      }
      value = args[++i];
    }
    f.values[name].push_back(value);
  }
  return f;
}

int Usage(const char* cmd, const char* usage, const std::string& error) {
  if (!error.empty()) std::fprintf(stderr, "lockstep %s: %s\n", cmd, error.c_str());
  std::fprintf(error.empty() ? stdout : stderr, "usage: lockstep %s %s\n", cmd, usage);
  return 2;
}

int Fail(const char* cmd, const absl::Status& s) {
  std::fprintf(stderr, "lockstep %s: %s\n", cmd, std::string(s.message()).c_str());
  return s.code() == absl::StatusCode::kInvalidArgument ? 2 : 1;
}

std::string DbPath(const Flags& f) { return f.Get("db", kDefaultHistoryPath); }

bool IsFile(const std::string& p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

// Opens the db on first use; reading commands never create it.
class LazyStore {
 public:
  explicit LazyStore(std::string path, bool create = false) : path_(std::move(path)), create_(create) {}
  absl::StatusOr<HistoryStore*> Get() {
    if (!store_) {
      HistoryOptions o;
      o.create_if_missing = create_;
      ASSIGN_OR_RETURN(store_, HistoryStore::Open(path_, o));
    }
    return store_.get();
  }
  bool opened() const { return store_ != nullptr; }

 private:
  std::string path_;
  bool create_;
  std::unique_ptr<HistoryStore> store_;
};

// A run.json path or a run id in the db.
absl::StatusOr<v1::RunRecord> ResolveRun(const std::string& ref, LazyStore* db) {
  if (IsFile(ref)) return ReadRunJson(ref);
  if (absl::EndsWith(ref, ".json") || ref.find('/') != std::string::npos) {
    return absl::NotFoundError(absl::StrFormat(
        "%s: no such run.json file (give a run.json path or a run id from `lockstep history`)",
        ref));
  }
  ASSIGN_OR_RETURN(HistoryStore * store, db->Get());
  return store->Load(ref);
}

absl::Status WriteOutputs(const Flags& f, const std::vector<v1::RunRecord>& runs) {
  if (f.Has("html")) {
    HtmlOptions o;
    o.title = f.Get("title");
    RETURN_IF_ERROR(WriteReportFile(f.Get("html"), RenderHtml(runs, o), "HTML report"));
    std::printf("wrote %s\n", f.Get("html").c_str());
  }
  if (f.Has("csv")) {
    RETURN_IF_ERROR(WriteReportFile(f.Get("csv"), RenderCsv(runs), "CSV"));
    std::printf("wrote %s\n", f.Get("csv").c_str());
  }
  if (f.Has("openmetrics")) {
    RETURN_IF_ERROR(WriteReportFile(f.Get("openmetrics"), RenderOpenMetrics(runs), "OpenMetrics"));
    std::printf("wrote %s\n", f.Get("openmetrics").c_str());
  }
  if (f.Has("influx")) {
    RETURN_IF_ERROR(WriteReportFile(f.Get("influx"), RenderInfluxLines(runs), "Influx lines"));
    std::printf("wrote %s\n", f.Get("influx").c_str());
  }
  return absl::OkStatus();
}

}  // namespace

// ---- history ---------------------------------------------------------------------

int HistoryCommand(const std::vector<std::string>& args) {
  static const char kUsage[] =
      "[--db FILE] [--plan NAME|SHA256] [--site S] [--tag T] [--since DATE] [--until DATE] "
      "[--status S] [--limit N (50; 0 = all)]";
  auto f = ParseFlags(args, {"db", "plan", "site", "tag", "since", "until", "status", "limit"});
  if (!f.ok()) return Usage("history", kUsage, std::string(f.status().message()));
  if (f->help) { Usage("history", kUsage, ""); return 0; }
  if (!f->positional.empty()) return Usage("history", kUsage, "unexpected argument " + f->positional[0]);
  RunFilter filter;
  filter.plan = f->Get("plan");
  filter.site = f->Get("site");
  filter.tag = f->Get("tag");
  filter.since = f->Get("since");
  filter.until = f->Get("until");
  filter.status = f->Get("status");
  if (f->Has("limit") && !absl::SimpleAtoi(f->Get("limit"), &filter.limit)) {
    return Usage("history", kUsage, "--limit needs a number");
  }
  for (const char* d : {"since", "until"}) {
    if (f->Has(d)) {
      if (auto t = ParseDateOrTime(f->Get(d)); !t.ok()) {
        return Usage("history", kUsage, absl::StrCat("--", d, ": ", t.status().message()));
      }
    }
  }
  LazyStore db(DbPath(*f));
  auto store = db.Get();
  if (!store.ok()) return Fail("history", store.status());
  auto runs = (*store)->List(filter);
  if (!runs.ok()) return Fail("history", runs.status());
  if (runs->empty()) {
    std::printf("no runs match (db %s)\n", DbPath(*f).c_str());
    return 0;
  }
  std::printf("%-28s  %-30s  %-20s  %-12s  %-10s  %-11s  %7s  %s\n", "started", "run id", "name",
              "plan", "site", "status", "results", "tags");
  for (const auto& r : *runs) {
    std::printf("%-28s  %-30s  %-20s  %-12s  %-10s  %-11s  %7d  %s\n", r.started_at.c_str(),
                r.run_id.c_str(), r.name.c_str(), r.plan_sha256.substr(0, 12).c_str(),
                r.site.c_str(), r.status.c_str(), r.results, absl::StrJoin(r.tags, ",").c_str());
  }
  return 0;
}

// ---- import / export ---------------------------------------------------------------

int ImportCommand(const std::vector<std::string>& args) {
  static const char kUsage[] = "[--db FILE] [--site S] [--tag T]... RUN.json...";
  auto f = ParseFlags(args, {"db", "site", "tag"});
  if (!f.ok()) return Usage("import", kUsage, std::string(f.status().message()));
  if (f->help) { Usage("import", kUsage, ""); return 0; }
  if (f->positional.empty()) return Usage("import", kUsage, "no run.json files given");
  LazyStore db(DbPath(*f), /*create=*/true);
  auto store = db.Get();
  if (!store.ok()) return Fail("import", store.status());
  auto ids = (*store)->Import(f->positional, f->Get("site"), f->All("tag"));
  if (!ids.ok()) return Fail("import", ids.status());
  for (size_t i = 0; i < ids->size(); ++i) {
    std::printf("imported %s from %s\n", (*ids)[i].c_str(), f->positional[i].c_str());
  }
  return 0;
}

int ExportCommand(const std::vector<std::string>& args) {
  static const char kUsage[] =
      "[--db FILE] RUN_ID [OUT.json|-] [--csv F] [--openmetrics F] [--influx F] [--html F]";
  auto f = ParseFlags(args, {"db", "csv", "openmetrics", "influx", "html", "title"});
  if (!f.ok()) return Usage("export", kUsage, std::string(f.status().message()));
  if (f->help) { Usage("export", kUsage, ""); return 0; }
  if (f->positional.empty() || f->positional.size() > 2) {
    return Usage("export", kUsage, "give one run id and at most one output path");
  }
  const std::string& id = f->positional[0];
  LazyStore db(DbPath(*f));
  auto store = db.Get();
  if (!store.ok()) return Fail("export", store.status());
  bool others = f->Has("csv") || f->Has("openmetrics") || f->Has("influx") || f->Has("html");
  std::string out = f->positional.size() == 2 ? f->positional[1] : (others ? "" : "-");
  if (out == "-") {
    auto run = (*store)->Load(id);
    if (!run.ok()) return Fail("export", run.status());
    std::printf("%s\n", RunToJson(*run).c_str());
  } else if (!out.empty()) {
    if (auto s = (*store)->Export(id, out); !s.ok()) return Fail("export", s);
    std::printf("wrote %s\n", out.c_str());
  }
  if (others) {
    auto run = (*store)->Load(id);
    if (!run.ok()) return Fail("export", run.status());
    if (auto s = WriteOutputs(*f, {*run}); !s.ok()) return Fail("export", s);
  }
  return 0;
}

// ---- compare -------------------------------------------------------------------------

int CompareCommand(const std::vector<std::string>& args) {
  static const char kUsage[] = "[--db FILE] RUN RUN [RUN...] [--csv F] [--html F]  "
                               "(RUN: run.json path or run id)";
  auto f = ParseFlags(args, {"db", "csv", "html", "openmetrics", "influx", "title"});
  if (!f.ok()) return Usage("compare", kUsage, std::string(f.status().message()));
  if (f->help) { Usage("compare", kUsage, ""); return 0; }
  if (f->positional.size() < 2) return Usage("compare", kUsage, "give at least two runs");
  LazyStore db(DbPath(*f));
  std::vector<v1::RunRecord> runs;
  for (const auto& ref : f->positional) {
    auto run = ResolveRun(ref, &db);
    if (!run.ok()) return Fail("compare", run.status());
    runs.push_back(std::move(*run));
  }
  if (runs.size() == 2) {
    std::printf("%s", FormatComparison(CompareRuns(runs[0], runs[1])).c_str());
  } else {
    std::printf("%s", FormatMatrix(runs).c_str());
  }
  if (auto s = WriteOutputs(*f, runs); !s.ok()) return Fail("compare", s);
  return 0;
}

// ---- gate ------------------------------------------------------------------------------

int GateCommand(const std::vector<std::string>& args) {
  static const char kUsage[] =
      "[--db FILE] RUN [--baseline RUN_ID|run.json|last-good] [--max-drop 5%] "
      "[--max-drop METRIC=PCT%]... [--noise-window N] [--junit FILE]\n"
      "exit: 0 pass, 1 regression, 2 bad input, 3 no baseline found";
  auto f = ParseFlags(args, {"db", "baseline", "max-drop", "junit", "noise-window"});
  if (!f.ok()) return Usage("gate", kUsage, std::string(f.status().message()));
  if (f->help) { Usage("gate", kUsage, ""); return 0; }
  if (f->positional.size() != 1) return Usage("gate", kUsage, "give exactly one run to gate");
  GateOptions options;
  for (const auto& m : f->All("max-drop")) {
    if (auto s = ParseMaxDrop(m, &options.max_drop); !s.ok()) {
      return Usage("gate", kUsage, std::string(s.message()));
    }
  }
  auto window = f->Has("noise-window") ? ParseNoiseWindow(f->Get("noise-window")) : 0;
  if (!window.ok()) return Usage("gate", kUsage, std::string(window.status().message()));
  LazyStore db(DbPath(*f));
  auto run = ResolveRun(f->positional[0], &db);
  if (!run.ok()) {
    Fail("gate", run.status());
    return kGateBadInput;
  }
  std::string baseline_ref = f->Get("baseline", "last-good");
  v1::RunRecord baseline;
  if (baseline_ref == "last-good") {
    auto store = db.Get();
    if (!store.ok()) {
      std::fprintf(stderr, "lockstep gate: no baseline found: %s\n",
                   std::string(store.status().message()).c_str());
      return store.status().code() == absl::StatusCode::kNotFound ? kGateNoBaseline : kGateBadInput;
    }
    auto id = (*store)->LastGood(*run);
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
    auto b = ResolveRun(baseline_ref, &db);
    if (!b.ok()) {
      std::fprintf(stderr, "lockstep gate: baseline %s: %s\n", baseline_ref.c_str(),
                   std::string(b.status().message()).c_str());
      return b.status().code() == absl::StatusCode::kNotFound ? kGateNoBaseline : kGateBadInput;
    }
    baseline = std::move(*b);
  }
  if (*window > 0) {
    auto store = db.Get();
    auto loaded = store.ok() ? LoadNoiseWindow(**store, baseline, *window, run->run_id())
                             : Annotate(store.status(), "--noise-window needs the history db");
    if (!loaded.ok()) {
      Fail("gate", loaded.status());
      return kGateBadInput;
    }
    options.noise_window = std::move(*loaded);
  }
  GateReport report = EvaluateGate(baseline, *run, options);
  std::printf("%s", report.Text().c_str());
  if (f->Has("junit")) {
    if (auto s = WriteReportFile(f->Get("junit"), GateJunitXml(report), "JUnit XML"); !s.ok()) {
      Fail("gate", s);
      return kGateBadInput;
    }
  }
  if (report.ExitCode() == kGateNoBaseline) {
    std::printf("%s", FormatComparison(CompareRuns(baseline, *run)).c_str());
  }
  return report.ExitCode();
}

// ---- report ---------------------------------------------------------------------------

int ReportHtmlCommand(const std::vector<std::string>& args) {
  static const char kUsage[] =
      "[--db FILE] RUN... [--html F] [--csv F] [--openmetrics F] [--influx F] [--title T]  "
      "(RUN: run.json path or run id; at least one output)";
  auto f = ParseFlags(args, {"db", "html", "csv", "openmetrics", "influx", "title"});
  if (!f.ok()) return Usage("report", kUsage, std::string(f.status().message()));
  if (f->help) { Usage("report", kUsage, ""); return 0; }
  if (f->positional.empty()) return Usage("report", kUsage, "give at least one run");
  if (!f->Has("html") && !f->Has("csv") && !f->Has("openmetrics") && !f->Has("influx")) {
    return Usage("report", kUsage, "give at least one of --html, --csv, --openmetrics, --influx");
  }
  LazyStore db(DbPath(*f));
  std::vector<v1::RunRecord> runs;
  for (const auto& ref : f->positional) {
    auto run = ResolveRun(ref, &db);
    if (!run.ok()) return Fail("report", run.status());
    runs.push_back(std::move(*run));
  }
  if (auto s = WriteOutputs(*f, runs); !s.ok()) return Fail("report", s);
  return 0;
}

}  // namespace lockstep
