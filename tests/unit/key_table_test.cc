// A kind's key table (controller/plan/kinds/key_table.h): one row per key
// gives the kind's key list, its reads with their limits and errors, its
// TOML, its spec fields and its swept copies.
#include "controller/plan/kinds/key_table.h"

#include <toml++/toml.h>

#include <string>

#include "controller/plan/plan.h"
#include "gtest/gtest.h"

namespace lockstep::kinds {
namespace {

struct ToyPlan : KindParamsOf<ToyPlan> {
  uint64_t files = 0;
  uint32_t per_dir = 7;
  uint64_t size_bytes = 0;
  bool unique = false;
  uint32_t kept = 0;  // no spec field: its kind fills the spec itself
};

using S = v1::PhaseSpec;
const KeyTable<ToyPlan>& Table() {
  static const KeyTable<ToyPlan> table =
      KeyTable<ToyPlan>()
          .Uint("small_files", &ToyPlan::files, 1, 100, &S::set_small_files, {.swept = true})
          .Uint32("small_files_per_dir", &ToyPlan::per_dir, 1, 9, &S::set_small_files_per_dir,
                  {.write_zero = true})
          .Size("small_file_max_size", &ToyPlan::size_bytes, &S::set_small_file_max_bytes,
                {.swept = true})
          .Bool("md_unique_dir", &ToyPlan::unique, &S::set_md_unique_dir)
          .Uint32("ping_count", &ToyPlan::kept, 0, 5, nullptr);
  return table;
}

toml::table Parse(const std::string& text) {
  try {
    return toml::parse(std::string_view(text), std::string("toy.toml"));
  } catch (const toml::parse_error& e) {
    ADD_FAILURE() << e.what();
    return {};
  }
}

absl::Status ReadToy(const std::string& text, ToyPlan* toy) {
  const toml::table t = Parse(text);
  TableReader r(t, "toy.toml", "[[phase]] 'p'", Table().Keys());
  return Table().Read(r, toy);
}

TEST(KeyTable, ListsItsKeysInOrderAndItsSweptOnes) {
  EXPECT_EQ(Table().Keys(), (std::vector<std::string>{"small_files", "small_files_per_dir",
                                                      "small_file_max_size", "md_unique_dir",
                                                      "ping_count"}));
  const std::vector<SweptKey> swept = Table().Swept();
  ASSERT_EQ(swept.size(), 2u);
  EXPECT_EQ(swept[0].key, "small_files");
  EXPECT_EQ(swept[1].key, "small_file_max_size");

  PhasePlan from, to;
  from.Own<ToyPlan>().files = 42;
  from.Own<ToyPlan>().size_bytes = 4096;
  from.Own<ToyPlan>().unique = true;
  swept[0].copy(from, &to);
  EXPECT_EQ(to.Own<ToyPlan>().files, 42u);
  EXPECT_EQ(to.Own<ToyPlan>().size_bytes, 0u);  // each copy moves its own key only
  swept[1].copy(from, &to);
  EXPECT_EQ(to.Own<ToyPlan>().size_bytes, 4096u);
  EXPECT_FALSE(to.Own<ToyPlan>().unique);
}

TEST(KeyTable, ReadsEachTypeAndLeavesAbsentKeysAsTheyWere) {
  ToyPlan toy;
  ASSERT_TRUE(ReadToy("small_files = 12\nsmall_file_max_size = \"4k\"\nmd_unique_dir = true\n",
                      &toy)
                  .ok());
  EXPECT_EQ(toy.files, 12u);
  EXPECT_EQ(toy.size_bytes, 4096u);
  EXPECT_TRUE(toy.unique);
  EXPECT_EQ(toy.per_dir, 7u);  // absent: its default kept
  EXPECT_EQ(toy.kept, 0u);
}

TEST(KeyTable, ARefusalNamesTheKeyItsLineAndTheLimits) {
  ToyPlan toy;
  absl::Status s = ReadToy("small_files = 3\nsmall_files_per_dir = 10\n", &toy);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("toy.toml:2"), std::string::npos) << s;
  EXPECT_NE(s.message().find("small_files_per_dir"), std::string::npos) << s;
  EXPECT_NE(s.message().find("9"), std::string::npos) << s;  // the maximum

  s = ReadToy("small_file_max_size = true\n", &toy);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("small_file_max_size"), std::string::npos) << s;

  s = ReadToy("small_files = 0\nmd_unique_dir = 3\n", &toy);  // the first bad key is named
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("small_files"), std::string::npos) << s;
  EXPECT_EQ(s.message().find("md_unique_dir"), std::string::npos) << s;
}

TEST(KeyTable, WritesTomlByEachRowsRuleAndFillsTheSpec) {
  ToyPlan toy;
  toy.per_dir = 0;
  std::string text;
  TomlLines lines(&text);
  Table().Write(toy, &lines);
  // Zero and false are left out, except where the row says to write them.
  EXPECT_EQ(text, "small_files_per_dir = 0\n");

  toy = ToyPlan{};
  toy.files = 5;
  toy.size_bytes = 8192;
  toy.unique = true;
  toy.kept = 3;
  text.clear();
  Table().Write(toy, &lines);
  EXPECT_EQ(text,
            "small_files = 5\nsmall_files_per_dir = 7\nsmall_file_max_size = 8192\n"
            "md_unique_dir = true\nping_count = 3\n");
  ToyPlan again;
  ASSERT_TRUE(ReadToy(text, &again).ok()) << text;
  EXPECT_EQ(again.files, 5u);
  EXPECT_EQ(again.size_bytes, 8192u);
  EXPECT_EQ(again.kept, 3u);

  S spec;
  Table().Fill(toy, &spec);
  EXPECT_EQ(spec.small_files(), 5u);
  EXPECT_EQ(spec.small_files_per_dir(), 7u);
  EXPECT_EQ(spec.small_file_max_bytes(), 8192u);
  EXPECT_TRUE(spec.md_unique_dir());
  S expected;  // those four and nothing else: the row without a setter fills nothing
  expected.set_small_files(5);
  expected.set_small_files_per_dir(7);
  expected.set_small_file_max_bytes(8192);
  expected.set_md_unique_dir(true);
  EXPECT_EQ(spec.SerializeAsString(), expected.SerializeAsString());
}

}  // namespace
}  // namespace lockstep::kinds
