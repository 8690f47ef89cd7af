// Kind-specific parts of a phase: the spec fields a PhasePlan adds for the
// finer IOR options, small_files, mdtest, find and seeks, and the reduction of the tasks'
// results into the phase record's rows.
#ifndef LOCKSTEP_CONTROLLER_IOR_PHASE_REDUCE_H_
#define LOCKSTEP_CONTROLLER_IOR_PHASE_REDUCE_H_

#include <vector>

#include "controller/plan/plan.h"
#include "lockstep/v1/agent.pb.h"
#include "lockstep/v1/results.pb.h"

namespace lockstep {

// Copies random offsets, stonewall, -W, -d, -g, small_files, mdtest, find
// and command fields of `phase` into `spec` (the rest is the coordinator's BaseSpec).
void SetWorkloadFields(const PhasePlan& phase, uint64_t seed, v1::PhaseSpec* spec);

// Fills pr->row (and extra_rows, md_items, md_rate) from all tasks of one
// phase, timestamps already in one time base:
//   write/read/rewrite: IOR's ReduceIteration.
//   small_files: row "small_files" = create+write (bytes written / total),
//                extra row "readback" = bytes read / (max stop − min start).
//   mdtest: items = Σ ops, time = max(stop) − min(start), rate = items / time;
//           row.access = the sub-phase ("file_create"), iops = rate. Tree
//           create/remove count one tree's directories, as mdtest does.
//   find: row "find", files scanned (Σ ops) / (max stop − min start) as iops;
//         md_items = files scanned, md_rate = that rate.
//   command: row "command", total_s = the slowest host's real time;
//         pr->command (controller/ior/command_summary.h).
//   seeks: row "seeks" (IOR's row), iops = Σ seeks / (max stop − min start),
//          bytes = read + written back.
//   mdtest with md_stonewall_seconds: pr->stonewall, in items (pairs_min,
//         pairs_max: fewest and most items a task had made at the wall).
void ReducePhase(const std::vector<const v1::TaskResult*>& tasks, const v1::PhaseSpec& spec,
                 uint32_t rep, v1::PhaseRecord* pr);

// FIND: the files that matched, over all tasks of all agents of the record
// (IO500's "found"; md_items is its "total-files").
uint64_t FindMatched(const v1::PhaseRecord& pr);

// SEEKS: the seeks that wrote their block back, over all tasks of the record.
uint64_t SeeksRewritten(const v1::PhaseRecord& pr);

// The client that had its Start latest against the instant: the smallest
// start_margin_ns among the clients that recorded one (non-zero; negative =
// after the instant). Null when none did.
const v1::AgentPhaseRecord* SlowestStartClient(const v1::PhaseRecord& pr);

// "" when every client had its Start before the phase's instant; else a
// warning naming the phase, the client that had it latest, by how much, the
// lead, and what repeats or fails such phases. `lockstep run` prints it after
// the phase's row, and RenderIorReport (ior/ior_report) at the same place
// from run.json, so that `lockstep report` shows what the run printed. Reads
// the per-agent records: call it before they are offloaded.
std::string MissedStartNote(const v1::PhaseRecord& pr);

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_IOR_PHASE_REDUCE_H_
