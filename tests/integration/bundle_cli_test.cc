// End to end (issue 40): a real run (local agent processes), its bundle
// written by `lockstep export --bundle` with a site certificate from
// `lockstep certs`, checked by `lockstep verify` and refused once a byte is
// changed; and `lockstep compare --sites` over the history db, refusing a
// run of another workload unless --force.
#include <filesystem>
#include <fstream>

#include "common/files.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "integration/process_util.h"
#include "integration/test_cluster.h"
#include "test_util.h"

namespace lockstep::testing {
namespace {

using ::testing::HasSubstr;

std::string WritePlan(const TestCluster& tmp, const std::string& name,
                      const std::string& transfer) {
  const std::string path = tmp / (name + ".toml");
  std::filesystem::create_directories(tmp / ("data-" + name));
  std::ofstream(path) << "[run]\nname = \"tiny\"\nrepetitions = 2\n"
                      << "[[phase]]\nname = \"w\"\nkind = \"write\"\ndir = \""
                      << (tmp / ("data-" + name)) << "\"\nfile_per_process = true\n"
                      << "transfer_size = \"" << transfer << "\"\nblock_size = \"256k\"\n";
  return path;
}

TEST(BundleCli, ExportVerifyTamperAndCompareSites) {
  TestCluster tmp;
  const std::string certs = tmp / "certs";
  CommandResult made = RunLockstep({"certs", "init", "--dir", certs, "--agent", "hlrs",
                                    "--agent", "lrz"});
  ASSERT_EQ(made.exit_code, 0) << made.out << made.err;

  RunResult a = tmp.Lockstep({"run", "--local", "1", "--out", tmp.results_dir(),
                              WritePlan(tmp, "a", "64k")});
  ASSERT_EQ(a.exit_code, 0) << a.Output();
  const std::string bundle = tmp / "a.lsbundle";
  CommandResult ex = RunLockstep({"export", "--bundle", a.run_dir, bundle, "--key",
                                  certs + "/agent-hlrs.key", "--cert",
                                  certs + "/agent-hlrs.pem"});
  ASSERT_EQ(ex.exit_code, 0) << ex.out << ex.err;
  EXPECT_THAT(ex.out, HasSubstr("of site hlrs"));

  CommandResult ok = RunLockstep({"verify", bundle, "--ca", certs + "/ca.pem"});
  EXPECT_EQ(ok.exit_code, 0) << ok.out << ok.err;
  EXPECT_THAT(ok.out, HasSubstr(": ok: run "));
  EXPECT_THAT(ok.out, HasSubstr("issued by the given CA"));

  // One byte of the content changed: exit 6, the hash check named.
  std::string bytes = *ReadFileToString(bundle);
  bytes[bytes.size() / 2] ^= 0x20;
  const std::string bad = tmp / "bad.lsbundle";
  ASSERT_TRUE(WriteFileAtomically(bad, bytes).ok());
  CommandResult refused = RunLockstep({"verify", bad, "--ca", certs + "/ca.pem"});
  EXPECT_EQ(refused.exit_code, 6) << refused.out << refused.err;
  EXPECT_THAT(refused.err, HasSubstr(bad + ": hash check failed"));
  // A --ca that is no certificate is a bad command line, not a failed chain.
  const std::string not_ca = tmp / "not-a-ca.pem";
  ASSERT_TRUE(WriteFileAtomically(not_ca, "garbage\n").ok());
  CommandResult bad_ca = RunLockstep({"verify", bundle, "--ca", not_ca});
  EXPECT_EQ(bad_ca.exit_code, 2) << bad_ca.out << bad_ca.err;
  EXPECT_THAT(bad_ca.err, HasSubstr("--ca " + not_ca));

  // A site that is not the certificate's is refused before anything is written.
  CommandResult other = RunLockstep({"export", "--bundle", a.run_dir, tmp / "x.lsbundle",
                                     "--key", certs + "/agent-hlrs.key", "--cert",
                                     certs + "/agent-hlrs.pem", "--site", "lrz"});
  EXPECT_EQ(other.exit_code, 2) << other.out << other.err;
  EXPECT_THAT(other.err, HasSubstr("names site \"hlrs\" but the bundle is for site \"lrz\""));
  EXPECT_FALSE(std::filesystem::exists(tmp / "x.lsbundle"));

  // compare --sites: the same workload at two sites, then another workload.
  RunResult b = tmp.Lockstep({"run", "--local", "1", "--out", tmp.results_dir(),
                              WritePlan(tmp, "b", "64k")});
  ASSERT_EQ(b.exit_code, 0) << b.Output();
  RunResult c = tmp.Lockstep({"run", "--local", "1", "--out", tmp.results_dir(),
                              WritePlan(tmp, "c", "128k")});
  ASSERT_EQ(c.exit_code, 0) << c.Output();
  const std::string db = tmp / "history.db";
  for (const auto& [run, site] : {std::pair{&a, "hlrs"}, std::pair{&b, "lrz"},
                                  std::pair{&c, "jsc"}}) {
    CommandResult imp = RunLockstep({"import", "--db", db, "--site", site,
                                     run->run_dir + "/run.json"});
    ASSERT_EQ(imp.exit_code, 0) << imp.out << imp.err;
  }
  CommandResult cmp = RunLockstep({"compare", "--db", db, "--sites", "hlrs,lrz", "--plan",
                                   "tiny"});
  ASSERT_EQ(cmp.exit_code, 0) << cmp.out << cmp.err;
  EXPECT_THAT(cmp.out, HasSubstr("per client"));
  EXPECT_THAT(cmp.out, HasSubstr("hlrs "));
  EXPECT_THAT(cmp.out, HasSubstr("differs:"));
  CommandResult no = RunLockstep({"compare", "--db", db, "--sites", "hlrs,jsc", "--plan",
                                  "tiny"});
  EXPECT_EQ(no.exit_code, 2) << no.out << no.err;
  EXPECT_THAT(no.err, HasSubstr("not comparable"));
  EXPECT_THAT(no.err, HasSubstr("transfer_bytes=131072"));
  CommandResult forced = RunLockstep({"compare", "--db", db, "--sites", "hlrs,jsc", "--plan",
                                      "tiny", "--force"});
  EXPECT_EQ(forced.exit_code, 0) << forced.out << forced.err;
  EXPECT_THAT(forced.out, HasSubstr("workloads differ"));
}

// `lockstep push` without a service: what it does with the run when the
// service cannot be reached, and the command lines it refuses before
// trying (before, a missing --ca or port 99999 spooled the run and exited 3,
// and a spool that could not be written still counted the run as spooled).
TEST(BundleCli, PushWithoutAServiceSpoolsOnceAndRefusesBadSettings) {
  TestCluster tmp;
  const std::string certs = tmp / "certs";
  ASSERT_EQ(RunLockstep({"certs", "init", "--dir", certs, "--agent", "hlrs"}).exit_code, 0);
  const std::string creds = tmp / "creds";
  std::filesystem::create_directories(creds);
  std::filesystem::copy_file(certs + "/agent-hlrs.key", creds + "/site-hlrs.key");
  std::filesystem::copy_file(certs + "/agent-hlrs.pem", creds + "/site-hlrs.pem");
  RunResult a = tmp.Lockstep({"run", "--local", "1", "--out", tmp.results_dir(),
                              WritePlan(tmp, "a", "64k")});
  ASSERT_EQ(a.exit_code, 0) << a.Output();
  const std::string spool = tmp / "spool";
  auto push = [&](const std::string& to, const std::string& ca, const std::string& spool_dir) {
    return RunLockstep({"push", a.run_dir, "--to", to, "--credentials", creds, "--ca", ca,
                        "--spool", spool_dir});
  };
  const std::string ca = certs + "/ca.pem";
  CommandResult no_ca = push("https://127.0.0.1:1", tmp / "nosuch.pem", spool);
  EXPECT_EQ(no_ca.exit_code, 2) << no_ca.out << no_ca.err;
  EXPECT_THAT(no_ca.err, HasSubstr("--ca: "));
  for (const char* url : {"https://127.0.0.1:99999", "https://127.0.0.1:0", "https://[::1"}) {
    CommandResult bad = push(url, ca, spool);
    EXPECT_EQ(bad.exit_code, 2) << url << "\n" << bad.out << bad.err;
    EXPECT_THAT(bad.err, HasSubstr("service URL")) << url;
  }
  EXPECT_FALSE(std::filesystem::exists(spool));

  const std::string file = tmp / "not-a-dir";
  std::ofstream(file) << "x";
  CommandResult lost = push("https://127.0.0.1:1", ca, file);
  EXPECT_EQ(lost.exit_code, 1) << lost.out << lost.err;
  EXPECT_THAT(lost.out, HasSubstr("0 spooled, 0 refused, 1 neither delivered nor spooled"));

  CommandResult spooled = push("https://[::1]:1", ca, spool);
  EXPECT_EQ(spooled.exit_code, 3) << spooled.out << spooled.err;
  EXPECT_THAT(spooled.out, HasSubstr("1 spooled"));
  // Again: the spooled copy is tried first, and the run named not twice.
  CommandResult again = push("https://127.0.0.1:1", ca, spool);
  EXPECT_EQ(again.exit_code, 3) << again.out << again.err;
  EXPECT_THAT(again.out, HasSubstr("sent from the spool above"));
  EXPECT_THAT(again.out, HasSubstr("pushed: 0 stored, 0 already stored, 1 spooled, 0 refused"));
}

}  // namespace
}  // namespace lockstep::testing
