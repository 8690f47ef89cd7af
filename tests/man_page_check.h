// Checks shared by the unit and integration tests of the man pages: a page
// generated from a program's flag tables names every flag under OPTIONS.
#ifndef LOCKSTEP_TESTS_MAN_PAGE_CHECK_H_
#define LOCKSTEP_TESTS_MAN_PAGE_CHECK_H_

#include <string>

#include "common/flags.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace lockstep::testing {

inline void ExpectManPage(const std::string& man, const ProgramSpec& program) {
  EXPECT_THAT(man, ::testing::HasSubstr(".TH "));
  EXPECT_THAT(man, ::testing::HasSubstr(".SH NAME\n"));
  EXPECT_THAT(man, ::testing::HasSubstr(".SH SYNOPSIS\n"));
  const size_t options = man.find(".SH OPTIONS\n");
  ASSERT_NE(options, std::string::npos);
  for (const CommandSpec* c : program.commands) {
    for (const FlagSpec& f : c->flags) {
      if (f.hidden) continue;
      std::string roff;  // "--tls_dir" as roff writes it: "\-\-tls_dir"
      for (char ch : "--" + std::string(f.name)) roff += ch == '-' ? "\\-" : std::string(1, ch);
      EXPECT_NE(man.find(".B " + roff, options), std::string::npos)
          << c->FullName() << " --" << f.name;
    }
  }
}

}  // namespace lockstep::testing

#endif  // LOCKSTEP_TESTS_MAN_PAGE_CHECK_H_
