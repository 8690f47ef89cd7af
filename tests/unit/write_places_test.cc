// Where a plan on local agents may write (controller/plan/write_places.h).
#include "controller/plan/write_places.h"

#include <filesystem>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test_util.h"

namespace lockstep {
namespace {

using ::testing::HasSubstr;

TEST(WritePlaces, SystemDirectories) {
  for (const char* d : {"/", "/etc", "/etc/x", "/usr/local", "/boot", "/bin", "/sbin", "/lib",
                        "/lib64/x", "/libx32", "/proc/1", "/sys", "/dev", "/dev/sda", "/var/lib",
                        "/var/lib/x", "/root", "/root/work", "/library"}) {  // /lib*
    EXPECT_TRUE(IsSystemDirectory(d)) << d;
  }
  for (const char* d : {"/tmp", "/dev/shm", "/dev/shm/x", "/var/tmp", "/scratch", "/home/u",
                        "/etcetera", "/rootfs"}) {
    EXPECT_FALSE(IsSystemDirectory(d)) << d;
  }
}

Plan PlanWithDir(const std::string& dir) {
  auto plan = ParsePlan("[run]\nname = \"p\"\n\n[[phase]]\nname = \"write\"\nkind = \"write\"\n"
                        "dir = \"" + dir + "\"\ntransfer_size = \"1m\"\nblock_size = \"1m\"\n",
                        "p.toml");
  EXPECT_TRUE(plan.ok()) << plan.status();
  return plan.ok() ? *plan : Plan();
}

TEST(WritePlaces, PlanDirsMustBeTheRunnersPlaces) {
  testing::TempDir tmp;
  std::filesystem::create_directories(tmp / "cwd");
  std::filesystem::create_directory_symlink("/etc", tmp / "cwd/etc-link");
  LocalWritePlaces places;
  places.cwd = tmp / "cwd";
  auto check = [&](const std::string& dir) {
    absl::Status s = CheckLocalWritePlaces(PlanWithDir(dir), places);
    return s.ok() ? std::string("OK") : std::string(s.message());
  };
  EXPECT_EQ(check(tmp / "cwd/out"), "OK");
  EXPECT_EQ(check("/tmp/lockstep-w"), "OK");
  EXPECT_EQ(check("/dev/shm/w"), "OK");
  EXPECT_EQ(check("relative/dir"), "OK");  // below the local agents' own root
  // The plan line, the directory, and the fix.
  EXPECT_THAT(check("/etc"), HasSubstr("p.toml:7: phase 'write': dir \"/etc\" is a system directory"));
  EXPECT_THAT(check("/etc"), HasSubstr("--root /etc"));
  EXPECT_THAT(check("/tmp/../etc/x"), HasSubstr("(it resolves to /etc/x) is a system directory"));
  EXPECT_THAT(check(tmp / "cwd/etc-link/sub"), HasSubstr("resolves to /etc/sub"));
  EXPECT_THAT(check("/var/lib/missing/deeper"), HasSubstr("system directory"));
  EXPECT_THAT(check("/dev/sda"), HasSubstr("system directory"));
  EXPECT_THAT(check("/"), HasSubstr("system directory"));
  EXPECT_THAT(check("/scratch/x"), HasSubstr("is outside the places local agents write without "
                                             "being told"));
  EXPECT_THAT(check("/scratch/x"), HasSubstr("--root /scratch/x"));
  // Named with --root: allowed, system directory or not.
  places.roots = {"/scratch", "/var/lib/lockstep"};
  EXPECT_EQ(check("/scratch/x"), "OK");
  EXPECT_EQ(check("/var/lib/lockstep/run"), "OK");
  EXPECT_THAT(check("/var/lib/other"), HasSubstr("system directory"));
  // --local_root: relative dirs go below it, and it is one of the places.
  places.local_root = "/etc";
  EXPECT_THAT(check("relative"), HasSubstr("\"/etc/relative\" is a system directory"));
  places.local_root = tmp / "lr";
  EXPECT_EQ(check(tmp / "lr/x"), "OK");
  // On the command line (lockstep ior -o): meant, unless a system directory.
  LocalWritePlaces cli;
  cli.cwd = tmp / "cwd";
  cli.named_on_command_line = true;
  EXPECT_OK(CheckLocalWritePlace("/scratch/x", cli, "-o's directory"));
  EXPECT_THAT(CheckLocalWritePlace("/etc", cli, "-o's directory").message(),
              HasSubstr("-o's directory \"/etc\" is a system directory"));
}

// What every front end that names its directories on the command line
// starts from (ior, mdtest, iozone, io500, dlio): one helper, not four copies.
TEST(WritePlaces, CommandLinePlaces) {
  const std::string cwd = std::filesystem::current_path().string();
  const LocalWritePlaces places = CommandLineWritePlaces({"/scratch/a", "/scratch/b"});
  EXPECT_EQ(places.cwd, cwd);
  EXPECT_EQ(places.roots, (std::vector<std::string>{"/scratch/a", "/scratch/b"}));
  EXPECT_TRUE(places.named_on_command_line);
  EXPECT_EQ(places.local_root, "");
  // A directory named below a --root is allowed; a system directory is not.
  EXPECT_TRUE(CheckLocalWritePlace("/scratch/a/run", places, "-o's directory").ok());
  EXPECT_FALSE(CheckLocalWritePlace("/etc/x", places, "-o's directory").ok());
}

}  // namespace
}  // namespace lockstep
