#include "common/histogram.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace lockstep {

void LatencyHistogram::Clear() {
  counts_.fill(0);
  total_ = 0;
  sum_ = 0;
  max_ = 0;
  min_ = std::numeric_limits<uint64_t>::max();
}

uint64_t LatencyHistogram::LowerBound(int bucket) {
  if (bucket < kSub) return static_cast<uint64_t>(bucket);
  int shift = bucket / kSub - 1;
  uint64_t mantissa = static_cast<uint64_t>(kSub + bucket % kSub);
  return mantissa << shift;
}

void LatencyHistogram::Merge(const LatencyHistogram& other) {
  for (int i = 0; i < kBuckets; ++i) counts_[i] += other.counts_[i];
  total_ += other.total_;
  sum_ += other.sum_;
  max_ = std::max(max_, other.max_);
  min_ = std::min(min_, other.min_);
}

uint64_t LatencyHistogram::Quantile(double q) const {
  if (total_ == 0) return 0;
  q = std::clamp(q, 0.0, 1.0);
  // Rank of the wanted sample, 1-based, as "nearest rank".
  uint64_t rank = static_cast<uint64_t>(std::ceil(q * static_cast<double>(total_)));
  if (rank == 0) rank = 1;
  uint64_t seen = 0;
  for (int i = 0; i < kBuckets; ++i) {
    seen += counts_[i];
    if (seen >= rank) {
      uint64_t lo = LowerBound(i);
      uint64_t hi = i + 1 < kBuckets ? LowerBound(i + 1) : lo;
      uint64_t mid = lo + (hi - lo) / 2;
      return std::clamp(mid, min(), max_);
    }
  }
  return max_;
}

void LatencyHistogram::ToProto(v1::Histogram* out) const {
  out->Clear();
  for (int i = 0; i < kBuckets; ++i) {
    if (counts_[i] == 0) continue;
    out->add_bucket(static_cast<uint32_t>(i));
    out->add_count(counts_[i]);
  }
  out->set_total_count(total_);
  out->set_max_ns(max_);
  out->set_min_ns(min());
  out->set_sum_ns(sum_);
}

void LatencyHistogram::MergeProto(const v1::Histogram& in) {
  int n = std::min(in.bucket_size(), in.count_size());
  for (int i = 0; i < n; ++i) {
    uint32_t b = in.bucket(i);
    if (b < static_cast<uint32_t>(kBuckets)) counts_[b] += in.count(i);
  }
  total_ += in.total_count();
  sum_ += in.sum_ns();
  max_ = std::max<uint64_t>(max_, in.max_ns());
  if (in.total_count() > 0) min_ = std::min<uint64_t>(min_, in.min_ns());
}

}  // namespace lockstep
