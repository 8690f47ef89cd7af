// IOR's own option reader as lockstep ior reproduces it (hpc/ior
// src/option.c, src/parse_options.c), and every option of IOR 4.1's list
// either honoured or refused by name.
#include "controller/ior/ior_options.h"

#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "controller/ior/ior_cli.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test_util.h"

namespace lockstep {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

absl::StatusOr<CliCommand> Ior(const std::string& line) {
  return ParseIorCommandLine(absl::StrSplit(line, ' ', absl::SkipEmpty()),
                             [](const std::string& p) -> absl::StatusOr<std::string> {
                               return absl::NotFoundError(p);
                             });
}

std::string IorError(const std::string& line) {
  auto c = Ior(line);
  return c.ok() ? "OK" : std::string(c.status().message());
}

std::string Notes(const CliCommand& c) { return absl::StrJoin(c.notes, "\n"); }

// The words as IOR's reader splits them: "name=value" or "name+N"/"name=N".
std::string Tokens(const std::string& line) {
  std::vector<std::string> args = absl::StrSplit(line, ' ', absl::SkipEmpty());
  std::vector<std::string> notes, out;
  for (size_t i = 0; i < args.size(); ++i) {
    auto t = ReadIorWord(args, &i, &notes);
    if (!t.ok()) return std::string(t.status().message());
    for (const IorToken& tok : *t) {
      if (tok.spec->arg == IorArgKind::kValue) {
        out.push_back(tok.name + "=" + tok.value);
      } else {
        out.push_back(tok.flag_value < 0 ? tok.name : tok.name + "=" + std::to_string(tok.flag_value));
      }
    }
  }
  return absl::StrJoin(out, " ");
}

TEST(IorOptions, StringToBytesIsSscanfs) {
  EXPECT_EQ(IorStringToBytes("4m"), 4 << 20);
  EXPECT_EQ(IorStringToBytes(" 60g "), int64_t{60} << 30);
  EXPECT_EQ(IorStringToBytes("8 K"), 8 << 10);
  EXPECT_EQ(IorStringToBytes("0.1"), 0);    // "%lld" stops at '.', '.' is no unit
  EXPECT_EQ(IorStringToBytes("1.5m"), 1);
  EXPECT_EQ(IorStringToBytes("4mb"), 4 << 20);
  EXPECT_EQ(IorStringToBytes("47008"), 47008);
  EXPECT_EQ(IorStringToBytes("-3"), -3);
  EXPECT_EQ(IorStringToBytes("abc"), -1);   // rc == 0
  EXPECT_EQ(IorStringToBytes(""), 0);       // rc == EOF
  EXPECT_EQ(IorAtoi(" 12k"), 12);
  EXPECT_EQ(IorAtoi("-4"), -4);
  EXPECT_EQ(IorAtoi("x"), 0);
}

TEST(IorOptions, WordsAreReadAsIorReadsThem) {
  EXPECT_EQ(Tokens("-z-k"), "-z -k");
  EXPECT_EQ(Tokens("-wr"), "-w -r");
  EXPECT_EQ(Tokens("-vv"), "-v -v");
  EXPECT_EQ(Tokens("-b4m"), "-b=4m -m=4");      // IOR reads the m of the value too
  EXPECT_EQ(Tokens("-t1k"), "-t=1k -k=1");
  EXPECT_EQ(Tokens("-b 4m"), "-b=4m");
  EXPECT_EQ(Tokens("-wb 4m"), "-w -b=4m");       // not the first letter: the next word
  EXPECT_EQ(Tokens("-b=4m"), "-b=4m");
  EXPECT_EQ(Tokens("-F=0"), "-F=0");
  EXPECT_EQ(Tokens("-k=-3"), "-k=0");            // a flag's value is at least 0
  EXPECT_EQ(Tokens("--posix.odirect"), "--posix.odirect");
  EXPECT_EQ(Tokens("--posix.odirect=1"), "--posix.odirect=1");
  EXPECT_EQ(Tokens("-O summaryFormat=JSON"), "-O=summaryFormat=JSON");
  EXPECT_EQ(Tokens("-wq"), "-w");                // no -q in IOR 4.1: skipped
  EXPECT_THAT(Tokens("-q"), HasSubstr("-q: not an option of IOR 4.1"));
  EXPECT_THAT(Tokens("-B"), HasSubstr("-B: not an option of IOR 4.1"));
  EXPECT_THAT(Tokens("-b"), HasSubstr("\"Error, argument missing for option b\""));
  EXPECT_THAT(Tokens("-b="), HasSubstr("\"Error, argument missing for option b\""));
  EXPECT_THAT(Tokens("-h"), HasSubstr("IOR prints its help"));
  EXPECT_THAT(Tokens("-"), HasSubstr("not an option of IOR 4.1"));
  EXPECT_THAT(Tokens("file"), HasSubstr("\"Error invalid argument\""));
}

TEST(IorOptions, DirectivesSplitAsParseLine) {
  auto kv = SplitIorDirectives("summaryFormat=JSON, stoneWallingWearOut = 1#comment,x=y");
  ASSERT_OK(kv);
  ASSERT_EQ(kv->size(), 2u);
  EXPECT_EQ((*kv)[0].key, "summaryFormat");
  EXPECT_EQ((*kv)[1].key, "stoneWallingWearOut");
  EXPECT_EQ((*kv)[1].value, "1");
  EXPECT_THAT(SplitIorDirectives("a=").status().message(), HasSubstr("Invalid option substring"));
  EXPECT_THAT(SplitIorDirectives("abc").status().message(), HasSubstr("Syntax error in configuration"));
  EXPECT_NE(FindIorDirective("KEEPFILE"), nullptr);  // strcasecmp
}

TEST(IorOptions, CommandLinesRunAsIorRunsThem) {
  auto zk = Ior("-w -b 4k -t 1k -z-k");
  ASSERT_OK(zk);
  EXPECT_TRUE(zk->plan.phases[0].random_offsets);
  EXPECT_TRUE(zk->plan.phases[0].keep);
  // -t1k: IOR keeps the files (checked against IOR 4.1.0+dev: the file stays).
  auto t1k = Ior("-w -b4k -t1k");
  ASSERT_OK(t1k);
  EXPECT_TRUE(t1k->plan.phases[0].keep);
  EXPECT_THAT(Notes(*t1k), HasSubstr("IOR also reads the 'k' after the value as -k"));
  auto d = Ior("-w -d 0.1");
  ASSERT_OK(d);
  EXPECT_EQ(d->plan.phases[0].delay_seconds, 0u);
  EXPECT_THAT(Notes(*d), HasSubstr("-d 0.1: read as 0"));
  EXPECT_EQ(Ior("-w -O keepFile=1")->plan.phases[0].keep, true);
  EXPECT_EQ(Ior("-w -k -O keepFile=0")->plan.phases[0].keep, false);
  EXPECT_EQ(Ior("-w -O blockSize=2m -O transferSize=1m")->plan.phases[0].block_bytes, 2u << 20);
  EXPECT_EQ(Ior("-O repetitions=3")->plan.repetitions, 3u);
  EXPECT_TRUE(Ior("-w -t 4k -b 4k -O useO_DIRECT=1")->plan.phases[0].direct);
  EXPECT_EQ(Ior("-w -E=0")->plan.phases.size(), 1u);  // a refused flag off is IOR's default
  auto reps0 = Ior("-i 0");
  ASSERT_OK(reps0);
  EXPECT_EQ(reps0->plan.repetitions, 1u);
  EXPECT_THAT(Notes(*reps0), HasSubstr("WARNING: too few test repetitions. Using value of 1."));
  // What IOR refuses, in its words.
  EXPECT_THAT(IorError("-o/tmp/testfile"), HasSubstr("as -t's value as well; separate the value"));
  EXPECT_THAT(IorError("-w -w"), HasSubstr("\"test must write, read, or check read/write file\""));
  EXPECT_THAT(IorError("-r -R"), HasSubstr("use -G"));
  EXPECT_THAT(IorError("-w -r -z -C -b 2m -t 1m"), HasSubstr("random offset and constant reorder"));
  EXPECT_THAT(IorError("-w -r -F -z -R -G 1 -b 2m -t 1m"), HasSubstr("requires to set the random seed"));
  EXPECT_THAT(IorError("-b 1m -t 2m"), HasSubstr("\"block size must be a multiple of transfer size\""));
  EXPECT_THAT(IorError("-t 12"), HasSubstr("\"transfer size must be a multiple of access size\""));
  EXPECT_THAT(IorError("-t -8"), HasSubstr("\"transfer size must be non-negative integer\""));
  // -z -z: IOR 4.1's random blocks for a read; its write dies of SIGFPE,
  // the one case refused, by name and with the reason.
  EXPECT_THAT(IorError("-z -z -b 2m -t 1m"), HasSubstr("-z -z -w: refused: IOR 4.1 draws"));
  EXPECT_THAT(IorError("-w -r -z -z -b 2m -t 1m"), HasSubstr("dies (SIGFPE, exit 136"));
  auto blocks = Ior("-r -k -e -i1 -m -t 100k -b 200k -s 10 -z -z");
  ASSERT_OK(blocks);
  ASSERT_EQ(blocks->plan.phases.size(), 1u);
  EXPECT_TRUE(blocks->plan.phases[0].random_blocks);
  EXPECT_FALSE(blocks->plan.phases[0].random_offsets);
  EXPECT_THAT(blocks->plan.text, HasSubstr("random_blocks = true\n"));
  EXPECT_TRUE(Ior("-w -r -z -b 2m -t 1m")->plan.phases[1].random_offsets);
  EXPECT_THAT(IorError("-vv"), HasSubstr("-v: given 2 times"));
  EXPECT_THAT(IorError("-i 3000000000"), HasSubstr("overflow"));
  EXPECT_THAT(IorError("-O a,b=1"), HasSubstr("Invalid option substring"));
}

// Every option of IOR 4.1's list (createGlobalOptions and the POSIX
// backend's), as IOR's help lists them, copied here rather than taken from
// the table under test: each is honoured or refused by name with why, never
// "not an option".
struct IorListed {
  const char* line;  // a command line using it
  const char* name;  // the option as a refusal names it
};
constexpr IorListed kIorList[] = {
    {"-a POSIX", "-a"}, {"-A 3", "-A"}, {"-b 2m", "-b"}, {"-c", "-c"}, {"-C -w -r", "-C"},
    {"-d 1", "-d"}, {"-D 5", "-D"}, {"-e", "-e"}, {"-E", "-E"}, {"-f script", "-f"},
    {"-F", "-F"}, {"-g", "-g"}, {"-G 3", "-G"}, {"-i 2", "-i"}, {"-j 4", "-j"}, {"-k", "-k"},
    {"-K", "-K"}, {"-l offset", "-l"}, {"-m", "-m"}, {"-M 1g", "-M"}, {"-N 2", "-N"},
    {"-o f", "-o"}, {"-O summaryFormat=CSV", "-O"}, {"-Q 2 -C", "-Q"}, {"-r", "-r"},
    {"-R -G 1", "-R"}, {"-s 2", "-s"}, {"-t 64k", "-t"}, {"-T 1", "-T"}, {"-u", "-u"},
    {"-v", "-v"}, {"-w", "-w"}, {"-W -w", "-W"}, {"-x", "-x"}, {"-X 5 -Z", "-X"},
    {"-y", "-y"}, {"-Y", "-Y"}, {"-z -b 2m -t 1m", "-z"}, {"-Z", "-Z"},
    {"--collective", "--collective"}, {"--dataPacketType=i", "--dataPacketType"},
    {"--randomPrefill=1m", "--randomPrefill"}, {"--random-offset-seed=3", "--random-offset-seed"},
    {"--warningAsErrors", "--warningAsErrors"}, {"--dryRun", "--dryRun"},
    {"--posix.odirect -t 4k -b 4k", "--posix.odirect"}, {"--posix.rangelocks", "--posix.rangelocks"},
    {"--posix.lustre.stripecount=4", "--posix.lustre.stripecount"},
    {"--posix.lustre.stripesize=1m", "--posix.lustre.stripesize"},
    {"--posix.lustre.startost=1", "--posix.lustre.startost"},
    {"--posix.lustre.ignorelocks", "--posix.lustre.ignorelocks"},
    {"--posix.lustre.pool=p", "--posix.lustre.pool"},
};

TEST(IorOptions, EveryOptionOfIorIsHonouredOrRefusedByName) {
  size_t names = 0;  // a letter and a long name are two ways to give one option
  for (const IorOptionSpec& s : IorOptionTable()) names += (s.letter != 0) + (s.long_name != nullptr);
  EXPECT_EQ(std::size(kIorList), names);
  for (const IorListed& o : kIorList) {
    const std::string e = IorError(o.line);
    if (e == "OK") continue;
    EXPECT_THAT(e, HasSubstr(std::string(o.name) + ": refused: ")) << o.line;
    EXPECT_THAT(e, Not(HasSubstr("not an option"))) << o.line;
  }
  // Every -O key of IOR's DecodeDirective: honoured, or refused with why.
  for (const IorDirective& d : IorDirectiveTable()) {
    const std::string e = IorError(std::string("-O ") + d.key + "=1");
    EXPECT_THAT(e, Not(HasSubstr("Unrecognized parameter"))) << d.key;
    if (d.how == 'x') {
      EXPECT_THAT(e, HasSubstr("refused: ")) << d.key;
    }
  }
  // Letters IOR 4.1 does not have (IOR 3's -B -H -I -J -L -n -p -P -q -S -U -V).
  for (char c : std::string("BHIJLnpPqSUV")) {
    EXPECT_THAT(IorError(std::string("-") + c), HasSubstr("not an option of IOR 4.1")) << c;
  }
}

}  // namespace
}  // namespace lockstep
