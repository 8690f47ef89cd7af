// The push client's spool (controller/push/push_client.h): a bundle file is
// input from anyone, so where the spool writes and what a delivered push
// removes never follow the bundle's own fields.
#include <filesystem>
#include <string>

#include "common/files.h"
#include "controller/push/push_client.h"
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

  const PushResult r = PushOrSpool(Unreachable(), spool, bundle);
  ASSERT_EQ(r.kind, PushResult::kUnreachable) << r.message;
  EXPECT_FALSE(std::filesystem::exists(victim)) << r.message;
  const std::string expected = spool + "/" + Sha256Hex(bundle.content()) + ".lsbundle";
  EXPECT_TRUE(std::filesystem::exists(expected)) << r.message;
  EXPECT_EQ(SpooledBundles(spool), std::vector<std::string>{expected});
  EXPECT_NE(r.message.find(expected), std::string::npos) << r.message;
}

}  // namespace
}  // namespace lockstep
