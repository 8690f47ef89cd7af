// libFuzzer target for `lockstep dlio`'s translation (controller/dlio/):
// DLIO's workload YAML -> DlioConfig -> plan text -> ParsePlan. Any byte
// string must give a config or an error naming the file, and a config must
// give plan text that ParsePlan accepts or refuses with a message, never a
// crash, a hang or a sanitizer report. Seeds: tests/fuzz/corpus/dlio/ (the
// shipped workloads of deploy/plans/dlio/ and hostile ones).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "controller/dlio/dlio_config.h"
#include "controller/dlio/dlio_plan.h"
#include "controller/plan/plan.h"

namespace {

void Check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "dlio_fuzzer: invariant broken: %s\n", what);
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  auto config = lockstep::ParseDlioConfig(text, "fuzz.yaml");
  if (!config.ok()) {
    Check(!config.status().message().empty(), "an error without a message");
    return 0;
  }
  for (bool smoke : {false, true}) {
    lockstep::DlioPlanOptions o;
    o.smoke = smoke;
    o.hosts = 2;
    o.data_dir = "/tmp/lockstep-fuzz-data";
    const lockstep::DlioPlan plan = lockstep::DlioToPlan(*config, o);
    auto parsed = lockstep::ParsePlan(plan.toml, "fuzz.yaml (as a plan)");
    if (!parsed.ok()) Check(!parsed.status().message().empty(), "a plan error without a message");
  }
  return 0;
}
