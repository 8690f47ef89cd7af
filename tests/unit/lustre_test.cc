#include "agent/fs/lustre_tools.h"

#include <poll.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "agent/cache_control.h"
#include "agent/fs/lustre_stats.h"
#include "agent/fs/obdfilter.h"
#include "agent/phase_runner.h"
#include "common/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "lustre_fakes.h"
#include "test_util.h"
#include "unit/run_phase.h"

namespace lockstep {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::kGetStripeDir;
using testing::kGetStripeFile;

std::string ReadAll(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

void WriteFile(const std::string& path, const std::string& text, mode_t mode = 0644) {
  fs::create_directories(fs::path(path).parent_path());
  {
    std::ofstream f(path, std::ios::trunc);
    f << text;
  }
  ASSERT_EQ(::chmod(path.c_str(), mode), 0) << path;
}

// A temp dir with fake `lfs` and `lctl` first on PATH. Each fake appends
// "tool<TAB>arg1<TAB>arg2..." to log(); lctl keeps parameters as files in
// state/ (one file per parameter, named like the parameter).
class LustreFakeTools : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string templ = ::testing::TempDir() + "/lustre_test.XXXXXX";
    ASSERT_NE(::mkdtemp(templ.data()), nullptr);
    dir_ = templ;
    const char* path = std::getenv("PATH");
    old_path_ = path ? path : "";
    ASSERT_TRUE(testing::WriteFakeLustreTools(dir_));
    ASSERT_EQ(::setenv("PATH", (dir_ + "/bin:" + old_path_).c_str(), 1), 0);
  }

  void TearDown() override {
    ::setenv("PATH", old_path_.c_str(), 1);
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  std::string log() const { return dir_ + "/argv.log"; }
  std::string state() const { return dir_ + "/state"; }
  std::vector<std::string> LogLines() const {
    return absl::StrSplit(ReadAll(log()), '\n', absl::SkipEmpty());
  }
  std::string Param(const std::string& name) const { return ReadAll(state() + "/" + name); }

  LustreToolsOptions Options() const {
    LustreToolsOptions o;
    o.require_lustre = false;  // the temp dir is not on Lustre
    o.timeout_ms = 5000;
    o.version_files = {};
    return o;
  }

  std::string dir_;
  std::string old_path_;
};

// ---- Parsers ----------------------------------------------------------------

TEST(LustreParse, GetStripeDirectoryDefault) {
  StripeInfo s = ParseGetStripe(kGetStripeDir);
  EXPECT_EQ(s.raw, kGetStripeDir);
  EXPECT_EQ(s.stripe_count, 4);
  EXPECT_EQ(s.stripe_size_bytes, 1048576u);
  EXPECT_EQ(s.stripe_index, -1);
  EXPECT_EQ(s.pool, "flash");
  // Old format: numeric pattern, no pool.
  StripeInfo old = ParseGetStripe("stripe_count:  1 stripe_size:   1048576 pattern:       0 "
                                  "stripe_offset: -1\n");
  EXPECT_EQ(old.stripe_count, 1);
  EXPECT_EQ(old.pool, "");
}

TEST(LustreParse, GetStripeFileAndComposite) {
  StripeInfo s = ParseGetStripe(kGetStripeFile);
  EXPECT_EQ(s.stripe_count, 2);
  EXPECT_EQ(s.stripe_size_bytes, 4194304u);
  EXPECT_EQ(s.stripe_index, 1);
  StripeInfo pfl = ParseGetStripe(
      "/mnt/lustre/pfl\n  lcm_layout_gen:    2\n  lcm_mirror_count:  1\n  lcm_entry_count:   2\n"
      "    lcme_id:             1\n      lmm_stripe_count:  1\n");
  EXPECT_FALSE(pfl.stripe_count.has_value());
  EXPECT_THAT(pfl.raw, HasSubstr("lcm_layout_gen"));
}

TEST(LustreParse, ParamLinesAndVersion) {
  std::vector<ParamValue> v = ParseParamLines(
      "osc.lustre-OST0000-osc-ffff8803.checksums=1\n"
      "osc.lustre-OST0001-osc-ffff8803.checksums=0\n"
      "osc.lustre-OST0000-osc-ffff8803.stats=\n"
      "snapshot_time             1589386915.403463171 secs.nsecs\n"
      "req_waittime              10 samples [usec] 1 2 3 4\n");
  ASSERT_EQ(v.size(), 3u);
  EXPECT_EQ(v[0].name, "osc.lustre-OST0000-osc-ffff8803.checksums");
  EXPECT_EQ(v[0].value, "1");
  EXPECT_EQ(v[1].value, "0");
  EXPECT_EQ(v[2].name, "osc.lustre-OST0000-osc-ffff8803.stats");
  EXPECT_THAT(v[2].value, HasSubstr("\nreq_waittime"));
  EXPECT_EQ(*ParseLustreVersion("2.15.3\n"), "2.15.3");
  EXPECT_EQ(*ParseLustreVersion("lustre: 2.10.8\nkernel: patchless_client\nbuild:  "
                                "2.10.8-RC1\n"),
            "2.10.8");
  EXPECT_FALSE(ParseLustreVersion("").ok());
  EXPECT_FALSE(ParseLustreVersion("kernel: patchless_client\n").ok());
}

// HostFacts and LustreTools read the version files through one function:
// the old procfs file's further lines stay out of the version (HostFacts
// kept them before), an unparsable file falls through to the next.
TEST(LustreParse, VersionFromFilesTakesTheFirstThatParses) {
  testing::TempDir dir;
  std::ofstream(dir / "garbage") << "kernel: patchless_client\n";
  std::ofstream(dir / "procfs") << "lustre: 2.10.8\nkernel: patchless_client\nbuild: 2.10.8-RC1\n";
  absl::StatusOr<std::string> v =
      LustreVersionFromFiles({dir / "missing", dir / "garbage", dir / "procfs"});
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(*v, "2.10.8");
  absl::StatusOr<std::string> none = LustreVersionFromFiles({dir / "missing"});
  EXPECT_EQ(none.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(none.status().message(), HasSubstr(dir / "missing"));
}

TEST(LustreFs, TempDirIsNotLustreAndStripingIsRefused) {
  std::string dir = ::testing::TempDir();
  auto is = IsLustre(dir);
  ASSERT_TRUE(is.ok()) << is.status();
  EXPECT_FALSE(*is);
  auto t = FsTypeOf(dir);
  ASSERT_TRUE(t.ok());
  EXPECT_FALSE(t->name.empty());

  LustreTools tools;  // require_lustre
  absl::Status s = tools.SetStripe(fs::absolute(dir).string(), {.stripe_count = 4});
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr(fs::absolute(dir).string()));
  EXPECT_THAT(std::string(s.message()), HasSubstr(t->name));
  EXPECT_THAT(std::string(s.message()), HasSubstr("not Lustre"));
  EXPECT_EQ(FsTypeOf("/nonexistent/lockstep").status().code(), absl::StatusCode::kNotFound);
}

// ---- lfs / lctl through fakes -------------------------------------------------

TEST_F(LustreFakeTools, SetStripeExactArgv) {
  LustreTools tools(Options());
  ASSERT_TRUE(tools.SetStripe("/mnt/lustre/run1", {.stripe_count = 4,
                                                   .stripe_size_bytes = 1 << 20,
                                                   .stripe_index = 2,
                                                   .pool = "flash"})
                  .ok());
  ASSERT_TRUE(tools.SetStripe("/mnt/lustre/run2", {.stripe_count = -1}).ok());
  EXPECT_THAT(LogLines(),
              ElementsAre("lfs\tsetstripe\t-c\t4\t-S\t1048576\t-i\t2\t-p\tflash\t/mnt/lustre/run1",
                          "lfs\tsetstripe\t-c\t-1\t-S\t0\t/mnt/lustre/run2"));
  // Bad values are refused before lfs runs, naming the value and the dir.
  absl::Status bad = tools.SetStripe("/mnt/lustre/run1", {.stripe_size_bytes = 1000});
  EXPECT_EQ(bad.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(bad.message()), HasSubstr("1000"));
  EXPECT_THAT(std::string(bad.message()), HasSubstr("/mnt/lustre/run1"));
  EXPECT_FALSE(tools.SetStripe("relative/dir", {}).ok());
  EXPECT_FALSE(tools.SetStripe("/mnt/lustre/x", {.pool = "-rf"}).ok());
  EXPECT_EQ(LogLines().size(), 2u);
}

TEST_F(LustreFakeTools, GetStripeDirAndFile) {
  LustreTools tools(Options());
  WriteFile(dir_ + "/data/file", "x");
  auto d = tools.GetStripe(dir_ + "/data");
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->stripe_count, 4);
  EXPECT_EQ(d->pool, "flash");
  auto f = tools.GetStripe(dir_ + "/data/file");
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->stripe_count, 2);
  EXPECT_EQ(f->raw, kGetStripeFile);
  EXPECT_THAT(LogLines(), ElementsAre("lfs\tgetstripe\t-d\t" + dir_ + "/data",
                                      "lfs\tgetstripe\t" + dir_ + "/data/file"));
}

TEST_F(LustreFakeTools, GetAndSetParams) {
  LustreTools tools(Options());
  auto one = tools.GetParam("osc.lustre-OST0000-osc-ffff8803.checksums");
  ASSERT_TRUE(one.ok()) << one.status();
  EXPECT_EQ(*one, "1");
  auto all = tools.GetParams("osc.*.checksums");
  ASSERT_TRUE(all.ok()) << all.status();
  ASSERT_EQ(all->size(), 2u);
  EXPECT_EQ((*all)[0].name, "osc.lustre-OST0000-osc-ffff8803.checksums");
  EXPECT_EQ((*all)[0].value, "1");
  EXPECT_EQ((*all)[1].value, "0");
  ASSERT_TRUE(tools.SetParam("ldlm.namespaces.*.lru_size", "clear").ok());
  EXPECT_EQ(Param("ldlm.namespaces.lustre-OST0000-osc-ffff8803.lru_size"), "clear\n");
  EXPECT_THAT(LogLines(),
              ElementsAre("lctl\tget_param\t-n\tosc.lustre-OST0000-osc-ffff8803.checksums",
                          "lctl\tget_param\tosc.*.checksums",  // '*' reaches lctl unexpanded
                          "lctl\tset_param\tldlm.namespaces.*.lru_size=clear"));
  EXPECT_FALSE(tools.SetParam("osc.*.checksums=1 x", "0").ok());
  EXPECT_FALSE(tools.SetParam("-n", "0").ok());
}

TEST_F(LustreFakeTools, ScopedParamRestoresEachInstance) {
  LustreTools tools(Options());
  {
    auto scope = ScopedParam::Set(tools, "osc.*.checksums", "0");
    ASSERT_TRUE(scope.ok()) << scope.status();
    EXPECT_EQ(Param("osc.lustre-OST0000-osc-ffff8803.checksums"), "0\n");
    EXPECT_EQ(Param("osc.lustre-OST0001-osc-ffff8803.checksums"), "0\n");
    EXPECT_EQ((*scope)->saved().size(), 2u);
  }
  EXPECT_EQ(Param("osc.lustre-OST0000-osc-ffff8803.checksums"), "1\n");
  EXPECT_EQ(Param("osc.lustre-OST0001-osc-ffff8803.checksums"), "0\n");
  EXPECT_THAT(LogLines(),
              ElementsAre("lctl\tget_param\tosc.*.checksums",
                          "lctl\tset_param\tosc.*.checksums=0",
                          "lctl\tset_param\tosc.lustre-OST0000-osc-ffff8803.checksums=1\t"
                          "osc.lustre-OST0001-osc-ffff8803.checksums=0"));

  // Explicit Restore() is idempotent: the destructor does nothing more.
  {
    auto scope = ScopedParam::Set(tools, "osc.lustre-OST0001-osc-ffff8803.checksums", "1");
    ASSERT_TRUE(scope.ok());
    ASSERT_TRUE((*scope)->Restore().ok());
    ASSERT_TRUE((*scope)->Restore().ok());
  }
  EXPECT_EQ(LogLines().size(), 6u);

  // Actions cannot be scoped; unknown names fail before anything is set.
  auto clear = ScopedParam::Set(tools, "ldlm.namespaces.*.lru_size", "clear");
  EXPECT_EQ(clear.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(clear.status().message()), HasSubstr("SetParam"));
  auto missing = ScopedParam::Set(tools, "osc.*.no_such_param", "1");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kInternal);
  EXPECT_THAT(std::string(missing.status().message()), HasSubstr("exit code 2"));
  EXPECT_THAT(std::string(missing.status().message()), HasSubstr("No such file or directory"));
  EXPECT_THAT(std::string(missing.status().message()),
              HasSubstr("lctl get_param osc.*.no_such_param"));
  EXPECT_EQ(LogLines().size(), 7u);  // only the failed get_param
}

TEST_F(LustreFakeTools, VersionFromFileThenLctl) {
  LustreToolsOptions o = Options();
  WriteFile(dir_ + "/proc_version", "lustre: 2.12.9\nkernel: patchless_client\nbuild:  2.12.9\n");
  o.version_files = {dir_ + "/no_such_version", dir_ + "/proc_version"};
  auto v = LustreTools(o).Version();
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(*v, "2.12.9");
  EXPECT_TRUE(LogLines().empty());
  o.version_files = {dir_ + "/no_such_version"};
  v = LustreTools(o).Version();
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(*v, "2.15.3");
  EXPECT_THAT(LogLines(), ElementsAre("lctl\tget_param\t-n\tversion"));
  o.lctl = "lockstep-no-such-lctl";
  v = LustreTools(o).Version();
  EXPECT_EQ(v.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(v.status().message()), HasSubstr("no_such_version"));
  EXPECT_THAT(std::string(v.status().message()), HasSubstr("not on PATH"));
}

TEST_F(LustreFakeTools, NoShellInterpretsArguments) {
  LustreTools tools(Options());
  std::string evil = "; touch " + dir_ + "/pwned";
  std::string evil2 = "$(touch " + dir_ + "/pwned2) `touch " + dir_ + "/pwned3` *";
  ASSERT_TRUE(tools.SetStripe("/mnt/lustre/a" + evil, {}).ok());
  auto out = RunCommand({"lfs", evil, evil2, "it's \"quoted\""}, 5000);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_THAT(LogLines(),
              ElementsAre("lfs\tsetstripe\t-c\t0\t-S\t0\t/mnt/lustre/a" + evil,
                          "lfs\t" + evil + "\t" + evil2 + "\tit's \"quoted\""));
  EXPECT_FALSE(fs::exists(dir_ + "/pwned"));
  EXPECT_FALSE(fs::exists(dir_ + "/pwned2"));
  EXPECT_FALSE(fs::exists(dir_ + "/pwned3"));
}

TEST_F(LustreFakeTools, MissingToolIsNotFound) {
  auto r = RunCommand({"lockstep-no-such-tool", "x"}, 1000);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("lockstep-no-such-tool"));
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("not on PATH"));
  LustreToolsOptions o = Options();
  o.lctl = "lockstep-no-such-lctl";
  EXPECT_EQ(LustreTools(o).GetParam("osc.*.checksums").status().code(),
            absl::StatusCode::kNotFound);
  WriteFile(dir_ + "/bin/notexec", "#!/bin/sh\n", 0644);
  EXPECT_EQ(RunCommand({dir_ + "/bin/notexec"}, 1000).status().code(),
            absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(RunCommand({}, 1000).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(LustreFakeTools, OutputAndExitCodes) {
  WriteFile(dir_ + "/bin/mixed",
            "#!/bin/sh\necho out1; echo err1 >&2; echo out2; echo err2 >&2; exit ${1:-0}\n",
            0755);
  auto ok = RunCommand({"mixed"}, 5000);
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ(ok->stdout_text, "out1\nout2\n");
  EXPECT_EQ(ok->stderr_text, "err1\nerr2\n");
  EXPECT_EQ(ok->exit_code, 0);
  EXPECT_GT(ok->run_duration_ns, 0);
  auto bad = RunCommand({"mixed", "3"}, 5000);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInternal);
  EXPECT_THAT(std::string(bad.status().message()), HasSubstr("mixed 3"));
  EXPECT_THAT(std::string(bad.status().message()), HasSubstr("exit code 3"));
  EXPECT_THAT(std::string(bad.status().message()), HasSubstr("err1"));
  EXPECT_THAT(std::string(bad.status().message()), ::testing::Not(HasSubstr("err2")));
}

TEST_F(LustreFakeTools, HangingToolIsKilledWithinTheTimeout) {
  int64_t start = MonotonicNs();
  auto r = RunCommand({"lctl", "hang"}, 500);
  int64_t took_ms = (MonotonicNs() - start) / 1000000;
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("lctl hang"));
  EXPECT_THAT(std::string(r.status().message()), HasSubstr("500 ms"));
  EXPECT_GE(took_ms, 450);
  EXPECT_LT(took_ms, 2500);
  // The tool's own child (sleep 30) was killed with its process group.
  std::string pid_text = ReadAll(dir_ + "/sleep.pid");
  ASSERT_FALSE(pid_text.empty());
  pid_t sleep_pid = std::stoi(pid_text);
  int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, sleep_pid, 0));
  if (pidfd >= 0) {
    struct pollfd p = {pidfd, POLLIN, 0};
    EXPECT_EQ(::poll(&p, 1, 2000), 1) << "sleep " << sleep_pid << " still alive";
    ::close(pidfd);
  } else {
    EXPECT_EQ(errno, ESRCH);  // already gone
  }
}

// ---- obdfilter-survey (agent/fs/obdfilter.h) ---------------------------------

TEST(LustreParse, DeviceListAndCreatedObject) {
  const std::vector<LustreDevice> d = ParseDeviceList(
      "  0 UP osd-ldiskfs lustre-OST0000-osd lustre-OST0000-osd_UUID 4\n"
      "  1 UP obdfilter lustre-OST0000 lustre-OST0000_UUID 5\n"
      "garbage\n"
      " 12 AT echo_client ec ec_UUID 1\n");
  ASSERT_EQ(d.size(), 3u);
  EXPECT_EQ(d[1].index, 1);
  EXPECT_EQ(d[1].type, "obdfilter");
  EXPECT_EQ(d[1].name, "lustre-OST0000");
  EXPECT_EQ(d[2].index, 12);
  EXPECT_EQ(d[2].status, "AT");
  EXPECT_EQ(*ParseCreatedObject("create: 1 objects\ncreate: #1 is object id 0x2a\n"), "0x2a");
  EXPECT_THAT(ParseCreatedObject("error: create: No space left").status().message(),
              HasSubstr("no \"is object id\""));
}

TEST_F(LustreFakeTools, ObdfilterSurveyOfAnOstAndItsCleanUpOnEveryPath) {
  LustreTools tools(Options());
  auto osts = LocalOsts(tools);
  ASSERT_OK(osts);
  EXPECT_THAT(*osts, ::testing::ElementsAre("lustre-OST0000", "lustre-OST0001"));
  auto b = BenchOst(tools, "lustre-OST0001", 8 << 20, 1 << 20);
  ASSERT_OK(b);
  EXPECT_EQ(b->bytes, 8u << 20);
  EXPECT_GT(b->write_ns, 0);
  EXPECT_GT(b->read_ns, 0);
  // obdfilter-survey's sequence, with 256 pages per block and 8 blocks.
  std::vector<std::string> lctl;
  for (const std::string& l : LogLines()) {
    if (absl::StartsWith(l, "lctl\t") && l != "lctl\tdl") lctl.push_back(l.substr(5));
  }
  EXPECT_THAT(lctl, ::testing::ElementsAre(
                        "attach\techo_client\tlockstep_ec_lustre-OST0001\tlockstep_ec_lustre-OST0001_UUID",
                        "--device\tlockstep_ec_lustre-OST0001\tsetup\tlustre-OST0001",
                        "--device\t3\tcreate\t1",
                        "--threads\t1\t-1\t3\ttest_brw\t8\twx\tq\t256\t1t0x2",
                        "--threads\t1\t-1\t3\ttest_brw\t8\trx\tq\t256\t1t0x2",
                        "--device\t3\tdestroy\t0x2\t1",
                        "--device\tlockstep_ec_lustre-OST0001\tcleanup",
                        "--device\tlockstep_ec_lustre-OST0001\tdetach"));

  // A write that fails: the object and the echo client still go.
  WriteFile(dir_ + "/brw_fail", "");
  const size_t before = LogLines().size();
  auto failed = BenchOst(tools, "lustre-OST0000", 4 << 20, 1 << 20);
  ASSERT_FALSE(failed.ok());
  EXPECT_THAT(failed.status().message(), HasSubstr("obdfilter survey of lustre-OST0000"));
  EXPECT_THAT(failed.status().message(), HasSubstr("test_brw"));
  const std::vector<std::string> after = LogLines();
  std::vector<std::string> tail(after.begin() + static_cast<long>(before), after.end());
  EXPECT_THAT(tail, ::testing::Contains(HasSubstr("destroy\t0x2\t1")));
  EXPECT_THAT(tail, ::testing::Contains(HasSubstr("lockstep_ec_lustre-OST0000\tcleanup")));
  EXPECT_THAT(tail, ::testing::Contains(HasSubstr("lockstep_ec_lustre-OST0000\tdetach")));
  EXPECT_THAT(BenchOst(tools, "x", 1000, 1000).status().message(), HasSubstr("whole 4 KiB pages"));
}

// A backend phase with method = "obdfilter": one task per OST the agent
// serves, all at once, each surveyed through lctl.
TEST_F(LustreFakeTools, BackendObdfilterPhaseSurveysEveryOst) {
  LustreTools tools(Options());
  v1::PhaseSpec s = testing::BackendPhaseSpec("obdfilter", 2);
  RunnerOptions options;
  EXPECT_THAT(PhaseRunner::Prepare(s, dir_, options).status().message(),
              HasSubstr("--allow_lustre"));
  options.lustre = &tools;
  auto runner = PhaseRunner::Prepare(s, dir_, options);
  ASSERT_OK(runner);
  const v1::PhaseResult r = testing::RunNow(runner->get());
  ASSERT_TRUE(r.ok()) << r.error();
  ASSERT_EQ(r.tasks_size(), 2);
  EXPECT_EQ(r.tasks(0).backend().target(), "lustre-OST0000");
  EXPECT_EQ(r.tasks(1).backend().target(), "lustre-OST0001");
  for (const v1::TaskResult& t : r.tasks()) {
    EXPECT_EQ(t.backend().write_bytes(), 4u << 20);
    EXPECT_EQ(t.backend().read_bytes(), 4u << 20);
    EXPECT_GT(t.readback_stop_unix_ns(), t.readback_start_unix_ns());
  }
  s.set_tasks(3);
  s.set_total_tasks(3);
  EXPECT_THAT(PhaseRunner::Prepare(s, dir_, options).status().message(),
              HasSubstr("3 tasks for the 2 targets of host"));
}

// Lustre's telemetry sources (agent/fs/lustre_stats.h): a source under two
// roots is read from the first, a file that does not parse is a warning
// naming it, a root that is not there costs nothing.
TEST(LustreStats, FirstRootWinsAndABadFileIsAWarning) {
  testing::TempDir dir;
  auto write = [&](const std::string& rel, const std::string& text) {
    const std::filesystem::path path = dir.path() + "/" + rel;
    std::filesystem::create_directories(path.parent_path());
    std::ofstream(path) << text;
  };
  write("a/obdfilter/lustre-OST0000/stats",
        "snapshot_time 1671546960.19 secs.usecs\n"
        "write_bytes 7 samples [bytes] 4096 1048576 5251072 0\n");
  write("b/obdfilter/lustre-OST0000/stats", "write_bytes 1 samples [bytes] 1 1 1 0\n");
  write("b/mdt/lustre-MDT0000/md_stats", "open x samples [reqs]\n");
  write("b/llite/lustre-ffff8803/stats", "open 3 samples [reqs]\n");
  FsStatCounters got;
  std::vector<std::string> warnings;
  SampleLustreStats({dir.path() + "/missing", dir.path() + "/a", dir.path() + "/b"}, &got,
                    &warnings);
  ASSERT_EQ(got.size(), 2u);
  const auto& ost = got.at("obdfilter.lustre-OST0000.stats");
  EXPECT_EQ(ost.at("write_bytes").samples, 7u);
  EXPECT_EQ(ost.at("write_bytes").sum, 5251072u);
  EXPECT_EQ(got.at("llite.lustre-ffff8803.stats").at("open").samples, 3u);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_THAT(warnings[0], ::testing::HasSubstr("b/mdt/lustre-MDT0000/md_stats"));
  EXPECT_THAT(warnings[0], ::testing::HasSubstr("sample count is not a number"));
}

// A cache barrier's lustre_lru_clear goes to the file systems of the agent's
// roots (FileSystem::DropClientCaches), once per file system: two roots on
// "Lustre" clear the LRU once; roots on no such file system are a warning
// naming them, or an error when the barrier is required.
TEST_F(LustreFakeTools, CacheBarrierDropsTheClientCachesOfTheRootsFileSystems) {
  LustreTools tools(Options());
  const std::vector<std::string> roots = {dir_, dir_ + "/state"};
  FileSystemContext ctx{.lustre = &tools, .allow_lustre = true, .lustre_any_fs = true};
  v1::CacheRequest request;
  request.set_lustre_lru_clear(true);
  CacheControl control{.allow_drop_caches = false, .roots = &roots, .fs = &ctx};
  absl::StatusOr<v1::CacheReply> reply = DropCaches(request, control);
  ASSERT_TRUE(reply.ok()) << reply.status();
  EXPECT_TRUE(reply->lru_cleared());
  EXPECT_EQ(reply->warning(), "");
  std::vector<std::string> clears;
  for (const std::string& line : LogLines()) {
    if (absl::StrContains(line, "lru_size=clear")) clears.push_back(line);
  }
  EXPECT_EQ(clears.size(), 1u);

  ctx.lustre_any_fs = false;  // the temp dir is what statfs says: not Lustre
  reply = DropCaches(request, control);
  ASSERT_TRUE(reply.ok()) << reply.status();
  EXPECT_FALSE(reply->lru_cleared());
  EXPECT_THAT(reply->warning(), HasSubstr("no root of this agent (" + dir_));
  request.set_required(true);
  reply = DropCaches(request, control);
  EXPECT_EQ(reply.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(reply.status().message(), HasSubstr("nothing was cleared"));

  ctx.lustre_any_fs = true;
  ctx.allow_lustre = false;  // Lustre, but the agent may not run its tools
  reply = DropCaches(request, control);
  EXPECT_EQ(reply.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(reply.status().message(), HasSubstr("--allow_lustre"));
}

}  // namespace
}  // namespace lockstep
