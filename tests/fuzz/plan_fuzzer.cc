// libFuzzer target for the plan parser (controller/plan/plan.h ParsePlan): any
// byte string must give a Plan or an InvalidArgument status, never a crash,
// a hang or a sanitizer report; an accepted plan must be self-consistent.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "controller/plan/plan.h"
#include "controller/plan/write_places.h"

namespace {

void Check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "plan_fuzzer: invariant broken: %s\n", what);
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<lockstep::Plan> plan = lockstep::ParsePlan(text, "fuzz.toml");
  if (!plan.ok()) {
    Check(!plan.status().message().empty(), "an error without a message");
    Check(plan.status().message().find("fuzz.toml") != absl::string_view::npos,
          "an error that does not name the file");
    return 0;
  }
  // What the coordinator relies on once a plan is accepted.
  Check(!plan->phases.empty(), "a plan without phases");
  Check(plan->repetitions >= 1, "zero repetitions");
  Check(plan->lease_ms >= 200, "lease_ms below its minimum");
  const uint32_t tests = plan->tests();
  Check(tests >= 1, "zero tests");
  for (const lockstep::PhasePlan& p : plan->phases) {
    Check(p.transfer_bytes > 0 && p.block_bytes > 0 && p.segments > 0, "a zero size");
    for (uint32_t t = 0; t < tests; ++t) {
      uint32_t n = plan->TasksPerAgent(p, t);
      Check(n >= 1 && n <= lockstep::kMaxAgentTasks, "tasks per agent out of range");
    }
  }
  // Where it may write on local agents: an accepted directory is never a
  // system directory (the corpus has hostile ones: /etc, /tmp/../etc,
  // /dev/sda, /proc/self, "/"), and a refusal names the file and the fix.
  lockstep::LocalWritePlaces places;
  places.cwd = "/nonexistent-cwd";
  absl::Status where = lockstep::CheckLocalWritePlaces(*plan, places);
  if (where.ok()) {
    for (const lockstep::PhasePlan& p : plan->phases) {
      if (p.dir.empty() || p.dir[0] != '/') continue;
      Check(!lockstep::IsSystemDirectory(lockstep::WhereItLands(p.dir, places.cwd)),
            "a system directory accepted for local agents");
    }
  } else {
    Check(where.message().find("fuzz.toml") != absl::string_view::npos, "a refusal without the file");
    Check(where.message().find("--root") != absl::string_view::npos, "a refusal without the fix");
  }
  return 0;
}
