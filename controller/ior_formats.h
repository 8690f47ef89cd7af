// IOR's machine-readable summaries (-O summaryFormat=JSON|CSV), built from a
// run record after the run; the text output is the coordinator's.
#ifndef LOCKSTEP_CONTROLLER_IOR_FORMATS_H_
#define LOCKSTEP_CONTROLLER_IOR_FORMATS_H_

#include <string>

#include "lockstep/v1/results.pb.h"

namespace lockstep {

// {"Version","Began","Command line","Machine","tests":[{"TestID",
//  "Parameters":{...},"Results":[{"access","bwMiB",...}]}],
//  "summary":[{"operation","API","bwMaxMIB",...,"MeanTime",...}],"Finished"}
std::string FormatIorJson(const v1::RunRecord& record);

// One line per iteration row, IOR's per-iteration columns:
// access,bw(MiB/s),IOPs,Latency,block(KiB),xfer(KiB),open(s),wr/rd(s),close(s),total(s),numTasks,iter
std::string FormatIorCsv(const v1::RunRecord& record);

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_IOR_FORMATS_H_
