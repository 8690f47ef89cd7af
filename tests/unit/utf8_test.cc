#include "common/utf8.h"

#include "gtest/gtest.h"

namespace lockstep {
namespace {

TEST(Utf8, SequencesAndTheirCodePoints) {
  uint32_t cp = 0;
  EXPECT_EQ(Utf8SequenceAt("a", 0, &cp), 1u);
  EXPECT_EQ(cp, 'a');
  EXPECT_EQ(Utf8SequenceAt("\xc3\xa9", 0, &cp), 2u);
  EXPECT_EQ(cp, 0xe9u);
  EXPECT_EQ(Utf8SequenceAt("\xe2\x80\xae", 0, &cp), 3u);
  EXPECT_EQ(cp, 0x202eu);
  EXPECT_EQ(Utf8SequenceAt("\xf0\x9f\x98\x80", 0, &cp), 4u);
  EXPECT_EQ(cp, 0x1f600u);
  EXPECT_EQ(Utf8SequenceAt("x\xc3\xa9", 1), 2u);  // no code point asked
}

TEST(Utf8, WhatIsNotUtf8) {
  EXPECT_EQ(Utf8SequenceAt("\xff", 0), 0u);
  EXPECT_EQ(Utf8SequenceAt("\x80", 0), 0u);              // a stray continuation byte
  EXPECT_EQ(Utf8SequenceAt("\xc3", 0), 0u);              // cut short
  EXPECT_EQ(Utf8SequenceAt("\xc3x", 0), 0u);             // not a continuation
  EXPECT_EQ(Utf8SequenceAt("\xc0\xaf", 0), 0u);          // overlong, 2 bytes
  EXPECT_EQ(Utf8SequenceAt("\xe0\x80\xaf", 0), 0u);      // overlong, 3 bytes
  EXPECT_EQ(Utf8SequenceAt("\xf0\x80\x80\xaf", 0), 0u);  // overlong, 4 bytes
  EXPECT_EQ(Utf8SequenceAt("\xed\xa0\x80", 0), 0u);      // a surrogate
  EXPECT_EQ(Utf8SequenceAt("\xf4\x90\x80\x80", 0), 0u);  // above U+10FFFF
  EXPECT_TRUE(IsUtf8(""));
  EXPECT_TRUE(IsUtf8("/tmp/caf\xc3\xa9/f"));
  EXPECT_FALSE(IsUtf8("/tmp/caf\xe9/f"));
  EXPECT_FALSE(IsUtf8("ok\xc3"));
}

TEST(Utf8, BoundaryFromSkipsIntoTheNextCharacter) {
  const std::string s = "a\xf0\x9f\x98\x80z";
  EXPECT_EQ(Utf8BoundaryFrom(s, 0), 0u);
  EXPECT_EQ(Utf8BoundaryFrom(s, 1), 1u);
  EXPECT_EQ(Utf8BoundaryFrom(s, 2), 5u);
  EXPECT_EQ(Utf8BoundaryFrom(s, 4), 5u);
  EXPECT_EQ(Utf8BoundaryFrom(s, 6), 6u);  // the end
}

TEST(Utf8, TailIsValidAndKeepsTheEnd) {
  EXPECT_EQ(Utf8Tail("hello", 3), "llo");
  EXPECT_EQ(Utf8Tail("h\xc3\xa9llo", 5), "\xc3\xa9llo");
  EXPECT_EQ(Utf8Tail("h\xc3\xa9llo", 4), "llo");  // half a character is dropped
  EXPECT_EQ(Utf8Tail("a\xff" "b\xc3", 10), "a?b?");
  EXPECT_EQ(Utf8Tail("\xed\xa0\x80", 10), "???");  // a surrogate
  EXPECT_EQ(Utf8Tail("\xf0\x9f\x98\x80!", 10), "\xf0\x9f\x98\x80!");
}

}  // namespace
}  // namespace lockstep
