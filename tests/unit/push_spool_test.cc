// The push client's spool (controller/push/push_client.h): a bundle file is
// input from anyone, so where the spool writes and what a delivered push
// removes never follow the bundle's own fields.
#include <filesystem>
#include <string>

#include "common/files.h"
#include "controller/push/push_client.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test_util.h"

namespace lockstep {
namespace {

// Nothing listens on port 1 of loopback: the push is unreachable and spools.
PushTarget Unreachable() {
  return {.url = "https://127.0.0.1:1", .connect_timeout_s = 2, .read_timeout_s = 2};
}

TEST(PushSpool, ABundlesOwnHashFieldNeverPicksThePath) {
  testing::TempDir dir;
  const std::string spool = dir / "spool";
  const std::string victim = dir / "victim";  // beside the spool, as ~/.ssh is beside a cwd
  v1::RunBundle bundle;
  bundle.set_content("ssh-ed25519 AAAA attacker\n");
  bundle.set_content_sha256(std::string("../victim\0.", 11));

  const PushResult r = PushOrSpool(Unreachable(), spool, bundle, RunVisibility{});
  ASSERT_EQ(r.kind, PushResult::kUnreachable) << r.message;
  EXPECT_FALSE(std::filesystem::exists(victim)) << r.message;
  const std::string expected = spool + "/" + Sha256Hex(bundle.content()) + ".lsbundle";
  EXPECT_TRUE(std::filesystem::exists(expected)) << r.message;
  EXPECT_EQ(SpooledBundles(spool), std::vector<std::string>{expected});
  EXPECT_NE(r.message.find(expected), std::string::npos) << r.message;
}

// A run pushed private (or embargoed) that waits in the spool is sent as
// asked later: the spool keeps the visibility in the file's name.
TEST(PushSpool, ASpooledRunKeepsTheVisibilityItWasPushedWith) {
  testing::TempDir dir;
  const std::string spool = dir / "spool";
  for (const char* words : {"shared", "private", "embargo 2027-03-01",
                            "embargo 2027-03-01T12:30:00Z"}) {
    SCOPED_TRACE(words);
    auto visibility = ParseRunVisibility(words);
    ASSERT_TRUE(visibility.ok()) << visibility.status();
    EXPECT_EQ(RunVisibilityText(*visibility), words);
    v1::RunBundle bundle;
    bundle.set_content(words);
    const PushResult r = PushOrSpool(Unreachable(), spool, bundle, *visibility);
    ASSERT_EQ(r.kind, PushResult::kUnreachable) << r.message;
    std::string path;
    for (const std::string& p : SpooledBundles(spool)) {
      if (p.rfind(spool + "/" + Sha256Hex(words), 0) == 0) path = p;
    }
    ASSERT_FALSE(path.empty()) << r.message;
    const RunVisibility back = SpooledVisibility(path);
    EXPECT_EQ(back.kind, visibility->kind) << path;
    EXPECT_EQ(back.until_unix_s, visibility->until_unix_s) << path;
  }
  EXPECT_EQ(SpooledBundles(spool).size(), 4u);
  EXPECT_FALSE(ParseRunVisibility("public").ok());
  EXPECT_FALSE(ParseRunVisibility("embargo soon").ok());
}

// An embargo chosen now that has already ended would share the run at once
// (a wrong year publishes it): refused, naming its date and today.
TEST(PushSpool, AnEmbargoChosenNowMustEndLater) {
  const int64_t now_s = 1'796'000'000;  // 2026-11-30T00:53:20Z
  auto past = ParseRunVisibility("embargo 2026-03-01");
  ASSERT_TRUE(past.ok());
  const absl::Status s = CheckChosenVisibility(*past, now_s);
  EXPECT_TRUE(absl::IsInvalidArgument(s));
  EXPECT_THAT(std::string(s.message()), ::testing::HasSubstr("embargo 2026-03-01"));
  EXPECT_THAT(std::string(s.message()), ::testing::HasSubstr("today is 2026-11-30"));
  auto at_now = ParseRunVisibility("embargo 2026-11-30T00:53:20Z");
  ASSERT_TRUE(at_now.ok());
  EXPECT_FALSE(CheckChosenVisibility(*at_now, now_s).ok());
  auto later = ParseRunVisibility("embargo 2027-03-01");
  ASSERT_TRUE(later.ok());
  EXPECT_TRUE(CheckChosenVisibility(*later, now_s).ok());
  for (const char* words : {"shared", "private"}) {
    EXPECT_TRUE(CheckChosenVisibility(*ParseRunVisibility(words), now_s).ok()) << words;
  }
}

TEST(PushSpool, AServiceUrlIsHttpsWithAPortInRange) {
  for (const char* url : {"https://results.example.org", "https://h:8443", "https://h:8443/",
                          "https://[::1]:8443", "https://[fe80::1]", "https://10.0.0.1:1"}) {
    EXPECT_TRUE(CheckServiceUrl(url).ok()) << url;
  }
  for (const char* url : {"http://h:8443", "https://h:0", "https://h:65536", "https://h:99999",
                          "https://h:x", "https://[::1", "https://::1:8443", "https://h/x",
                          "https://[h]:1"}) {
    const absl::Status s = CheckServiceUrl(url);
    EXPECT_TRUE(absl::IsInvalidArgument(s)) << url;
    EXPECT_THAT(std::string(s.message()), ::testing::HasSubstr(url));
  }
}

// A spool that cannot be written keeps nothing: the result says so, and
// the push does not count the run as spooled.
TEST(PushSpool, ASpoolThatCannotBeWrittenIsNotCountedAsSpooled) {
  testing::TempDir dir;
  ASSERT_TRUE(WriteFileAtomically(dir / "file", "x").ok());
  v1::RunBundle bundle;
  bundle.set_content("run");
  const PushResult r = PushOrSpool(Unreachable(), dir / "file", bundle, RunVisibility{});
  EXPECT_EQ(r.kind, PushResult::kUnreachable);
  EXPECT_FALSE(r.spooled);
  EXPECT_THAT(r.message, ::testing::HasSubstr("NOT spooled"));
  const PushResult kept = PushOrSpool(Unreachable(), dir / "spool", bundle, RunVisibility{});
  EXPECT_TRUE(kept.spooled) << kept.message;
}

// A spooled bundle the service refused is moved aside, kept, and no longer
// among the spooled bundles every later push sends.
TEST(PushSpool, ARefusedSpooledBundleIsSetAside) {
  testing::TempDir dir;
  const std::string spool = dir / "spool";
  v1::RunBundle bundle;
  bundle.set_content("refused run");
  ASSERT_TRUE(SpoolBundle(spool, bundle, RunVisibility{}).ok());
  ASSERT_EQ(SpooledBundles(spool).size(), 1u);
  const std::string path = SpooledBundles(spool)[0];
  auto moved = SetAsideRefused(path);
  ASSERT_TRUE(moved.ok()) << moved.status();
  EXPECT_EQ(*moved, spool + "/refused/" + std::filesystem::path(path).filename().string());
  EXPECT_TRUE(std::filesystem::exists(*moved));
  EXPECT_TRUE(SpooledBundles(spool).empty());
  EXPECT_FALSE(SetAsideRefused(path).ok());  // gone from the spool
}

}  // namespace
}  // namespace lockstep
