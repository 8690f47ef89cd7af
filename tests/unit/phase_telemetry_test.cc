// PhaseTelemetry on this host's /proc: a server's windows opened and closed
// by Telemetry calls, a client's window riding on the phase result, and the
// refusals when a window is not open or telemetry is off.
#include "agent/phase_telemetry.h"

#include <memory>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test_util.h"

namespace lockstep {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::unique_ptr<TelemetrySampler> HostSampler() {
  TelemetryOptions o;
  o.fs_stats = {};
  o.process_cpu = false;
  auto sampler = TelemetrySampler::Create(o);
  EXPECT_TRUE(sampler.ok()) << sampler.status();
  return sampler.ok() ? std::move(*sampler) : nullptr;
}

v1::TelemetryRequest Request(const std::string& phase_id, bool end) {
  v1::TelemetryRequest r;
  r.set_phase_id(phase_id);
  r.set_end(end);
  return r;
}

TEST(PhaseTelemetry, AServerWindowIsOpenedThenClosedOnce) {
  auto sampler = HostSampler();
  ASSERT_NE(sampler, nullptr);
  CephDaemons none(CephDaemonOptions{});
  PhaseTelemetry telemetry(sampler.get(), &none);
  telemetry.Prime();
  ASSERT_OK(telemetry.Window(Request("t0/r0/write", false)));
  auto closed = telemetry.Window(Request("t0/r0/write", true));
  ASSERT_OK(closed);
  EXPECT_TRUE(closed->has_telemetry());
  EXPECT_GT(closed->telemetry().end_unix_ns(), 0);
  auto again = telemetry.Window(Request("t0/r0/write", true));
  EXPECT_EQ(again.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(again.status().message(),
              HasSubstr("no telemetry window is open for phase t0/r0/write"));
}

TEST(PhaseTelemetry, ClearForgetsTheOpenWindows) {
  auto sampler = HostSampler();
  ASSERT_NE(sampler, nullptr);
  CephDaemons none(CephDaemonOptions{});
  PhaseTelemetry telemetry(sampler.get(), &none);
  ASSERT_OK(telemetry.Window(Request("p", false)));
  telemetry.Clear();
  EXPECT_EQ(telemetry.Window(Request("p", true)).status().code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST(PhaseTelemetry, TheClientWindowRidesOnThePhaseResultOnly) {
  auto sampler = HostSampler();
  ASSERT_NE(sampler, nullptr);
  CephDaemons none(CephDaemonOptions{});
  PhaseTelemetry telemetry(sampler.get(), &none);
  std::vector<v1::PhaseEvent> seen;
  auto sink = telemetry.WrapSink([&](const v1::PhaseEvent& e) { seen.push_back(e); });
  v1::PhaseEvent progress;
  progress.mutable_progress();
  sink(progress);
  v1::PhaseEvent result;
  result.mutable_result()->set_ok(true);
  sink(result);
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_FALSE(seen[0].has_result());
  ASSERT_TRUE(seen[1].has_result());
  EXPECT_TRUE(seen[1].result().has_telemetry());
  EXPECT_GT(seen[1].result().telemetry().end_unix_ns(), 0);
}

TEST(PhaseTelemetry, OffSaysSoAndLeavesTheSinkAlone) {
  CephDaemons none(CephDaemonOptions{});
  PhaseTelemetry telemetry(nullptr, &none);
  auto opened = telemetry.Window(Request("p", false));
  ASSERT_OK(opened);
  EXPECT_FALSE(opened->has_telemetry());
  auto closed = telemetry.Window(Request("p", true));
  ASSERT_OK(closed);
  EXPECT_THAT(closed->telemetry().warnings(), ElementsAre("telemetry is off on this agent"));
  int results = 0;
  auto sink = telemetry.WrapSink([&](const v1::PhaseEvent& e) {
    if (e.has_result() && !e.result().has_telemetry()) ++results;
  });
  v1::PhaseEvent result;
  result.mutable_result();
  sink(result);
  EXPECT_EQ(results, 1);
}

}  // namespace
}  // namespace lockstep
