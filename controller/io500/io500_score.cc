#include "controller/io500/io500_score.h"

#include <cmath>

#include "absl/strings/match.h"
#include "absl/strings/str_format.h"

namespace lockstep {

Io500Group Io500GroupOf(absl::string_view phase) {
  if (phase == "timestamp" || phase == "ior-rnd4K-easy-read") return Io500Group::kNone;
  if (absl::StartsWith(phase, "ior-")) return Io500Group::kBw;
  return Io500Group::kMd;
}

bool Io500IsStonewalledWrite(absl::string_view phase) {
  return phase == "ior-easy-write" || phase == "mdtest-easy-write" ||
         phase == "ior-hard-write" || phase == "mdtest-hard-write";
}

Io500PhaseVerdict JudgeIo500Phase(const Io500PhaseFigures& p, uint32_t stonewall_seconds) {
  Io500PhaseVerdict v;
  if (Io500IsDummy(p.name)) return v;
  auto invalid = [&v](std::string reason) {
    v.valid = false;
    v.reasons.push_back(std::move(reason));
  };
  if (!p.ran) {
    invalid(absl::StrFormat("Phase not run: %s", p.not_run_reason));
  } else if (!p.error.empty()) {
    // phase_ior.c's words for IOR phases; Lockstep's error follows.
    invalid(absl::StartsWith(p.name, "ior-")
                ? absl::StrFormat("Errors (1) occured during phase in IOR. This invalidates your "
                                  "run. (%s)",
                                  p.error)
                : absl::StrFormat("Errors occurred during the phase: %s", p.error));
  }
  // src/main.c: the stonewall sanity check, else a zero score.
  if (p.ran && Io500IsStonewalledWrite(p.name) && p.time_s < stonewall_seconds) {
    invalid(absl::StrFormat("Runtime of phase (%f) is below stonewall time. This shouldn't "
                            "happen!",
                            p.time_s));
  } else if (p.score == 0.0) {
    invalid("Resulting score shouldn't be 0.0");
  }
  if (Io500IsStonewalledWrite(p.name) && p.time_s < kIo500MinWriteSeconds) {
    invalid("Runtime is smaller than expected minimum runtime");
  }
  return v;
}

double Io500GeometricMean(const std::vector<double>& values) {
  double product = 1;
  int n = 0;
  for (double v : values) {
    if (v <= 0) continue;
    product *= v;
    ++n;
  }
  return n == 0 ? 0 : std::pow(product, 1.0 / n);
}

Io500Score ComputeIo500Score(const std::vector<Io500PhaseFigures>& phases,
                             uint32_t stonewall_seconds) {
  Io500Score s;
  std::vector<double> bw, md;
  for (const Io500PhaseFigures& p : phases) {
    const Io500Group g = Io500GroupOf(p.name);
    if (g == Io500Group::kBw) bw.push_back(p.score);
    if (g == Io500Group::kMd) md.push_back(p.score);
    if (g != Io500Group::kNone && !JudgeIo500Phase(p, stonewall_seconds).valid) {
      s.valid = false;
      s.reasons.push_back(absl::StrFormat("phase %s is invalid", p.name));
    }
  }
  if (stonewall_seconds != kIo500StonewallSeconds) {
    s.valid = false;
    s.reasons.insert(s.reasons.begin(),
                     absl::StrFormat("stonewall-time != %u (%u s), this is an invalid run",
                                     kIo500StonewallSeconds, stonewall_seconds));
  }
  s.bw = Io500GeometricMean(bw);
  s.md = Io500GeometricMean(md);
  s.total = std::sqrt(s.bw * s.md);
  return s;
}

}  // namespace lockstep
