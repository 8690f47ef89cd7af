#include "controller/dlio/accelerator_sweep.h"

#include <algorithm>
#include <utility>

namespace lockstep {

AcceleratorSweep::AcceleratorSweep(std::vector<uint32_t> counts, uint32_t start, uint32_t max)
    : counts_(std::move(counts)), start_(start), max_(max) {}

uint32_t AcceleratorSweep::first() const { return counts_.empty() ? start_ : counts_[0]; }

std::optional<uint32_t> AcceleratorSweep::Next(uint32_t n, bool passed) {
  if (passed) {
    best_ = std::max(best_, n);
  } else if (failed_ == 0 || n < failed_) {
    failed_ = n;
  }
  if (!counts_.empty()) {
    if (next_index_ < counts_.size()) return counts_[next_index_++];
    return std::nullopt;
  }
  // Doubling while every count passed; past half the maximum, the maximum.
  if (doubling_ && failed_ == 0 && n < max_) return n > max_ / 2 ? max_ : n * 2;
  doubling_ = false;
  if (best_ > 0 && failed_ > best_ + 1) return best_ + (failed_ - best_) / 2;
  return std::nullopt;
}

}  // namespace lockstep
