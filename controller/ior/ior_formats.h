// IOR's machine-readable summaries (-O summaryFormat=JSON|CSV), built from a
// run record after the run; the text output is the coordinator's.
#ifndef LOCKSTEP_CONTROLLER_IOR_IOR_FORMATS_H_
#define LOCKSTEP_CONTROLLER_IOR_IOR_FORMATS_H_

#include <string>

#include "lockstep/v1/results.pb.h"

namespace lockstep {

// IOR 4.1's JSON, every key in IOR's order (checked against a real output
// by tests/conformance/): {"Version","Began","Command line","Machine",
// "tests":[{"TestID","StartTime","Path","Capacity",...,"Parameters":{...},
// "Options":{...},"Results":[{"access","bwMiB",...}]}],"summary":[{...}],
// "Finished"}, plus Lockstep's own "lockstep" object (run id, status).
// `run_dir` may be empty.
std::string FormatIorJson(const v1::RunRecord& record, const std::string& run_dir);

// IOR's CSV: a header, then one line per iteration row:
// access,bw(MiB/s),IOPS,Latency,block(KiB),xfer(KiB),open(s),wr/rd(s),close(s),total(s),numTasks,iter
std::string FormatIorCsv(const v1::RunRecord& record);

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_IOR_IOR_FORMATS_H_
