#include "common/sizes.h"

#include "gtest/gtest.h"

namespace lockstep {
namespace {

TEST(ParseSize, IorSuffixesArePowersOfTwo) {
  EXPECT_EQ(*ParseSize("60g"), 64424509440ULL);
  EXPECT_EQ(*ParseSize("1m"), 1048576ULL);
  EXPECT_EQ(*ParseSize("1K"), 1024ULL);
  EXPECT_EQ(*ParseSize("2t"), 2ULL << 40);
}

TEST(ParseSize, ExplicitUnits) {
  EXPECT_EQ(*ParseSize("1MiB"), 1048576ULL);
  EXPECT_EQ(*ParseSize("4GiB"), 4ULL << 30);
  EXPECT_EQ(*ParseSize("1MB"), 1000000ULL);
  EXPECT_EQ(*ParseSize("4096"), 4096ULL);
  EXPECT_EQ(*ParseSize("4 KiB"), 4096ULL);
  EXPECT_EQ(*ParseSize("7B"), 7ULL);
}

TEST(ParseSize, BadInputNamesTheText) {
  auto r = ParseSize("1x");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("\"1x\""), std::string::npos);
  EXPECT_NE(r.status().message().find("unknown unit"), std::string::npos);
  EXPECT_FALSE(ParseSize("-1m").ok());
  EXPECT_NE(ParseSize("-1m").status().message().find("negative"), std::string::npos);
  EXPECT_FALSE(ParseSize("").ok());
  EXPECT_FALSE(ParseSize("m").ok());
  EXPECT_FALSE(ParseSize("99999999999999999999").ok());
  EXPECT_FALSE(ParseSize("20000000p").ok());
}

TEST(HumanBytes, MatchesIor) {
  EXPECT_EQ(HumanBytes(1048576), "1 MiB");
  EXPECT_EQ(HumanBytes(64424509440ULL), "60 GiB");
  EXPECT_EQ(HumanBytes(1572864), "1.50 MiB");
  EXPECT_EQ(HumanBytes(512), "512 bytes");
}

}  // namespace
}  // namespace lockstep
