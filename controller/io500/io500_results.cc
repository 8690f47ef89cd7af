#include "controller/io500/io500_results.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "controller/io500/io500_csv.h"
#include "controller/ior/ior_report.h"
#include "controller/mdtest/mdtest_output.h"

namespace lockstep {
namespace {

constexpr double kNsPerS = 1e9;

std::set<std::string> PlanNames(absl::string_view phase) {
  return {std::string(phase), absl::StrCat(phase, "-tree")};
}

// The records of IO500 phase `phase` (its plan phases), in run order.
std::vector<const v1::PhaseRecord*> RecordsOf(const v1::RunRecord& r, absl::string_view phase) {
  std::vector<const v1::PhaseRecord*> out;
  if (r.tests_size() == 0) return out;
  const std::set<std::string> names = PlanNames(phase);
  for (const v1::PhaseRecord& p : r.tests(0).phases()) {
    if (names.count(p.phase()) != 0) out.push_back(&p);
  }
  return out;
}

// What the tasks of one phase record did, over all agents.
struct TaskFigures {
  int64_t start_unix_ns = std::numeric_limits<int64_t>::max();
  int64_t stop_unix_ns = 0;
  uint64_t ops = 0;
  uint64_t matched = 0;
  uint64_t stonewall_pairs = 0;
  int64_t stonewall_duration_ns = 0;
  bool stonewall_hit = false;
  uint32_t tasks = 0;

  double span_s() const {
    return stop_unix_ns > start_unix_ns ? (stop_unix_ns - start_unix_ns) / kNsPerS : 0;
  }
};

TaskFigures FiguresOf(const v1::PhaseRecord& p) {
  TaskFigures f;
  for (const v1::AgentPhaseRecord& a : p.agents()) {
    for (const v1::TaskResult& t : a.tasks()) {
      ++f.tasks;
      const int64_t start = t.open_start_unix_ns() > 0 ? t.open_start_unix_ns()
                                                       : t.rdwr_start_unix_ns();
      const int64_t stop = std::max(t.close_stop_unix_ns(), t.rdwr_stop_unix_ns());
      if (start > 0) f.start_unix_ns = std::min(f.start_unix_ns, start);
      f.stop_unix_ns = std::max(f.stop_unix_ns, stop);
      f.ops += t.ops();
      f.matched += t.items_matched();
      f.stonewall_pairs += t.stonewall_pairs();
      f.stonewall_duration_ns = std::max(f.stonewall_duration_ns, t.stonewall_duration_ns());
      f.stonewall_hit = f.stonewall_hit || t.stonewall_hit();
    }
  }
  return f;
}

// A copy of `r` holding only the records, summary rows and plan specs of
// `phase`, with `exe` as the tool's command line.
v1::RunRecord OnlyPhase(const v1::RunRecord& r, absl::string_view phase, const std::string& exe) {
  v1::RunRecord sub = r;
  sub.clear_tests();
  sub.set_ior_command_line(exe);
  if (r.tests_size() == 0) return sub;
  const std::set<std::string> names = PlanNames(phase);
  v1::TestRecord* t = sub.add_tests();
  *t = r.tests(0);
  t->clear_phases();
  t->clear_summary();
  t->clear_plan_specs();
  for (const v1::PhaseRecord& p : r.tests(0).phases()) {
    if (names.count(p.phase()) != 0) *t->add_phases() = p;
  }
  for (const v1::SummaryRow& s : r.tests(0).summary()) {
    if (names.count(s.phase()) != 0) *t->add_summary() = s;
  }
  for (const v1::PhaseSpec& s : r.tests(0).plan_specs()) {
    if (names.count(s.phase_name()) != 0) *t->add_plan_specs() = s;
  }
  return sub;
}

std::string MdtestText(const v1::RunRecord& sub, const Io500Config& c, const Io500Setup& s,
                       absl::string_view phase, const std::string& exe, const Io500PhaseOutput& o) {
  MdtestCommandInfo info;
  std::vector<std::string> words = absl::StrSplit(exe, ' ');
  info.args.assign(words.begin() + 1, words.end());
  const bool easy = absl::StrContains(phase, "easy");
  info.path = s.datadir + (easy ? "/mdtest-easy" : "/mdtest-hard");
  const v1::TestRecord& t = sub.tests(0);
  info.tasks = t.total_tasks();
  info.nodes = t.client_agents();
  info.tasks_per_node = t.tasks_per_agent();
  info.dirs = false;
  info.items = easy ? c.mdtest_easy_items : c.mdtest_hard_items;
  info.print_time = true;  // -P
  if (t.phases_size() > 0) info.shift = t.phases(0).spec().md_neighbor_shift();
  return FormatMdtestHeader(info, MdtestTimestamp(o.start_unix_ns / 1000000000),
                            MdtestFsStats(sub)) +
         FormatMdtestSummary(info, sub, MdtestTimestamp(o.end_unix_ns / 1000000000));
}

// The figures of an IOR phase from its record.
void IorFigures(const v1::PhaseRecord& p, const Io500Setup& s, Io500PhaseOutput* o) {
  const v1::IterationRow& row = p.row();
  o->figures.time_s = row.total_s();
  o->figures.score = row.total_s() > 0 ? row.bytes() / row.total_s() / kGiB : 0;
  o->end_unix_ns = o->start_unix_ns + static_cast<int64_t>(row.total_s() * kNsPerS);
  if (p.spec().stonewall_seconds() == 0) return;
  const v1::StonewallRecord& sw = p.stonewall();
  if (absl::EndsWith(p.phase(), "-write") && sw.duration_s() > 0) {
    o->stonewall_figure = sw.total_bytes() / sw.duration_s() / kGiB;
  }
  const TaskFigures f = FiguresOf(p);
  if (f.stonewall_hit && f.start_unix_ns < f.stop_unix_ns) {
    const int64_t deadline = f.start_unix_ns + int64_t{s.stonewall_seconds} * 1000000000;
    o->wear_out_tail_s = std::max<int64_t>(0, f.stop_unix_ns - deadline) / kNsPerS;
  }
}

// The figures of an mdtest phase from its records (the scored step is the
// one named `phase`).
void MdtestFigures(const std::vector<const v1::PhaseRecord*>& recs, absl::string_view phase,
                   Io500PhaseOutput* o) {
  double time_s = 0;
  for (const v1::PhaseRecord* p : recs) {
    time_s += p->row().total_s();
    if (p->phase() != phase) continue;
    o->figures.score = p->md_rate() / 1000;
    const TaskFigures f = FiguresOf(*p);
    if (f.stonewall_duration_ns > 0) {
      o->stonewall_figure = f.stonewall_pairs / (f.stonewall_duration_ns / kNsPerS) / 1000;
    }
  }
  o->figures.time_s = time_s;
  o->end_unix_ns = o->start_unix_ns + static_cast<int64_t>(time_s * kNsPerS);
}

void FindFigures(const v1::PhaseRecord& p, Io500PhaseOutput* o) {
  const TaskFigures f = FiguresOf(p);
  o->is_find = true;
  o->find_nproc = f.tasks;
  o->found = f.matched;
  o->total_files = f.ops;
  o->figures.time_s = f.span_s();
  o->figures.score = f.span_s() > 0 ? f.ops / f.span_s() / 1000 : 0;
  o->end_unix_ns = o->start_unix_ns + static_cast<int64_t>(f.span_s() * kNsPerS);
}

// IO500's timestamp: the instant the phase after it (ior-hard-write, or
// the first that runs after ior-easy-write and mdtest-easy-write) started.
void TimestampFigures(const v1::RunRecord& r, Io500PhaseOutput* o) {
  o->figures.ran = true;
  if (r.tests_size() == 0) return;
  for (const v1::PhaseRecord& p : r.tests(0).phases()) {
    if (p.phase() == "ior-easy-write" || absl::StartsWith(p.phase(), "mdtest-easy-write")) {
      continue;
    }
    o->start_unix_ns = o->end_unix_ns = p.start_at_unix_ns();
    return;
  }
}

Io500PhaseOutput OnePhase(const v1::RunRecord& record, const Io500Config& config,
                          const Io500Setup& setup, const std::string& run_dir,
                          const std::string& stopped_reason, absl::string_view phase) {
  Io500PhaseOutput o;
  o.figures.name = std::string(phase);
  o.exe = Io500ExeLine(config, setup, phase);
  const std::string skip = Io500SkipReason(config, phase);
  if (!skip.empty()) {
    o.figures.not_run_reason = skip;
    return o;
  }
  if (phase == "timestamp") {
    TimestampFigures(record, &o);
    return o;
  }
  const std::vector<const v1::PhaseRecord*> recs = RecordsOf(record, phase);
  const v1::PhaseRecord* scored = nullptr;
  for (const v1::PhaseRecord* p : recs) {
    if (p->phase() == phase) scored = p;
    if (!p->ok() && o.figures.error.empty()) o.figures.error = p->error();
  }
  if (scored == nullptr) {
    o.figures.not_run_reason = stopped_reason.empty() ? "the run stopped before it"
                                                      : "the run stopped before it: " +
                                                            stopped_reason;
    if (!o.figures.error.empty()) o.figures.ran = true;  // its tree step failed
    return o;
  }
  o.figures.ran = true;
  o.start_unix_ns = recs.front()->start_at_unix_ns();
  const v1::RunRecord sub = OnlyPhase(record, phase, o.exe);
  if (scored->kind() == v1::FIND) {
    FindFigures(*scored, &o);
    o.csv = Io500FindCsv(*scored);  // IO500 writes find.csv, no find.txt
  } else if (scored->kind() == v1::MDTEST) {
    MdtestFigures(recs, phase, &o);
    o.text = MdtestText(sub, config, setup, phase, o.exe, o);
    o.csv = Io500MdtestCsv(recs, absl::StrContains(phase, "easy") ? config.mdtest_easy_items
                                                                    : config.mdtest_hard_items);
  } else {
    IorFigures(*scored, setup, &o);
    o.text = RenderIorReport(sub, run_dir);
    o.csv = Io500IorCsv(*scored);
  }
  if (!o.figures.error.empty()) o.figures.score = 0;  // IO500: a failed phase scores nothing
  if (!o.text.empty()) o.text = absl::StrFormat("exe = %s\n", o.exe) + o.text;
  return o;
}

}  // namespace

std::vector<Io500PhaseOutput> Io500PhasesFromRecord(const v1::RunRecord& record,
                                                    const Io500Config& config,
                                                    const Io500Setup& setup,
                                                    const std::string& run_dir,
                                                    const std::string& stopped_reason) {
  std::vector<Io500PhaseOutput> out;
  for (const char* phase : kIo500Phases) {
    out.push_back(OnePhase(record, config, setup, run_dir, stopped_reason, phase));
  }
  return out;
}

}  // namespace lockstep
