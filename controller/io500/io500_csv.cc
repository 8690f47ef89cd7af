#include "controller/io500/io500_csv.h"

#include <algorithm>
#include <array>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace lockstep {
namespace {

constexpr double kNsPerS = 1e9;

// The tasks of a record over all agents, by rank.
std::vector<const v1::TaskResult*> TasksByRank(const v1::PhaseRecord& p) {
  std::vector<const v1::TaskResult*> tasks;
  for (const v1::AgentPhaseRecord& a : p.agents()) {
    for (const v1::TaskResult& t : a.tasks()) tasks.push_back(&t);
  }
  std::sort(tasks.begin(), tasks.end(),
            [](const v1::TaskResult* a, const v1::TaskResult* b) { return a->rank() < b->rank(); });
  return tasks;
}

double Seconds(int64_t from_unix_ns, int64_t to_unix_ns) {
  return to_unix_ns > from_unix_ns ? (to_unix_ns - from_unix_ns) / kNsPerS : 0;
}

// mdtest's column of an operation (mdtest.c's MDTEST_*_NUM order: the
// directory operations, the file operations, the tree); -1: none.
int MdtestColumn(v1::MdtestOp op) {
  switch (op) {
    case v1::MD_DIR_CREATE: return 0;
    case v1::MD_DIR_STAT: return 1;
    case v1::MD_DIR_RENAME: return 3;
    case v1::MD_DIR_REMOVE: return 4;
    case v1::MD_FILE_CREATE: return 5;
    case v1::MD_FILE_STAT: return 6;
    case v1::MD_FILE_READ: return 7;
    case v1::MD_FILE_REMOVE: return 8;
    case v1::MD_TREE_CREATE: return 9;
    case v1::MD_TREE_REMOVE: return 10;
    default: return -1;
  }
}

constexpr const char* kMdtestColumns[] = {
    "Directory creation", "Directory stat", "Directory read", "Directory rename",
    "Directory removal",  "File creation",  "File stat",      "File read",
    "File removal",       "Tree creation",  "Tree removal"};
constexpr int kMdtestRankColumns = 9;  // mdtest's rank rows stop before the tree

// ",rate,time" in mdtest's %.10e, or ",," for an operation not done.
std::string RateTime(double items, double seconds) {
  if (items <= 0 || seconds <= 0) return ",,";
  return absl::StrFormat(",%.10e,%.10e", items / seconds, seconds);
}

}  // namespace

std::string Io500IorCsv(const v1::PhaseRecord& phase) {
  std::string out =
      "access,rank,runtime-with-openclose,runtime,throughput-withopenclose,throughput\n";
  const std::vector<const v1::TaskResult*> tasks = TasksByRank(phase);
  if (tasks.empty()) return out;
  const char* access = phase.kind() == v1::WRITE ? "write" : "read";
  // IOR: the aggregate size of the phase over its ranks.
  const double bytes = static_cast<double>(phase.row().bytes()) / tasks.size();
  for (const v1::TaskResult* t : tasks) {
    const double total = Seconds(t->open_start_unix_ns(), t->close_stop_unix_ns());
    const double io = Seconds(t->rdwr_start_unix_ns(), t->rdwr_stop_unix_ns());
    absl::StrAppendFormat(&out, "%s,%u,%.10e,%.10e,%.10e,%.10e\n", access, t->rank(), total, io,
                          total > 0 ? bytes / total : 0.0, io > 0 ? bytes / io : 0.0);
  }
  return out;
}

std::string Io500MdtestCsv(const std::vector<const v1::PhaseRecord*>& records, uint64_t items) {
  std::string out = "rank,items";
  for (const char* c : kMdtestColumns) absl::StrAppendFormat(&out, ",rate-%s,time-%s", c, c);
  out += "\n";
  std::array<double, std::size(kMdtestColumns)> all_items{}, all_time{};
  const v1::PhaseRecord* ranked = nullptr;  // the step with the per-rank figures
  int ranked_column = -1;
  for (const v1::PhaseRecord* p : records) {
    const int c = MdtestColumn(p->spec().md_op());
    if (c < 0) continue;
    const double seconds = p->row().total_s();
    all_time[c] = seconds;
    all_items[c] = p->md_rate() > 0 ? p->md_rate() * seconds : 0;
    if (c < kMdtestRankColumns) {
      ranked = p;
      ranked_column = c;
    }
  }
  absl::StrAppendFormat(&out, "all,%u", items);
  for (size_t c = 0; c < all_items.size(); ++c) out += RateTime(all_items[c], all_time[c]);
  out += "\n";
  if (ranked == nullptr) return out;
  for (const v1::TaskResult* t : TasksByRank(*ranked)) {
    absl::StrAppendFormat(&out, "%u,", t->rank());
    const int64_t from = t->rdwr_start_unix_ns() > 0 ? t->rdwr_start_unix_ns()
                                                     : t->open_start_unix_ns();
    const int64_t to = std::max(t->rdwr_stop_unix_ns(), t->close_stop_unix_ns());
    for (int c = 0; c < kMdtestRankColumns; ++c) {
      out += c == ranked_column ? RateTime(static_cast<double>(t->ops()), Seconds(from, to)) : ",,";
    }
    out += "\n";
  }
  return out;
}

std::string Io500FindCsv(const v1::PhaseRecord& find) {
  const std::vector<const v1::TaskResult*> tasks = TasksByRank(find);
  int64_t start = 0, stop = 0;
  uint64_t scanned = 0;
  for (const v1::TaskResult* t : tasks) {
    const int64_t from = t->open_start_unix_ns() > 0 ? t->open_start_unix_ns()
                                                     : t->rdwr_start_unix_ns();
    if (from > 0 && (start == 0 || from < start)) start = from;
    stop = std::max({stop, t->rdwr_stop_unix_ns(), t->close_stop_unix_ns()});
    scanned += t->ops();
  }
  const double runtime = Seconds(start, stop);
  std::string out = absl::StrFormat("runtime: %f rate: %f\n", runtime,
                                    runtime > 0 ? scanned / runtime : 0.0);
  out += "rank, errors, unknown, found, total, checked, job steal msgs received, work items "
         "send, job steal msgs send, work items stolen, time spend in job stealing in s, number "
         "of completion tokens send\n";
  for (const v1::TaskResult* t : tasks) {
    absl::StrAppendFormat(&out, "%u, %u, 0, %u, %u, %u, 0, 0, 0, 0, 0.000s, 0\n", t->rank(),
                          t->error().empty() ? 0 : 1, t->items_matched(), t->ops(), t->ops());
  }
  return out;
}

}  // namespace lockstep
