// Comparable by construction (issue 40): a run's workload identity, a hash
// over what determines its I/O, computed from the run record alone (run.json
// as stored), so that runs recorded before the hash existed have one too.
//
// Covered (the canonical lines, one per test and per phase of the test, in
// run order): each test's client count, tasks per agent and total tasks, its
// sweep point (key = value), and per phase its kind, its cache barrier
// ("none", "clients", "all"), and every field of its PhaseSpec that shapes
// the I/O (sizes, counts, patterns and seeds, access order, fsync, O_DIRECT,
// verification, stonewall, metadata tree, AI dataset and training
// parameters), each as "name=value", defaults left out (so a field added
// later with its default keeps old hashes).
//
// Left out, as local: directories and file names, phase names, host names
// and addresses (agents), test ids and repetition numbers, the repetition
// count (a sample size, shown beside the figures instead), values drawn at
// run time (stonewall counts handed on, find's -newer instant), per-agent
// rank splits, and the site tunables named in kWorkloadSiteTunables
// (file-system layout and checksums, free-space override, delays, command
// lines and environments, recorded-only fields).
#ifndef LOCKSTEP_CONTROLLER_RESULTS_WORKLOAD_H_
#define LOCKSTEP_CONTROLLER_RESULTS_WORKLOAD_H_

#include <string>
#include <vector>

#include "lockstep/v1/results.pb.h"

namespace lockstep {

// The PhaseSpec fields left out as site tunables or local values, by proto
// field name.
extern const std::vector<std::string> kWorkloadSiteTunables;
// One line saying what the hash covers and what it leaves out, for output.
extern const char kWorkloadHashCovers[];

struct WorkloadIdentity {
  std::string hash;   // lower-case hex SHA-256 of the lines joined with '\n'
  // Readable: what the hash covers, e.g. "write+read, 2 clients x 4 tasks,
  // xfer 1MiB, block 16MiB, fpp, cache all, 1 test" (at most ~200 chars).
  std::string workload_class;
  std::vector<std::string> lines;  // the canonical form that was hashed
};

// The identity of `run`'s workload. A run without tests (failed before its
// first) has the hash of its header line alone and class "no tests".
WorkloadIdentity WorkloadOf(const v1::RunRecord& run);

// Why two workloads are not the same: the first `max_lines` lines that
// differ, "A: LINE" / "B: LINE" pairs ("" when the hashes are equal).
std::string WorkloadDifference(const WorkloadIdentity& a, const WorkloadIdentity& b,
                               int max_lines = 6);

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_RESULTS_WORKLOAD_H_
