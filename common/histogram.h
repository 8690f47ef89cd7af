// A mergeable latency histogram with log-spaced buckets: 128 sub-buckets per
// power of two, so any recorded value is reported within 0.8% (relative) of
// the truth. Fixed size, no allocation per Record(); merging is exact
// (bucket-wise sums), so percentiles over many tasks and agents are computed
// from merged counts, never by averaging percentiles.
#ifndef LOCKSTEP_COMMON_HISTOGRAM_H_
#define LOCKSTEP_COMMON_HISTOGRAM_H_

#include <array>
#include <cstdint>

#include "lockstep/v1/agent.pb.h"

namespace lockstep {

class LatencyHistogram {
 public:
  static constexpr int kSubBits = 7;                 // 128 sub-buckets
  static constexpr int kSub = 1 << kSubBits;
  static constexpr int kBuckets = (64 - kSubBits + 1) * kSub;

  LatencyHistogram() { Clear(); }

  void Clear();
  void Record(uint64_t value_ns) {
    ++counts_[BucketOf(value_ns)];
    ++total_;
    sum_ += value_ns;
    if (value_ns > max_) max_ = value_ns;
    if (value_ns < min_) min_ = value_ns;
  }
  void Merge(const LatencyHistogram& other);

  uint64_t count() const { return total_; }
  uint64_t max() const { return max_; }
  uint64_t min() const { return total_ ? min_ : 0; }
  double mean() const { return total_ ? static_cast<double>(sum_) / total_ : 0.0; }
  // The value at quantile q in [0, 1] (bucket midpoint, clamped to [min, max]).
  uint64_t Quantile(double q) const;

  void ToProto(v1::Histogram* out) const;
  void MergeProto(const v1::Histogram& in);

  static int BucketOf(uint64_t v) {
    if (v < static_cast<uint64_t>(kSub)) return static_cast<int>(v);
    int e = 63 - __builtin_clzll(v);                 // >= kSubBits
    int shift = e - kSubBits;
    return (shift + 1) * kSub + static_cast<int>((v >> shift) & (kSub - 1));
  }
  static uint64_t LowerBound(int bucket);

 private:
  std::array<uint64_t, kBuckets> counts_;
  uint64_t total_ = 0;
  uint64_t sum_ = 0;
  uint64_t max_ = 0;
  uint64_t min_ = 0;
};

}  // namespace lockstep

#endif  // LOCKSTEP_COMMON_HISTOGRAM_H_
