// Bounded input against the real `lockstep` binary (issue 39 items 7-9):
// a huge plan, /dev/zero as a plan or a front end's file, a size that
// overflows 64 bits, and SIGTERM while a big plan is being handled. Each
// refusal names the key or file and the limit; nothing waits on the clock
// but the deadlines that turn a hang into a failure.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "integration/process_util.h"
#include "test_util.h"

namespace lockstep::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr std::chrono::seconds kHangGuard(60);

void WriteFile(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

std::string ReadFileText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// utime + stime of a /proc/PID/stat line, in clock ticks.
long CpuTicks(const std::string& stat) {
  std::istringstream fields(stat.substr(stat.rfind(')') + 2));
  std::string f;
  long ticks = 0;
  for (int i = 0; i < 13 && fields >> f; ++i) {
    if (i == 11 || i == 12) ticks += std::stol(f);
  }
  return ticks;
}

CommandResult Lockstep(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {BinDir() + "/lockstep"};
  argv.insert(argv.end(), args.begin(), args.end());
  return RunCommand(argv, kHangGuard);
}

std::string Phase(const std::string& dir) {
  return "[[phase]]\nname = \"w\"\nkind = \"write\"\ndir = \"" + dir + "\"\n";
}

TEST(BoundedInput, A20MegabyteNamePlanIsRefusedByTheFileBound) {
  TempDir tmp;
  WriteFile(tmp / "huge.toml", "[run]\nname = \"" + std::string(20 << 20, 'x') + "\"\n" +
                                   Phase(tmp.path()));
  CommandResult r = Lockstep({"run", "--dry-run", "--local", "1", tmp / "huge.toml"});
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("huge.toml: more than 16 MiB, the most a plan file may be"));
  EXPECT_LT(r.err.size(), 2000u);
}

TEST(BoundedInput, AOneMegabyteNameIsRefusedByTheStringBoundWithItsLine) {
  TempDir tmp;
  WriteFile(tmp / "name.toml", "[run]\nname = \"" + std::string(1 << 20, 'x') + "\"\n" +
                                   Phase(tmp.path()));
  CommandResult r = Lockstep({"run", "--dry-run", "--local", "1", tmp / "name.toml"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("name.toml:2:8: run name: a string of 1048576 bytes"));
  EXPECT_THAT(r.err, HasSubstr("4 KiB"));
  EXPECT_LT(r.err.size(), 2000u);
}

TEST(BoundedInput, DevZeroAsThePlanIsRefusedNotReadUntilMemoryRunsOut) {
  CommandResult r = Lockstep({"run", "--dry-run", "--local", "1", "/dev/zero"});
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("/dev/zero: more than 16 MiB, the most a plan file may be"));
}

TEST(BoundedInput, DevZeroAsDlioConfigAndIo500IniIsRefused) {
  CommandResult dlio = Lockstep({"dlio", "/dev/zero", "--local", "1"});
  EXPECT_EQ(dlio.exit_code, 2) << dlio.err;
  EXPECT_THAT(dlio.err, HasSubstr("/dev/zero: more than 16 MiB, the most a DLIO config may be"));
  CommandResult io500 = Lockstep({"io500", "/dev/zero", "--local", "1"});
  EXPECT_EQ(io500.exit_code, 2) << io500.err;
  EXPECT_THAT(io500.err, HasSubstr("the most an IO500 ini file may be"));
}

// A byte that is not UTF-8 in a file a plan is made from: refused naming
// the file, line and column. Before, an IO500 ini's value surfaced as
// "plan.toml:10:17: malformed TOML", and a hostfile's host as a message with
// the raw byte (its run.json error field did not serialise).
TEST(BoundedInput, AByteThatIsNotUtf8IsRefusedWhereItStands) {
  TempDir tmp;
  WriteFile(tmp / "a.ini", "[global]\ndatadir = " + tmp / "io\xff" + "\n");
  CommandResult io500 = Lockstep({"io500", tmp / "a.ini", "--local", "1"});
  EXPECT_EQ(io500.exit_code, 2) << io500.err;
  const std::string column = std::to_string(tmp.path().size() + 14);  // "datadir = " DIR "/io"
  EXPECT_THAT(io500.err, HasSubstr(tmp / "a.ini:2:" + column + ": byte 0xff is not UTF-8"));
  WriteFile(tmp / "hosts", "127.0.0.1:7001\nh\xe9:7000\n");
  WriteFile(tmp / "p.toml", Phase(tmp.path()));
  CommandResult run = Lockstep({"run", "--hostfile", tmp / "hosts", "--insecure", tmp / "p.toml"});
  EXPECT_EQ(run.exit_code, 2) << run.err;
  EXPECT_THAT(run.err, HasSubstr(tmp / "hosts:2:2: byte 0xe9 is not UTF-8; a hostfile is read"));
  WriteFile(tmp / "d.yaml", "model: m\xc3\n");
  CommandResult dlio = Lockstep({"dlio", tmp / "d.yaml", "--local", "1"});
  EXPECT_EQ(dlio.exit_code, 2) << dlio.err;
  EXPECT_THAT(dlio.err, HasSubstr(tmp / "d.yaml:1:9: byte 0xc3 is not UTF-8"));
}

// The case: under ulimit -v 2000000 the controller died of an
// uncaught std::bad_alloc (exit 134). Now the input is refused first, and an
// allocation that fails anyway ends with code 10 and a message, never 134.
TEST(BoundedInput, UnderUlimitVTheControllerNeverAbortsOnAHugePlan) {
  TempDir tmp;
  WriteFile(tmp / "huge.toml", "[run]\nname = \"" + std::string(20 << 20, 'x') + "\"\n");
  for (const std::string& plan : {std::string("/dev/zero"), tmp / "huge.toml"}) {
    CommandResult r = RunCommand({"/bin/sh", "-c",
                                  "ulimit -v 2000000 && exec \"$0\" run --dry-run --local 1 \"$1\"",
                                  BinDir() + "/lockstep", plan},
                                 kHangGuard);
    EXPECT_TRUE(r.exit_code == 2 || r.exit_code == 10) << plan << ": " << r.exit_code << " " << r.err;
    EXPECT_THAT(r.err, Not(HasSubstr("terminate called")));
  }
}

TEST(BoundedInput, SizesThatOverflow64BitsAreRefusedByDryRunNotShownAsZero) {
  TempDir tmp;
  WriteFile(tmp / "big.toml", Phase(tmp.path()) +
                                  "tasks_per_agent = 4096\ntransfer_size = \"1g\"\n"
                                  "block_size = \"8p\"\nsegments = 4294967295\n");
  CommandResult r = Lockstep({"run", "--dry-run", "--local", "2", tmp / "big.toml"});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("key 'segments'"));
  EXPECT_THAT(r.err, HasSubstr("overflows 64 bits"));
  EXPECT_THAT(r.out, Not(HasSubstr("0 bytes/agent")));
  // Within 64 bits for one agent, beyond them for 16: the dry run refuses it
  // as the run would.
  WriteFile(tmp / "agents.toml", Phase(tmp.path()) + "block_size = \"1p\"\nsegments = 1024\n");
  CommandResult many = Lockstep({"run", "--dry-run", "--agents",
                                 "127.0.0.1:1,127.0.0.1:2,127.0.0.1:3,127.0.0.1:4,127.0.0.1:5,"
                                 "127.0.0.1:6,127.0.0.1:7,127.0.0.1:8,127.0.0.1:9,127.0.0.1:10,"
                                 "127.0.0.1:11,127.0.0.1:12,127.0.0.1:13,127.0.0.1:14,"
                                 "127.0.0.1:15,127.0.0.1:16",
                                 tmp / "agents.toml"});
  EXPECT_EQ(many.exit_code, 2) << many.out << many.err;
  EXPECT_THAT(many.err, HasSubstr("16 client agent(s)"));
}

TEST(BoundedInput, DotDotFileNameIsRefusedAtThePlanCheckNotAtPrepare) {
  TempDir tmp;
  WriteFile(tmp / "dd.toml", Phase(tmp.path()) + "file_name = \"..\"\n");
  CommandResult r = Lockstep({"run", "--local", "1", "--out", tmp / "out", tmp / "dd.toml"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("dd.toml:5:13: [[phase]] 'w' key 'file_name': \"..\" names a "
                               "directory, not a file"));
  EXPECT_THAT(r.err, Not(HasSubstr("cannot remove")));
}

// Starts `lockstep ARGS` with its output in `out_path`; the pid.
pid_t Start(const std::vector<std::string>& args, const std::string& out_path) {
  std::vector<std::string> argv = {BinDir() + "/lockstep"};
  argv.insert(argv.end(), args.begin(), args.end());
  const pid_t pid = ::fork();
  if (pid == 0) {
    FILE* out = std::fopen(out_path.c_str(), "w");
    ::dup2(fileno(out), 1);
    ::dup2(fileno(out), 2);
    std::vector<char*> c;
    for (auto& a : argv) c.push_back(a.data());
    c.push_back(nullptr);
    ::execv(c[0], c.data());
    ::_exit(127);
  }
  return pid;
}

// A dry run of a million phase runs (100,000 sweep values x 10 phases):
// SIGTERM while it works ends it within the deadline.
TEST(BoundedInput, SigtermDuringABigDryRunActsPromptly) {
  TempDir tmp;
  std::string values;
  for (int i = 0; i < 100000; ++i) values += (i ? "," : "") + std::to_string(i % 5 + 1);
  std::string text;
  for (int p = 0; p < 10; ++p) {
    text += "[[phase]]\nname = \"p" + std::to_string(p) + "\"\nkind = \"write\"\ndir = \"" +
            tmp.path() + "\"\nsegments = [" + values + "]\n";
  }
  WriteFile(tmp / "sweep.toml", text);
  const pid_t pid = Start({"run", "--dry-run", "--local", "1", tmp / "sweep.toml"}, tmp / "out");
  ASSERT_GT(pid, 0);
  // Working: it has used CPU (the dry run, not the exec).
  const auto deadline = std::chrono::steady_clock::now() + kHangGuard;
  while (std::chrono::steady_clock::now() < deadline) {
    auto stat = ReadFileText("/proc/" + std::to_string(pid) + "/stat");
    if (stat.empty() || CpuTicks(stat) >= 20) break;
    ::usleep(10000);
  }
  if (Exited(pid)) GTEST_SKIP() << "the dry run ended before the signal could be sent";
  ASSERT_EQ(::kill(pid, SIGTERM), 0);
  int status = 0;
  ASSERT_TRUE(WaitForExit(pid, &status, std::chrono::seconds(10)))
      << "still running 10 s after SIGTERM";
  EXPECT_TRUE(WIFSIGNALED(status) || WEXITSTATUS(status) == 130) << status;
}

// A run of 2,000 phases on a local agent: once its first phase reports,
// SIGTERM stops it (exit 130) within the deadline (it took 31 s at 10,000).
TEST(BoundedInput, SigtermDuringARunOfThousandsOfPhasesActsPromptly) {
  TempDir tmp;
  std::string text;
  for (int p = 0; p < 2000; ++p) {
    text += "[[phase]]\nname = \"p" + std::to_string(p) + "\"\nkind = \"write\"\ndir = \"" +
            tmp.path() + "\"\nblock_size = \"4k\"\ntransfer_size = \"4k\"\n";
  }
  WriteFile(tmp / "many.toml", text);
  const pid_t pid =
      Start({"run", "--local", "1", "--out", tmp / "results", tmp / "many.toml"}, tmp / "out");
  ASSERT_GT(pid, 0);
  // A phase has reported: its row of the results table ("write  ...").
  const auto reported = [&] { return ReadFileText(tmp / "out").find("\nwrite ") != std::string::npos; };
  const auto deadline = std::chrono::steady_clock::now() + kHangGuard;
  while (std::chrono::steady_clock::now() < deadline && !Exited(pid) && !reported()) {
    ::usleep(20000);
  }
  ASSERT_FALSE(Exited(pid)) << ReadFileText(tmp / "out");
  ASSERT_TRUE(reported())
      << "no phase reported within " << kHangGuard.count() << " s:\n"
      << ReadFileText(tmp / "out");
  ASSERT_EQ(::kill(pid, SIGTERM), 0);
  int status = 0;
  ASSERT_TRUE(WaitForExit(pid, &status, std::chrono::seconds(10)))
      << "still running 10 s after SIGTERM";
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 130) << status;
}

}  // namespace
}  // namespace lockstep::testing
