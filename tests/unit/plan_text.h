// Plan text for the plan tests: a [[phase]] table and the error ParsePlan
// gives for a text (what a user would see), shared by plan_test,
// plan_find_test and sweep_test.
#ifndef LOCKSTEP_TESTS_UNIT_PLAN_TEXT_H_
#define LOCKSTEP_TESTS_UNIT_PLAN_TEXT_H_

#include <string>

#include "controller/plan/plan.h"
#include "gtest/gtest.h"
#include "test_util.h"

namespace lockstep::plan_text {

// "OK" when `text` parses, else ParsePlan's message (an InvalidArgument).
inline std::string Error(const std::string& text) {
  return testing::ErrorOrOk(ParsePlan(text, "plan.toml"));
}

// A [[phase]] table in /x with `extra` keys.
inline std::string Phase(const std::string& name, const std::string& kind,
                         const std::string& extra) {
  return "[[phase]]\nname = \"" + name + "\"\nkind = \"" + kind + "\"\ndir = \"/x\"\n" + extra;
}

}  // namespace lockstep::plan_text

#endif  // LOCKSTEP_TESTS_UNIT_PLAN_TEXT_H_
