// Big plans in time linear in the plan (issue 39 item 9): `--dry-run` of a
// 10,000-value sweep took 16.6 s (1,000: 0.17 s), because every test copied
// the whole sweep (ResolvePhase) and compared every list (SweepValuesOf).
// Checked structurally, not by the clock: the heap allocations of parsing,
// resolving and dry-running a plan, counted, grow about tenfold for a
// tenfold plan (a copy of the sweep per test makes it a hundredfold). The
// timings are in tests/bench/plan_scale.py's output (tests/bench/README.md).
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <new>
#include <string>

#include "controller/plan/plan.h"
#include "controller/plan/plan_smoke.h"
#include "controller/plan/sweep.h"
#include "gtest/gtest.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define LOCKSTEP_COUNTS_ALLOCATIONS 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define LOCKSTEP_COUNTS_ALLOCATIONS 0
#endif
#endif
#ifndef LOCKSTEP_COUNTS_ALLOCATIONS
#define LOCKSTEP_COUNTS_ALLOCATIONS 1
#endif

namespace {
std::atomic<uint64_t> g_allocations{0};
thread_local bool g_counting = false;
}  // namespace

#if LOCKSTEP_COUNTS_ALLOCATIONS
// The replacement pairs malloc with free itself; GCC cannot see that.
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
// The unit binary's operator new counts on the thread that asks it to (a
// sanitizer build keeps its own and skips these tests).
void* operator new(std::size_t n) {
  if (g_counting) g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
#endif

namespace lockstep {
namespace {

uint64_t AllocationsOf(const std::function<void()>& f) {
  g_allocations = 0;
  g_counting = true;
  f();
  g_counting = false;
  return g_allocations.load();
}

std::string SweepPlan(int n) {
  std::string values;
  for (int i = 0; i < n; ++i) values += (i ? ", " : "") + std::to_string(i + 1);
  return "[[phase]]\nname = \"w\"\nkind = \"write\"\ndir = \"/s\"\nblock_size = \"4k\"\n"
         "transfer_size = \"4k\"\nsegments = [" + values + "]\n"
         "[[phase]]\nname = \"r\"\nkind = \"read\"\ndir = \"/s\"\nblock_size = \"4k\"\n"
         "transfer_size = \"4k\"\nsegments = [" + values + "]\n";
}

std::string PhasesPlan(int n) {
  std::string text;
  for (int i = 0; i < n; ++i) {
    text += "[[phase]]\nname = \"p" + std::to_string(i) + "\"\nkind = \"write\"\ndir = \"/s\"\n";
  }
  return text;
}

// What --dry-run does with a plan: parse, resolve every test, format.
uint64_t DryRunAllocations(const std::string& text) {
  return AllocationsOf([&] {
    auto plan = ParsePlan(text, "p.toml");
    ASSERT_TRUE(plan.ok()) << plan.status();
    for (uint32_t t = 0; t < plan->tests(); ++t) {
      for (const PhasePlan& p : plan->phases) (void)ResolvePhase(*plan, p, t);
      (void)SweepValuesOf(*plan, t);
    }
    (void)FormatDryRun(*plan, {.clients = 2, .source = "t"}, {});
  });
}

// Tenfold input, at most twentyfold work (linear: about tenfold; the
// quadratic copies were a hundredfold and more).
void ExpectLinear(uint64_t small, uint64_t big) {
  ASSERT_GT(small, 0u);
  EXPECT_LE(big, 20 * small) << "allocations: " << small << " for the small plan, " << big
                             << " for the tenfold one: more than linear";
}

TEST(PlanScale, DryRunOfATenfoldSweepAllocatesAboutTenfold) {
  if (!LOCKSTEP_COUNTS_ALLOCATIONS) GTEST_SKIP() << "a sanitizer build counts its own";
  ExpectLinear(DryRunAllocations(SweepPlan(500)), DryRunAllocations(SweepPlan(5000)));
}

TEST(PlanScale, DryRunOfTenfoldPhasesAllocatesAboutTenfold) {
  if (!LOCKSTEP_COUNTS_ALLOCATIONS) GTEST_SKIP() << "a sanitizer build counts its own";
  ExpectLinear(DryRunAllocations(PhasesPlan(300)), DryRunAllocations(PhasesPlan(3000)));
}

TEST(PlanScale, ResolvingOneTestCopiesNoneOfTheSweep) {
  if (!LOCKSTEP_COUNTS_ALLOCATIONS) GTEST_SKIP() << "a sanitizer build counts its own";
  auto small = ParsePlan(SweepPlan(10), "p.toml");
  auto big = ParsePlan(SweepPlan(10000), "p.toml");
  ASSERT_TRUE(small.ok() && big.ok());
  const uint64_t a = AllocationsOf([&] { (void)ResolvePhase(*small, small->phases[0], 3); });
  const uint64_t b = AllocationsOf([&] { (void)ResolvePhase(*big, big->phases[0], 3); });
  EXPECT_EQ(a, b) << "ResolvePhase's work depends on the sweep's length";
  const uint64_t c = AllocationsOf([&] { (void)SweepValuesOf(*small, 3); });
  const uint64_t d = AllocationsOf([&] { (void)SweepValuesOf(*big, 3); });
  EXPECT_EQ(c, d) << "SweepValuesOf's work depends on the sweep's length";
}

}  // namespace
}  // namespace lockstep
