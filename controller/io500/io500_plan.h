// The plan of one `lockstep io500` run: IO500's phases, in IO500's order,
// with IO500's parameters, as plan phases (a pure function of the
// configuration; the command runs it), and the equivalent ior / mdtest /
// pfind command line of each phase (IO500's "exe").
//
// Plan phases per IO500 phase (the scored result is the phase named as in
// IO500; the tree steps are separate phases of their own):
//   ior-easy-write      write, file per process (filePerProc), -t/-b of
//                       [ior-easy], -C -Q 1 -g -k -e, -D S with wear-out
//   mdtest-easy-write   mdtest-easy-write-tree (tree create), then
//                       mdtest-easy-write (file create), -n N -u -L -F -P
//                       -N 1 -Y -W S
//   timestamp           no plan phase: its instant is ior-hard-write's start
//   ior-hard-write      write, one shared file ior-hard/file, 47008-byte
//                       transfers, -s segmentCount, -D S with wear-out
//   mdtest-hard-write   -tree, then file create in one shared directory
//                       (-t, no -u), -w 3901 -e 3901 -W S
//   find                kind find over the data directory: newer than the
//                       timestamp, 3901 bytes, name "*01*"
//   ior-easy-read, ior-hard-read   -C -Q 1 -r -R, stonewall_count_from the write
//   mdtest-easy-stat, mdtest-hard-stat, mdtest-hard-read (-E -X)
//                       stonewall_count_from the mdtest write
//   mdtest-easy-delete, mdtest-hard-delete   file remove, then -tree (tree remove)
//   ior-rnd4K-easy-read IO500's -z -z -t=4096 -b=4096 -s=10000000 -D S with wear-out
//                       over the ior-easy files (random 4 KiB blocks of each
//                       file, may repeat: random_blocks), -C -Q 2, unscored
// A phase whose section says run = FALSE is left out, and so are the phases
// that need what it writes (a read without its write).
#ifndef LOCKSTEP_CONTROLLER_IO500_IO500_PLAN_H_
#define LOCKSTEP_CONTROLLER_IO500_IO500_PLAN_H_

#include <cstdint>
#include <string>
#include "absl/strings/string_view.h"
#include <vector>

#include "absl/status/statusor.h"
#include "controller/io500/io500_config.h"
#include "controller/plan/plan.h"

namespace lockstep {

struct Io500Setup {
  std::string datadir;        // absolute, after timestamp-datadir
  std::string resultdir;      // absolute, after timestamp-resultdir
  uint32_t client_agents = 0; // 0: not known before the agents answer
  uint32_t tasks_per_agent = 1;
  uint32_t stonewall_seconds = 300;  // --stonewall-s, else [debug] stonewall-time
  uint64_t seed = 1;          // the data pattern's seed: from the run's timestamp
  std::string timestamp;      // IO500's opt.timestamp ("YYYY.MM.DD-HH.MM.SS"): its -G seeds
};

// IO500's u_phase_unique_random_number(group) (src/util.c): u_hash_update
// of the group's name ("ior-easy", "ior-hard", "mdtest-easy",
// "mdtest-hard"), then of the run's timestamp, as IO500's int (4711 for 0
// and -1): the -G of that group's exe lines.
int32_t Io500PhaseSeed(absl::string_view group, absl::string_view timestamp);

// The sub-directories of the data directory IO500 uses.
inline constexpr const char* kIo500DataSubdirs[] = {"ior-easy", "ior-hard", "mdtest-easy",
                                                    "mdtest-hard"};

// Why IO500 phase `phase` is not in the plan ("" when it is): run = FALSE
// in its section, or the phase it needs does not run.
std::string Io500SkipReason(const Io500Config& config, absl::string_view phase);

// The plan phases of IO500 phase `phase` in `plan` (none when skipped).
std::vector<const PhasePlan*> Io500PlanPhases(const Plan& plan, absl::string_view phase);

// The whole plan. `notes` (may be null) receives what the user should know
// (options Lockstep does not reproduce).
Plan BuildIo500Plan(const Io500Config& config, const Io500Setup& setup,
                    std::vector<std::string>* notes);

// IO500's exe line of `phase` ("" for timestamp).
std::string Io500ExeLine(const Io500Config& config, const Io500Setup& setup,
                         absl::string_view phase);

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_IO500_IO500_PLAN_H_
