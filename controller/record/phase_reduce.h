// The reductions of a phase's task results into its record's rows, one per
// kind of work; each phase kind (controller/plan/phase_kind.h) picks its own
// in Reduce. Timestamps of `tasks` are in one time base.
#ifndef LOCKSTEP_CONTROLLER_RECORD_PHASE_REDUCE_H_
#define LOCKSTEP_CONTROLLER_RECORD_PHASE_REDUCE_H_

#include <map>
#include <string>
#include <vector>

#include "lockstep/v1/agent.pb.h"
#include "lockstep/v1/results.pb.h"

namespace lockstep {

// max(stop) − min(start) over the tasks, in seconds, for the given timers.
double Window(const std::vector<const v1::TaskResult*>& tasks,
              int64_t (v1::TaskResult::*start)() const, int64_t (v1::TaskResult::*stop)() const);

// write/read/rewrite: IOR's ReduceIteration, and pr->stonewall with IOR -D.
void ReduceTransfer(const std::vector<const v1::TaskResult*>& tasks, const v1::PhaseSpec& spec,
                    uint32_t rep, v1::PhaseRecord* pr);
// small_files: row "small_files" = create+write (bytes written / total),
// extra row "readback" = bytes read / (max stop − min start).
void ReduceSmallFiles(const std::vector<const v1::TaskResult*>& tasks, const v1::PhaseSpec& spec,
                      uint32_t rep, v1::PhaseRecord* pr);
// mdtest: items = Σ ops, time = max(stop) − min(start), rate = items / time;
// row.access = the sub-phase ("file_create"), iops = rate. Tree create/remove
// count one tree's directories, as mdtest does. With md_stonewall_seconds:
// pr->stonewall, in items (pairs_min, pairs_max: fewest and most items a
// task had made at the wall).
void ReduceMdtest(const std::vector<const v1::TaskResult*>& tasks, const v1::PhaseSpec& spec,
                  uint32_t rep, v1::PhaseRecord* pr);
// find: row "find", files scanned (Σ ops) / (max stop − min start) as iops;
// md_items = files scanned, md_rate = that rate.
void ReduceFind(const std::vector<const v1::TaskResult*>& tasks, uint32_t rep,
                v1::PhaseRecord* pr);
// seeks: row "seeks" (IOR's row), iops = Σ seeks / (max stop − min start),
// bytes = read + written back.
void ReduceSeeks(const std::vector<const v1::TaskResult*>& tasks, const v1::PhaseSpec& spec,
                 uint32_t rep, v1::PhaseRecord* pr);
// (command: ReduceCommand, controller/record/command_summary.h.)

// IOR -D and mdtest -W: what the tasks had done at the wall (pairs, or
// mdtest items, of `unit_bytes` each), the wear-out tail and how late the
// last task stopped after its deadline. Nothing without a wall.
void ReduceStonewall(const std::vector<const v1::TaskResult*>& tasks, uint32_t wall_seconds,
                     uint64_t unit_bytes, v1::PhaseRecord* pr);

// FIND: the files that matched, over all tasks of all agents of the record
// (IO500's "found"; md_items is its "total-files").
uint64_t FindMatched(const v1::PhaseRecord& pr);

// SEEKS: the seeks that wrote their block back, over all tasks of the record.
uint64_t SeeksRewritten(const v1::PhaseRecord& pr);

// The client that had its Start latest against the instant: the smallest
// start_margin_ns among the clients that recorded one (non-zero; negative =
// after the instant). Null when none did.
const v1::AgentPhaseRecord* SlowestStartClient(const v1::PhaseRecord& pr);

// How late the latest task left its wait for the instant (release_unix_ns −
// start_at_unix_ns, the controller's clock) beyond its agent's clock
// uncertainty (`clock_uncertainty_ns` by address; absent: 0), among the
// clients that had their Start in time (start_margin_ns > 0): a lateness the
// delivery does not explain. Zero when every such task released at or
// before the instant, or when none recorded a release.
int64_t LatestReleaseLateNs(const v1::PhaseRecord& pr,
                            const std::map<std::string, int64_t>& clock_uncertainty_ns);

// "" when every client had its Start before the phase's instant; else a
// warning naming the phase, the client that had it latest, by how much, the
// lead, and what repeats or fails such phases. `lockstep run` prints it after
// the phase's row, and RenderIorReport (ior/ior_report) at the same place
// from run.json, so that `lockstep report` shows what the run printed. Reads
// the per-agent records: call it before they are offloaded.
std::string MissedStartNote(const v1::PhaseRecord& pr);

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_RECORD_PHASE_REDUCE_H_
