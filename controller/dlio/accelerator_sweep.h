// `lockstep dlio --find-max-accelerators`: which accelerator counts per host
// to try, one run each, and what the runs found. The counts given
// (--accelerator-counts) are tried in order; else the count doubles from
// --accelerators while AU holds (the last doubling stops at
// --max-accelerators), then bisects between the most that passed and the
// fewest that failed.
#ifndef LOCKSTEP_CONTROLLER_DLIO_ACCELERATOR_SWEEP_H_
#define LOCKSTEP_CONTROLLER_DLIO_ACCELERATOR_SWEEP_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace lockstep {

class AcceleratorSweep {
 public:
  // `counts` empty: doubling from `start`, never above `max` (start <= max).
  AcceleratorSweep(std::vector<uint32_t> counts, uint32_t start, uint32_t max);

  // The count of the first run.
  uint32_t first() const;
  // After the run of `n` whose AU met its threshold (`passed`) or not: the
  // next count to run, if any.
  std::optional<uint32_t> Next(uint32_t n, bool passed);
  // The most accelerators per host that passed (0: none), the fewest that
  // failed (0: none).
  uint32_t best() const { return best_; }
  uint32_t failed() const { return failed_; }

 private:
  std::vector<uint32_t> counts_;
  size_t next_index_ = 1;
  uint32_t start_;
  uint32_t max_;
  bool doubling_ = true;
  uint32_t best_ = 0;
  uint32_t failed_ = 0;
};

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_DLIO_ACCELERATOR_SWEEP_H_
