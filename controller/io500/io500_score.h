// IO500's score and validity rules (src/main.c, src/phase_dbg.c,
// src/phase_ior.c of the io500 repository), as pure functions of the
// phases' figures, for `lockstep io500`.
//
// Score: BW = geometric mean of the scored IOR phases in GiB/s (2^30 bytes);
// MD = geometric mean of the scored metadata phases (mdtest and find) in
// kIOPS; phases with a score <= 0 are left out of the products (a group
// with none scores 0); TOTAL = sqrt(BW × MD).
//
// Validity (each rule marks the phase [INVALID] with IO500's reason and,
// for a scored phase, the whole run):
//  - a write phase (verify_stonewall: ior-easy-write, mdtest-easy-write,
//    ior-hard-write, mdtest-hard-write) that ran shorter than the stonewall;
//  - a phase that did not run (run = FALSE, or the run stopped before it),
//    failed, or scored 0;
//  - a write phase shorter than the minimum write time (300 s);
// and the run alone when the stonewall is not 300 s ([debug] stonewall-time
// or --stonewall-s).
#ifndef LOCKSTEP_CONTROLLER_IO500_IO500_SCORE_H_
#define LOCKSTEP_CONTROLLER_IO500_IO500_SCORE_H_

#include <cstdint>
#include <string>
#include "absl/strings/string_view.h"
#include <vector>

namespace lockstep {

inline constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
inline constexpr uint32_t kIo500StonewallSeconds = 300;  // the rules' stonewall
inline constexpr double kIo500MinWriteSeconds = 300;     // IO500's minwrite

enum class Io500Group { kNone, kMd, kBw };

// The group of one of kIo500Phases (io500_config.h): kBw for the four
// ior-easy/hard write/read phases, kMd for mdtest and find, kNone for
// timestamp and ior-rnd4K-easy-read.
Io500Group Io500GroupOf(absl::string_view phase);
// IO500's verify_stonewall: the four write phases.
bool Io500IsStonewalledWrite(absl::string_view phase);
// timestamp: IO500's dummy phase (no score, never invalid).
inline bool Io500IsDummy(absl::string_view phase) { return phase == "timestamp"; }

// One phase as measured (or not).
struct Io500PhaseFigures {
  std::string name;           // one of kIo500Phases
  bool ran = false;           // false: run = FALSE, or never reached
  std::string not_run_reason; // why not, when !ran
  std::string error;          // the phase failed: what went wrong
  double score = 0;           // GiB/s (IOR) or kIOPS (mdtest, find)
  double time_s = 0;          // the whole phase
};

// A phase's verdict: the invalid reasons, in IO500's words.
struct Io500PhaseVerdict {
  bool valid = true;
  std::vector<std::string> reasons;
};
Io500PhaseVerdict JudgeIo500Phase(const Io500PhaseFigures& phase, uint32_t stonewall_seconds);

struct Io500Score {
  double bw = 0;     // GiB/s
  double md = 0;     // kIOPS
  double total = 0;  // sqrt(bw × md)
  bool valid = true;
  std::vector<std::string> reasons;  // why the run is invalid
};

// Geometric mean of the values > 0; 0 when there are none.
double Io500GeometricMean(const std::vector<double>& values);

// The score of `phases` (any order, unscored ones ignored), and the run's
// validity: invalid when the stonewall is not 300 s or a scored phase is
// invalid (JudgeIo500Phase).
Io500Score ComputeIo500Score(const std::vector<Io500PhaseFigures>& phases,
                             uint32_t stonewall_seconds);

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_IO500_IO500_SCORE_H_
