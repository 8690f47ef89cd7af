#include "controller/record/fold.h"

#include <map>
#include <string>
#include <vector>

#include "controller/record/ior_math.h"
#include "controller/record/layers.h"

namespace lockstep {

bool Counts(const v1::PhaseRecord& phase) { return phase.ok() && !IsSuperseded(phase); }

void FoldTest(const v1::RunRecord& run, v1::TestRecord* test) {
  struct Folded {
    std::vector<const v1::PhaseRecord*> counted;
    const v1::PhaseSpec* spec = nullptr;  // the last counted record's, else the plan's
  };
  std::vector<std::string> order;
  std::map<std::string, Folded> by_name;
  for (const v1::PhaseSpec& s : test->plan_specs()) {
    // Unnamed (a run older than phase_name) or named twice: matched by records only.
    if (s.phase_name().empty() || by_name.count(s.phase_name()) != 0) continue;
    order.push_back(s.phase_name());
    by_name[s.phase_name()].spec = &s;
  }
  for (const v1::PhaseRecord& p : test->phases()) {
    auto [it, added] = by_name.try_emplace(p.phase());
    if (added) order.push_back(p.phase());
    if (!Counts(p)) {
      if (it->second.spec == nullptr) it->second.spec = &p.spec();
      continue;
    }
    it->second.counted.push_back(&p);
    it->second.spec = &p.spec();
  }
  test->clear_summary();
  test->clear_layers();
  const TestReorder reorder = TestReorderOf(run, *test);
  for (const std::string& name : order) {
    const Folded& f = by_name[name];
    *test->add_summary() = SummarizePhase(f.counted, *f.spec, name, test->test_id(), reorder);
  }
  for (v1::LayerRow& row : LayersOf(*test)) *test->add_layers() = std::move(row);
}

}  // namespace lockstep
