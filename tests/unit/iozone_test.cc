// `lockstep iozone`: IOzone's throughput-mode command line into a plan, and
// IOzone's arithmetic and text from a run's records.
#include "absl/strings/str_split.h"
#include "controller/iozone/iozone_cli.h"
#include "controller/iozone/iozone_output.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test_util.h"

namespace lockstep {
namespace {

using ::testing::HasSubstr;

FileReader Files() {
  return [](const std::string& path) -> absl::StatusOr<std::string> {
    if (path == "clients") {
      return std::string("# IOzone's client file\nn1 /scratch/io /usr/bin/iozone\n"
                         "n2:7071 /scratch/io /usr/bin/iozone\n\nn1 /scratch/io /usr/bin/iozone\n"
                         "n2:7071 /scratch/io /usr/bin/iozone\n");
    }
    if (path == "uneven") {
      return std::string("n1 /scratch/io iozone\nn1 /scratch/io iozone\nn2 /scratch/io iozone\n");
    }
    if (path == "short") return std::string("n1 /scratch/io iozone\nn2 /scratch/io\n");
    if (path == "dirs") return std::string("n1 /scratch/a iozone\nn2 /scratch/b iozone\n");
    return absl::NotFoundError(path + ": no such file");
  };
}

absl::StatusOr<CliCommand> Iozone(const std::string& line, IozoneCommandInfo* info = nullptr) {
  return ParseIozoneCommandLine(absl::StrSplit(line, ' ', absl::SkipEmpty()), Files(), info);
}

// The error of a bad command line, or "OK".
std::string Error(const std::string& line) { return testing::ErrorOrOk(Iozone(line), line); }

TEST(IozoneCli, TranslatesTheThroughputLine) {
  IozoneCommandInfo info;
  auto c = Iozone("-i 0 -i 1 -i 2 -r 1m -s 8g -t 4 -c -e -I -F /s/f1 /s/f2 /s/f3 /s/f4", &info);
  ASSERT_OK(c);
  const Plan& plan = c->plan;
  ASSERT_EQ(plan.phases.size(), 6u);
  const char* names[] = {"initial-write", "rewrite", "read", "re-read", "random-read",
                         "random-write"};
  for (size_t i = 0; i < 6; ++i) {
    const PhasePlan& p = plan.phases[i];
    EXPECT_EQ(p.name, names[i]);
    EXPECT_EQ(p.dir, "/s");
    // -F: IOzone's names, one per child, as given (issue 39 item 4).
    EXPECT_EQ(p.file_names, (std::vector<std::string>{"f1", "f2", "f3", "f4"}));
    EXPECT_TRUE(p.file_per_process);
    EXPECT_EQ(p.transfer_bytes, 1u << 20);
    EXPECT_EQ(p.block_bytes, uint64_t{8} << 30);
    EXPECT_TRUE(p.direct);
    EXPECT_FALSE(p.keep);  // no -w: IOzone unlinks its files
    EXPECT_EQ(p.fsync, p.kind == v1::WRITE) << p.name;  // -e
    EXPECT_EQ(p.random_offsets, i >= 4) << p.name;
    EXPECT_EQ(p.tasks_per_agent, std::vector<uint32_t>{4});  // one local agent, as IOzone
  }
  EXPECT_EQ(plan.phases[2].kind, v1::READ);
  EXPECT_EQ(plan.phases[5].kind, v1::WRITE);
  EXPECT_THAT(plan.text, HasSubstr("file_names = [\"f1\", \"f2\", \"f3\", \"f4\"]\n"));
  // Without -F: iozone.DUMMY.<child> in the working directory.
  auto bare = Iozone("-i 0 -r 64k -s 1m -t 2");
  ASSERT_OK(bare);
  EXPECT_EQ(bare->plan.phases[0].file_name, "iozone.DUMMY");
  EXPECT_TRUE(bare->plan.phases[0].file_names.empty());
  EXPECT_EQ(c->controller.local_agents, 1);
  EXPECT_EQ(info.command_line,
            "iozone -i 0 -i 1 -i 2 -r 1m -s 8g -t 4 -c -e -I -F /s/f1 /s/f2 /s/f3 /s/f4");
  EXPECT_EQ(info.children, 4u);
  EXPECT_EQ(info.file_kb, 8u << 20);
  EXPECT_EQ(info.record_kb, 1024u);
  EXPECT_TRUE(info.include_close);
  EXPECT_TRUE(info.stonewall);
  EXPECT_EQ(info.splash, (std::vector<std::string>{"\tInclude close in write timing\n",
                                                    "\tInclude fsync in write timing\n",
                                                    "\tO_DIRECT feature enabled\n"}));
  ASSERT_EQ(info.tests.size(), 6u);
  EXPECT_EQ(info.tests[3].first, IozoneTest::kReread);
  EXPECT_EQ(info.tests[3].second, "re-read");
}

TEST(IozoneCli, SizesInIozoneUnits) {
  auto c = Iozone("-i0 -r64 -s1024 -t2 -w -x -T");  // bare numbers are kB, glued values
  ASSERT_OK(c);
  EXPECT_EQ(c->plan.phases[0].transfer_bytes, 64u * 1024);
  EXPECT_EQ(c->plan.phases[0].block_bytes, 1024u * 1024);
  EXPECT_TRUE(c->plan.phases[0].keep);
  EXPECT_EQ(c->plan.phases.size(), 2u);  // -i 0 only
  IozoneCommandInfo info;
  ASSERT_OK(Iozone("-i 0 -r 64k -s 1g -t 2 -x -T", &info));
  EXPECT_FALSE(info.stonewall);
  EXPECT_TRUE(info.threads);
  // -s not a multiple of -r: whole records, as IOzone's numrecs64, and a note.
  auto odd = Iozone("-i 0 -r 64k -s 100k -t 1");
  ASSERT_OK(odd);
  EXPECT_EQ(odd->plan.phases[0].block_bytes, 64u * 1024);
  EXPECT_THAT(odd->notes.back(), HasSubstr("each child moves 1 records"));
}

TEST(IozoneCli, AggregateIsTotalSize) {
  IozoneCommandInfo info;
  auto c = Iozone("-i 0 -r 1m -s 2g -t 4 -+k", &info);
  ASSERT_OK(c);
  EXPECT_EQ(c->plan.phases[0].total_bytes, uint64_t{2} << 30);
  EXPECT_EQ(info.file_kb, 512u * 1024);  // per child
  EXPECT_THAT(c->plan.text, HasSubstr("total_size = 2147483648"));
}

TEST(IozoneCli, ClientFileGivesAgentsAndDirectory) {
  auto c = Iozone("-i 0 -r 64k -s 1m -t 4 -+m clients");
  ASSERT_OK(c);
  // Each host once, the port 7070 unless given; two children each.
  EXPECT_EQ(c->controller.agents, (std::vector<std::string>{"n1:7070", "n2:7071"}));
  EXPECT_EQ(c->plan.phases[0].tasks_per_agent, std::vector<uint32_t>{2});
  EXPECT_EQ(c->plan.phases[0].dir, "/scratch/io");
  // -t 2 uses the first two lines: one child on each host.
  auto two = Iozone("-i 0 -r 64k -s 1m -t 2 -+m clients");
  ASSERT_OK(two);
  EXPECT_EQ(two->plan.phases[0].tasks_per_agent, std::vector<uint32_t>{1});
}

TEST(IozoneCli, ClientFileErrorsNameFileAndLine) {
  EXPECT_THAT(Error("-i 0 -t 2 -+m short"), HasSubstr("-+m short:2: expected \"host workdir "
                                                       "path_to_iozone\""));
  EXPECT_THAT(Error("-i 0 -t 2 -+m dirs"),
              HasSubstr("-+m dirs:2: workdir /scratch/b differs from /scratch/a (line 1)"));
  EXPECT_THAT(Error("-i 0 -t 3 -+m uneven"),
              HasSubstr("n2:7070 has 1 children and n1:7070 2; lockstep runs as many children"));
  EXPECT_THAT(Error("-i 0 -t 5 -+m clients"), HasSubstr("lists 4 clients for -t 5"));
  EXPECT_THAT(Error("-i 0 -t 2 -+m nofile"), HasSubstr("-+m nofile: nofile: no such file"));
  EXPECT_THAT(Error("-i 0 -t 2 -+m clients --local 2"), HasSubstr("drop --agents"));
}

TEST(IozoneCli, RefusesWhatItDoesNotRunByName) {
  EXPECT_EQ(Error("-i 0 -t 2 -j 4"),
            "iozone: option -j is not supported by lockstep iozone; strided access is not "
            "implemented");
  EXPECT_THAT(Error("-i 0 -t 2 -a"), HasSubstr("option -a is not supported by lockstep iozone"));
  EXPECT_THAT(Error("-i 0 -t 2 -ce -R"), HasSubstr("option -R is not supported"));
  EXPECT_THAT(Error("-i 3 -t 2"), HasSubstr("option -i 3 is not supported"));
  EXPECT_THAT(Error("-i 0 -t 2 -+u"), HasSubstr("option -+u is not supported"));
  EXPECT_THAT(Error("-i 0 -t 2 -%"), HasSubstr("option -% is not supported"));
  EXPECT_THAT(Error("-i 0 -r 64k"), HasSubstr("iozone: -t: lockstep iozone runs IOzone's "
                                              "throughput mode"));
  EXPECT_THAT(Error("-t 2"), HasSubstr("iozone: -i: give the tests"));
  EXPECT_THAT(Error("-i 0 -F a b -t 2"), HasSubstr("give -t N before -F"));
  EXPECT_THAT(Error("-i 0 -t 3 -F a b"), HasSubstr("-F: 2 file names for -t 3"));
  // An option after too few names is not taken for one (before: "1: unexpected argument").
  EXPECT_THAT(Error("-i 0 -t 2 -F a --local 1"), HasSubstr("-F: 1 file names for -t 2"));
  EXPECT_THAT(Error("-i 0 -t 2 -F /a/f /b/f"), HasSubstr("in different directories"));
  EXPECT_THAT(Error("-i 0 -t 2 -F /a/f /a/f"), HasSubstr("-F: /a/f is given twice"));
  EXPECT_THAT(Error("-i 0 -t 1 -F /a/"), HasSubstr("names no file"));
  EXPECT_THAT(Error("-i 0 -t 2 -r 32m"), HasSubstr("at most 16384 kB"));
  EXPECT_THAT(Error("-i 0 -t 2 -r 1x"), HasSubstr("-r 1x: expected a size"));
  EXPECT_THAT(Error("-i 0 -t 2 -r 64k -s 32k"), HasSubstr("smaller than the record"));
  // The shared translators' errors carry the prefix too.
  EXPECT_THAT(Error("-i 0 -t 3 --local 2"), HasSubstr("iozone: -t 3: 3 tasks cannot be spread"));
  EXPECT_THAT(Error("-i 0 -t 2 --bogus"), HasSubstr("iozone: "));
}

// Real IOzone 3.4 throughput output (an NFS client, 12 initial writers;
// linux-nfs list, 2021), tabs as IOzone prints them.
constexpr char kRealIozoneBlock[] =
    "\n"
    "\tChildren see throughput for 12 initial writers \t= 4732581.09 kB/sec\n"
    "\tParent sees throughput for 12 initial writers \t= 4646810.21 kB/sec\n"
    "\tMin throughput per process \t\t\t=  387764.34 kB/sec \n"
    "\tMax throughput per process \t\t\t=  399655.47 kB/sec\n"
    "\tAvg throughput per process \t\t\t=  394381.76 kB/sec\n"
    "\tMin xfer \t\t\t\t\t= 1017344.00 kB\n";

TEST(IozoneOutput, ArithmeticAndTextMatchRealOutput) {
  // Twelve children whose throughputs sum to IOzone's "Children see", with
  // its min and max; one stopped at 1017344 kB (Min xfer), the others whole
  // 1 GiB files.
  std::vector<IozoneChild> children;
  auto add = [&](double kb, double kbps) { children.push_back({kb, kb / kbps}); };
  add(1017344, 387764.34);
  add(1048576, 399655.47);
  for (int i = 0; i < 10; ++i) add(1048576, 394516.128);
  double total_kb = 0;
  for (const IozoneChild& c : children) total_kb += c.actual_kb;
  const IozoneFigures f = ReduceIozone(children, total_kb / 4646810.21);
  EXPECT_EQ(f.children, 12u);
  EXPECT_NEAR(f.avg_kbps, 4732581.09 / 12, 1e-6);  // Avg = Children see / children
  EXPECT_EQ(FormatIozoneTest(IozoneTest::kInitialWrite, f, /*threads=*/false), kRealIozoneBlock);
}

TEST(IozoneOutput, EachTestHasIozonesNounAndSpacing) {
  IozoneFigures f;
  f.children = 4;
  f.children_see_kbps = 18427.04;
  EXPECT_THAT(FormatIozoneTest(IozoneTest::kRead, f, false),
              HasSubstr("\tChildren see throughput for  4 readers \t\t=   18427.04 kB/sec\n"));
  EXPECT_THAT(FormatIozoneTest(IozoneTest::kReread, f, false),
              HasSubstr("\tChildren see throughput for 4 re-readers \t=   18427.04 kB/sec\n"));
  EXPECT_THAT(FormatIozoneTest(IozoneTest::kRandomRead, f, false),
              HasSubstr("\tParent sees throughput for 4 random readers \t="));
  EXPECT_THAT(FormatIozoneTest(IozoneTest::kRandomWrite, f, false),
              HasSubstr("\tChildren see throughput for 4 random writers \t="));
  EXPECT_THAT(FormatIozoneTest(IozoneTest::kRewrite, f, true),
              HasSubstr("\tChildren see throughput for  4 rewriters \t="));
  EXPECT_THAT(FormatIozoneTest(IozoneTest::kRewrite, f, true),
              HasSubstr("\tAvg throughput per thread \t\t\t="));
}

v1::TaskResult Task(int64_t start_ns, int64_t stop_ns, uint64_t bytes, uint64_t at_first) {
  v1::TaskResult t;
  t.set_rdwr_start_unix_ns(start_ns);
  t.set_rdwr_stop_unix_ns(stop_ns);
  t.set_close_stop_unix_ns(stop_ns + 1000);
  t.set_bytes(bytes);
  t.set_bytes_at_first_done(at_first);
  return t;
}

TEST(IozoneOutput, StonewallCountsUntilTheAgentsFirstEnd) {
  // Two children of one agent: the first ends at 1 s with 1 MiB, the other
  // had 512 KiB then and ends at 2 s with 1 MiB.
  v1::PhaseRecord p;
  v1::AgentPhaseRecord* a = p.add_agents();
  *a->add_tasks() = Task(0, 1'000'000'000, 1 << 20, 1 << 20);
  *a->add_tasks() = Task(0, 2'000'000'000, 1 << 20, 512 << 10);
  double parent = 0;
  std::vector<IozoneChild> c = IozoneChildrenOf(p, /*stonewall=*/true, false, &parent);
  ASSERT_EQ(c.size(), 2u);
  EXPECT_DOUBLE_EQ(c[0].actual_kb, 1024);
  EXPECT_DOUBLE_EQ(c[0].seconds, 1.0);
  EXPECT_DOUBLE_EQ(c[1].actual_kb, 512);
  EXPECT_DOUBLE_EQ(c[1].seconds, 1.000001);  // to the first child's close
  EXPECT_DOUBLE_EQ(parent, 1.000001);
  IozoneFigures f = ReduceIozone(c, parent);
  EXPECT_DOUBLE_EQ(f.min_xfer_kb, 512);
  // -x: every child's whole file and time.
  c = IozoneChildrenOf(p, /*stonewall=*/false, false, &parent);
  EXPECT_DOUBLE_EQ(c[1].actual_kb, 1024);
  EXPECT_DOUBLE_EQ(c[1].seconds, 2.0);
  EXPECT_DOUBLE_EQ(parent, 2.0);
  // -c: a child's time ends at its close.
  c = IozoneChildrenOf(p, /*stonewall=*/false, /*include_close=*/true, &parent);
  EXPECT_DOUBLE_EQ(c[0].seconds, 1.000001);
}

}  // namespace
}  // namespace lockstep
