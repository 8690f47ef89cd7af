// The per-phase CSV files IO500's exe lines name, as the real tools write
// them, from a `lockstep io500` run's records:
//   IOR    -O saveRankPerformanceDetailsCSV=F (ior.c StoreRankInformation):
//          "access,rank,runtime-with-openclose,runtime,throughput-withopenclose,
//          throughput", then per rank "write|read,RANK,T,T_IO,B/T,B/T_IO" in
//          %.10e, T from open to close, T_IO the transfers, B the phase's bytes
//          over its ranks.
//   mdtest --saveRankPerformanceDetails=F (mdtest.c StoreRankInformation):
//          "rank,items" and ",rate-OP,time-OP" for mdtest's 11 operations, then
//          "all,ITEMS" with the phase's rate and time of each operation it did
//          (",," for the others), then per rank its rate and time of the
//          first 9 (file and directory operations).
//   find   IO500's find.csv (phase_find.c): "runtime: %f rate: %f", pfind's
//          column line, then per rank "RANK, errors, unknown, found, total,
//          checked, ...": Lockstep's tasks scan, so the job-stealing columns
//          are 0.
#ifndef LOCKSTEP_CONTROLLER_IO500_IO500_CSV_H_
#define LOCKSTEP_CONTROLLER_IO500_IO500_CSV_H_

#include <cstdint>
#include <string>
#include <vector>

#include "lockstep/v1/results.pb.h"

namespace lockstep {

// An IOR phase's CSV (a write or read record).
std::string Io500IorCsv(const v1::PhaseRecord& phase);

// An mdtest phase's CSV from its records (the -tree step and the scored
// step, in run order); `items` is mdtest's -n.
std::string Io500MdtestCsv(const std::vector<const v1::PhaseRecord*>& records, uint64_t items);

// find.csv from the find record.
std::string Io500FindCsv(const v1::PhaseRecord& find);

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_IO500_IO500_CSV_H_
