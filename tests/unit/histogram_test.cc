#include "common/histogram.h"

#include <cmath>
#include <random>

#include "gtest/gtest.h"

namespace lockstep {
namespace {

TEST(Histogram, RelativeErrorBelowOnePercent) {
  for (uint64_t v : {1ULL, 127ULL, 128ULL, 1000ULL, 4097ULL, 123456ULL, 987654321ULL,
                     (1ULL << 40) + 12345ULL}) {
    LatencyHistogram h;
    h.Record(v);
    uint64_t q = h.Quantile(0.5);
    EXPECT_LE(std::fabs(static_cast<double>(q) - static_cast<double>(v)) / static_cast<double>(v),
              0.01)
        << v << " reported as " << q;
  }
  // Bucket bounds are monotonic and tile the range.
  for (int b = 1; b < LatencyHistogram::kBuckets; ++b) {
    ASSERT_LT(LatencyHistogram::LowerBound(b - 1), LatencyHistogram::LowerBound(b)) << b;
    ASSERT_EQ(LatencyHistogram::BucketOf(LatencyHistogram::LowerBound(b)), b);
  }
}

TEST(Histogram, PercentilesOfAKnownDistribution) {
  LatencyHistogram h;
  for (uint64_t v = 1; v <= 100000; ++v) h.Record(v * 10);
  EXPECT_NEAR(static_cast<double>(h.Quantile(0.5)), 500000, 5000);
  EXPECT_NEAR(static_cast<double>(h.Quantile(0.99)), 990000, 9900);
  EXPECT_NEAR(static_cast<double>(h.Quantile(0.999)), 999000, 9990);
  EXPECT_EQ(h.max(), 1000000u);
  EXPECT_EQ(h.min(), 10u);
  EXPECT_EQ(h.count(), 100000u);
}

TEST(Histogram, MergeThroughProtoIsExact) {
  std::mt19937_64 rng(7);
  std::lognormal_distribution<double> dist(10, 2);
  LatencyHistogram a, b, all;
  for (int i = 0; i < 50000; ++i) {
    uint64_t v = static_cast<uint64_t>(dist(rng)) + 1;
    (i % 3 ? a : b).Record(v);
    all.Record(v);
  }
  v1::Histogram pa, pb;
  a.ToProto(&pa);
  b.ToProto(&pb);
  LatencyHistogram merged;
  merged.MergeProto(pa);
  merged.MergeProto(pb);
  for (double q : {0.0, 0.1, 0.5, 0.9, 0.99, 0.999, 1.0}) {
    EXPECT_EQ(merged.Quantile(q), all.Quantile(q)) << q;
  }
  EXPECT_EQ(merged.count(), all.count());
  EXPECT_EQ(merged.max(), all.max());
  EXPECT_EQ(merged.min(), all.min());
  EXPECT_DOUBLE_EQ(merged.mean(), all.mean());
}

}  // namespace
}  // namespace lockstep
