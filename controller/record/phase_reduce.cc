#include "controller/record/phase_reduce.h"

#include <algorithm>
#include <limits>

#include "absl/strings/str_format.h"

#include "common/mdtest_layout.h"
#include "common/names.h"
#include "controller/record/command_summary.h"
#include "controller/record/ior_math.h"

namespace lockstep {

namespace {
constexpr double kMiB = 1024.0 * 1024.0;
}  // namespace

double Window(const std::vector<const v1::TaskResult*>& tasks,
              int64_t (v1::TaskResult::*start)() const, int64_t (v1::TaskResult::*stop)() const) {
  int64_t lo = std::numeric_limits<int64_t>::max(), hi = std::numeric_limits<int64_t>::min();
  for (const v1::TaskResult* t : tasks) {
    lo = std::min(lo, (t->*start)());
    hi = std::max(hi, (t->*stop)());
  }
  return tasks.empty() || hi < lo ? 0.0 : static_cast<double>(hi - lo) / 1e9;
}

uint64_t FindMatched(const v1::PhaseRecord& pr) {
  uint64_t found = 0;
  for (const v1::AgentPhaseRecord& a : pr.agents()) {
    for (const v1::TaskResult& t : a.tasks()) found += t.items_matched();
  }
  return found;
}

void ReduceFind(const std::vector<const v1::TaskResult*>& tasks, uint32_t rep,
                v1::PhaseRecord* pr) {
  v1::IterationRow row;
  row.set_access("find");
  row.set_iter(rep);
  uint64_t scanned = 0, op_ns = 0;
  for (const v1::TaskResult* t : tasks) {
    scanned += t->ops();
    op_ns += t->latency().sum_ns();
  }
  const double secs = Window(tasks, &v1::TaskResult::rdwr_start_unix_ns, &v1::TaskResult::rdwr_stop_unix_ns);
  row.set_wrrd_s(secs);
  row.set_total_s(secs);
  if (secs > 0) row.set_iops(static_cast<double>(scanned) / secs);
  if (scanned > 0) row.set_latency_s(static_cast<double>(op_ns) / static_cast<double>(scanned) / 1e9);
  *pr->mutable_row() = row;
  pr->set_md_items(scanned);
  pr->set_md_rate(row.iops());
}

// IOR -D and mdtest -W: what the tasks had done at the wall (pairs, or
// mdtest items, of `unit_bytes` each), the wear-out tail and how late the
// last task stopped after its deadline (its start of work + `wall_seconds`).
void ReduceStonewall(const std::vector<const v1::TaskResult*>& tasks, uint32_t wall_seconds,
                     uint64_t unit_bytes, v1::PhaseRecord* pr) {
  if (wall_seconds == 0 || tasks.empty()) return;
  v1::StonewallRecord* w = pr->mutable_stonewall();
  uint64_t lo = std::numeric_limits<uint64_t>::max(), hi = 0, total = 0;
  int64_t longest_ns = 0, tail_ns = 0, late_ns = 0;
  const int64_t wall_ns = int64_t{wall_seconds} * 1'000'000'000;
  for (const v1::TaskResult* t : tasks) {
    lo = std::min(lo, t->stonewall_pairs());
    hi = std::max(hi, t->stonewall_pairs());
    total += t->stonewall_pairs();
    longest_ns = std::max(longest_ns, t->stonewall_duration_ns());
    const int64_t deadline_ns = t->rdwr_start_unix_ns() + wall_ns;
    tail_ns = std::max(tail_ns, t->rdwr_stop_unix_ns() - deadline_ns);
    if (t->stonewall_hit() && t->stonewall_stop_unix_ns() != 0) {
      late_ns = std::max(late_ns, t->stonewall_stop_unix_ns() - deadline_ns);
    }
  }
  w->set_tail_s(static_cast<double>(tail_ns) / 1e9);
  w->set_stop_after_deadline_ms(static_cast<double>(late_ns) / 1e6);
  w->set_pairs_min(lo);
  w->set_pairs_max(hi);
  w->set_min_bytes(lo * unit_bytes);
  w->set_total_bytes(total * unit_bytes);
  w->set_duration_s(static_cast<double>(longest_ns) / 1e9);
}

// SEEKS: IOR's row with access "seeks", IOPS = seeks over all tasks / (max
// stop − min start), as bonnie++ times its seekers (first start to last end).
void ReduceSeeks(const std::vector<const v1::TaskResult*>& tasks, const v1::PhaseSpec& spec,
                 uint32_t rep, v1::PhaseRecord* pr) {
  v1::IterationRow row = ReduceIteration(tasks, spec, rep);
  row.set_access("seeks");
  row.set_expected_bytes(row.bytes());  // data moved, not the file's size
  uint64_t seeks = 0;
  for (const v1::TaskResult* t : tasks) seeks += t->ops();
  row.set_iops(row.wrrd_s() > 0 ? static_cast<double>(seeks) / row.wrrd_s() : 0.0);
  *pr->mutable_row() = row;
}

uint64_t SeeksRewritten(const v1::PhaseRecord& pr) {
  uint64_t n = 0;
  for (const v1::AgentPhaseRecord& a : pr.agents()) {
    for (const v1::TaskResult& t : a.tasks()) n += t.seeks_rewritten();
  }
  return n;
}

const v1::AgentPhaseRecord* SlowestStartClient(const v1::PhaseRecord& pr) {
  const v1::AgentPhaseRecord* slowest = nullptr;
  for (const v1::AgentPhaseRecord& a : pr.agents()) {
    if (a.role() != v1::CLIENT || a.start_margin_ns() == 0) continue;
    if (slowest == nullptr || a.start_margin_ns() < slowest->start_margin_ns()) slowest = &a;
  }
  return slowest;
}

int64_t LatestReleaseLateNs(const v1::PhaseRecord& pr,
                            const std::map<std::string, int64_t>& clock_uncertainty_ns) {
  int64_t latest = 0;
  for (const v1::AgentPhaseRecord& a : pr.agents()) {
    if (a.role() != v1::CLIENT || a.start_margin_ns() <= 0) continue;
    const auto u = clock_uncertainty_ns.find(a.address());
    const int64_t uncertainty_ns = u == clock_uncertainty_ns.end() ? 0 : u->second;
    for (const v1::TaskResult& t : a.tasks()) {
      if (t.release_unix_ns() == 0) continue;
      latest = std::max(latest, t.release_unix_ns() - pr.start_at_unix_ns() - uncertainty_ns);
    }
  }
  return latest;
}

std::string MissedStartNote(const v1::PhaseRecord& pr) {
  const v1::AgentPhaseRecord* latest = SlowestStartClient(pr);
  if (latest == nullptr || latest->start_margin_ns() >= 0) return "";
  return absl::StrFormat(
      "warning: %s: agent %s had its Start %.1f ms after the start instant (lead %.1f ms), "
      "so its tasks began late and the start was not simultaneous (start skew %.1f ms); "
      "the next lead is longer (max_start_skew_us with on_skew repeats or fails such phases)",
      pr.phase_id(), latest->address(), -latest->start_margin_ns() / 1e6, pr.lead_ns() / 1e6,
      pr.start_skew_ns() / 1e6);
}

void ReduceMdtest(const std::vector<const v1::TaskResult*>& tasks, const v1::PhaseSpec& spec,
                  uint32_t rep, v1::PhaseRecord* pr) {
  ReduceStonewall(tasks, spec.md_stonewall_seconds(), spec.md_write_bytes(), pr);
  v1::IterationRow row;
  row.set_access(MdtestOpName(spec.md_op()));
  row.set_iter(rep);
  uint64_t items = 0, bytes = 0, op_ns = 0;
  for (const v1::TaskResult* t : tasks) {
    items += t->ops();
    bytes += t->bytes();
    op_ns += t->latency().sum_ns();
  }
  const double secs = Window(tasks, &v1::TaskResult::rdwr_start_unix_ns, &v1::TaskResult::rdwr_stop_unix_ns);
  row.set_wrrd_s(secs);
  row.set_total_s(secs);
  row.set_bytes(bytes);
  row.set_expected_bytes(bytes);
  if (secs > 0) {
    row.set_iops(static_cast<double>(items) / secs);
    row.set_bw_mib(static_cast<double>(bytes) / kMiB / secs);
  }
  if (items > 0) row.set_latency_s(static_cast<double>(op_ns) / static_cast<double>(items) / 1e9);
  if (spec.md_op() == v1::MD_TREE_CREATE || spec.md_op() == v1::MD_TREE_REMOVE) {
    // mdtest counts the directories of one tree (its rank 0's), even
    // when every task makes its own (-u).
    items = MdtestTreeDirs(spec.md_branching(), spec.md_depth());
    row.set_iops(secs > 0 ? static_cast<double>(items) / secs : 0.0);
  }
  *pr->mutable_row() = row;
  pr->set_md_items(items);
  pr->set_md_rate(row.iops());
}

void ReduceSmallFiles(const std::vector<const v1::TaskResult*>& tasks, const v1::PhaseSpec& spec,
                      uint32_t rep, v1::PhaseRecord* pr) {
  v1::PhaseSpec as_write = spec;
  as_write.set_transfer_bytes(0);  // no fixed transfer size: IOPS = files / wrrd below
  v1::IterationRow row = ReduceIteration(tasks, as_write, rep);
  row.set_access("small_files");
  uint64_t files = 0, back = 0;
  for (const v1::TaskResult* t : tasks) {
    files += t->ops();
    back += t->readback_bytes();
  }
  if (row.wrrd_s() > 0) row.set_iops(static_cast<double>(files) / row.wrrd_s());
  row.set_expected_bytes(row.bytes());
  *pr->mutable_row() = row;
  v1::IterationRow rb;
  rb.set_access("readback");
  rb.set_iter(rep);
  const double secs =
      Window(tasks, &v1::TaskResult::readback_start_unix_ns, &v1::TaskResult::readback_stop_unix_ns);
  rb.set_wrrd_s(secs);
  rb.set_total_s(secs);
  rb.set_bytes(back);
  rb.set_expected_bytes(row.bytes());
  if (secs > 0) {
    rb.set_bw_mib(static_cast<double>(back) / kMiB / secs);
    rb.set_iops(static_cast<double>(files) / secs);
  }
  *pr->add_extra_rows() = rb;
}

void ReduceTransfer(const std::vector<const v1::TaskResult*>& tasks, const v1::PhaseSpec& spec,
                    uint32_t rep, v1::PhaseRecord* pr) {
  *pr->mutable_row() = ReduceIteration(tasks, spec, rep);
  ReduceStonewall(tasks, spec.stonewall_seconds(), spec.transfer_bytes(), pr);
}

}  // namespace lockstep
