// The one command-line parser (common/flags.h): every value kind, the bool
// and `--` forms, errors that name the flag, value and help, unknown flags
// with a suggestion, and help and man rendering from the same table.
#include "common/flags.h"

#include <array>

#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test_util.h"

namespace lockstep {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

constexpr std::array<FlagSpec, 9> kFlags = {{
    {.name = "insecure", .kind = FlagKind::kBool, .help = "plaintext"},
    {.name = "history", .kind = FlagKind::kBool, .default_value = "true", .help = "record it"},
    {.name = "offset", .kind = FlagKind::kInt, .value_name = "N", .default_value = "-3",
     .help = "an offset", .min = -10, .max = 10},
    {.name = "local", .kind = FlagKind::kUint, .value_name = "N", .default_value = "0",
     .help = "local agents", .min = 0, .max = 256},
    {.name = "out", .value_name = "DIR", .default_value = "./results", .help = "where"},
    {.name = "tag", .kind = FlagKind::kList, .value_name = "TAG", .help = "tags."},
    {.name = "tls_allow", .kind = FlagKind::kList, .value_name = "NAME",
     .default_value = "controller", .help = "allowed."},
    {.name = "agent", .kind = FlagKind::kList, .value_name = "NAME[,SAN...]",
     .help = "one agent.", .separator = '\0'},
    {.name = "block", .kind = FlagKind::kSize, .value_name = "SIZE", .default_value = "1m",
     .help = "block size", .min = 1},
}};

constexpr std::array<FlagSpec, 1> kHiddenFlags = {{
    {.name = "secret", .kind = FlagKind::kBool, .help = "not shown", .hidden = true},
}};

constexpr CommandSpec kCmd = {
    .program = "tool",
    .name = "run",
    .synopsis = "[flags] PLAN.toml\n--other-form",
    .summary = "run a plan",
    .description = "Runs a plan.\n.TH is not a request.\n\n  TABLE  kept as is",
    .flags = kFlags,
    .notes = "exit status: 0 pass.",
};

constexpr CommandSpec kHidden = {.program = "tool", .name = "hid", .flags = kHiddenFlags};

std::vector<std::string> Words(const std::string& line) {
  return absl::StrSplit(line, ' ', absl::SkipEmpty());
}

absl::StatusOr<ParsedFlags> Parse(const std::string& line) { return ParseFlags(Words(line), kCmd); }

// The error message of a bad line, or "OK".
std::string Error(const std::string& line) { return testing::ErrorOrOk(Parse(line), line); }

TEST(Flags, DefaultsWhenNothingIsGiven) {
  auto f = Parse("");
  ASSERT_OK(f);
  EXPECT_FALSE(f->help());
  EXPECT_FALSE(f->GetBool("insecure"));
  EXPECT_TRUE(f->GetBool("history"));
  EXPECT_EQ(f->GetInt("offset"), -3);
  EXPECT_EQ(f->GetUint("local"), 0u);
  EXPECT_EQ(f->GetString("out"), "./results");
  EXPECT_THAT(f->GetList("tag"), IsEmpty());
  EXPECT_THAT(f->GetList("tls_allow"), ElementsAre("controller"));
  EXPECT_EQ(f->GetUint("block"), 1u << 20);
  EXPECT_FALSE(f->Has("out"));
  EXPECT_FALSE(f->Has("history"));
  EXPECT_THAT(f->positional(), IsEmpty());
}

TEST(Flags, EveryKindInBothForms) {
  auto f = Parse("--offset -7 --local=12 --out /tmp/x --block=4MiB --tag a,b PLAN.toml");
  ASSERT_OK(f);
  EXPECT_EQ(f->GetInt("offset"), -7);
  EXPECT_EQ(f->GetUint("local"), 12u);
  EXPECT_EQ(f->GetString("out"), "/tmp/x");
  EXPECT_EQ(f->GetUint("block"), 4u << 20);
  EXPECT_THAT(f->GetList("tag"), ElementsAre("a", "b"));
  EXPECT_THAT(f->positional(), ElementsAre("PLAN.toml"));
  EXPECT_TRUE(f->Has("out"));
  EXPECT_TRUE(f->Has("block"));

  f = Parse("--offset=4 --local 0 --out= --block 8k");
  ASSERT_OK(f);
  EXPECT_EQ(f->GetInt("offset"), 4);
  EXPECT_EQ(f->GetString("out"), "");
  EXPECT_EQ(f->GetUint("block"), 8192u);
}

TEST(Flags, BoolForms) {
  auto f = Parse("--insecure --history=false");
  ASSERT_OK(f);
  EXPECT_TRUE(f->GetBool("insecure"));
  EXPECT_FALSE(f->GetBool("history"));
  EXPECT_TRUE(f->Has("history"));
  for (const char* yes : {"true", "1", "yes", "TRUE"}) {
    f = Parse(std::string("--insecure=") + yes);
    ASSERT_OK(f);
    EXPECT_TRUE(f->GetBool("insecure")) << yes;
  }
  for (const char* no : {"false", "0", "no", "False"}) {
    f = Parse(std::string("--history=") + no);
    ASSERT_OK(f);
    EXPECT_FALSE(f->GetBool("history")) << no;
  }
  // A bool never takes the next word: it is positional.
  f = Parse("--insecure false");
  ASSERT_OK(f);
  EXPECT_TRUE(f->GetBool("insecure"));
  EXPECT_THAT(f->positional(), ElementsAre("false"));
  EXPECT_EQ(Error("--insecure=maybe"),
            "--insecure=maybe: expected true or false (--insecure alone means true) (see tool "
            "run --help)");
}

TEST(Flags, RepeatedFlagsKeepTheLastValueListsCollect) {
  auto f = Parse("--out a --out b --tag x --tag y,z --agent n1,10.0.0.1 --agent n2");
  ASSERT_OK(f);
  EXPECT_EQ(f->GetString("out"), "b");
  EXPECT_THAT(f->GetList("tag"), ElementsAre("x", "y", "z"));
  // No separator: each occurrence is one item, commas and all.
  EXPECT_THAT(f->GetList("agent"), ElementsAre("n1,10.0.0.1", "n2"));
  // The first occurrence of a list replaces its default.
  f = Parse("--tls_allow ops --tls_allow=ci");
  ASSERT_OK(f);
  EXPECT_THAT(f->GetList("tls_allow"), ElementsAre("ops", "ci"));
}

TEST(Flags, DoubleDashEndsTheFlagsAndDashIsPositional) {
  auto f = Parse("a --insecure -- --out -b -");
  ASSERT_OK(f);
  EXPECT_TRUE(f->GetBool("insecure"));
  EXPECT_EQ(f->GetString("out"), "./results");
  EXPECT_THAT(f->positional(), ElementsAre("a", "--out", "-b", "-"));
  f = Parse("- x");
  ASSERT_OK(f);
  EXPECT_THAT(f->positional(), ElementsAre("-", "x"));
}

// A word that is not UTF-8 would fail far from its cause (a protobuf
// string, a plan text): refused first, naming it and the word before it.
TEST(Flags, AWordThatIsNotUtf8IsRefusedNamingItAndTheWordBefore) {
  const CommandSpec spec = {.program = "lockstep", .name = "run", .flags = kFlags};
  struct Case {
    std::vector<std::string> args;
    std::string says;
  };
  for (const Case& c : std::vector<Case>{
           {{"--out", "/tmp/r\xff"}, "argument \"/tmp/r\\xff\" (after --out)"},
           {{"--tag=n\xc3"}, "the value of --tag (\"n\\xc3\")"},
           {{"plan\xe9.toml"}, "argument \"plan\\xe9.toml\""},
           {{"-o", "f\xff"}, "argument \"f\\xff\" (after -o)"},
           {{"--n\xffpe"}, "argument \"--n\\xffpe\""}}) {
    auto f = ParseFlags(c.args, spec);
    EXPECT_EQ(f.status().code(), absl::StatusCode::kInvalidArgument) << c.says;
    EXPECT_THAT(f.status().message(), HasSubstr(c.says + " is not UTF-8"));
    EXPECT_THAT(ArgumentsAreUtf8(c.args).message(), HasSubstr(c.says));
  }
  EXPECT_OK(ArgumentsAreUtf8({"--out", "/tmp/caf\xc3\xa9", "--tag=\xe2\x9c\x93"}));
}

TEST(Flags, HelpWinsOverEverythingBeforeDoubleDash) {
  for (const char* line : {"--help", "-h", "--nope --help", "--local 999 -h PLAN"}) {
    auto f = Parse(line);
    ASSERT_OK(f);
    EXPECT_TRUE(f->help()) << line;
  }
  auto f = Parse("-- --help");
  ASSERT_OK(f);
  EXPECT_FALSE(f->help());
  EXPECT_THAT(f->positional(), ElementsAre("--help"));
}

TEST(Flags, ErrorsNameTheFlagTheValueAndTheHelp) {
  EXPECT_EQ(Error("--local x"), "--local x: expected a whole number (see tool run --help)");
  EXPECT_EQ(Error("--local -1"), "--local -1: expected a whole number (see tool run --help)");
  EXPECT_EQ(Error("--local 300"), "--local 300: out of range; use 0 to 256 (see tool run --help)");
  EXPECT_EQ(Error("--offset 11"), "--offset 11: out of range; use -10 to 10 (see tool run --help)");
  EXPECT_EQ(Error("--offset -11"),
            "--offset -11: out of range; use -10 to 10 (see tool run --help)");
  EXPECT_EQ(Error("--offset 1.5"), "--offset 1.5: expected a whole number (see tool run --help)");
  EXPECT_THAT(Error("--block 1x"), HasSubstr("--block 1x: "));
  EXPECT_THAT(Error("--block 1x"), HasSubstr("(see tool run --help)"));
  EXPECT_EQ(Error("--block 0"), "--block 0: out of range; use 1 to 18446744073709551615 bytes "
                                "(see tool run --help)");
  EXPECT_EQ(Error("--out"), "--out: needs a value (see tool run --help)");
  // The next word is a flag: most likely a forgotten value.
  EXPECT_EQ(Error("--out --insecure"),
            "--out: needs a value, but the next word is the flag --insecure; write "
            "--out=--insecure if that is the value (see tool run --help)");
  auto f = Parse("--out=--insecure");
  ASSERT_OK(f);
  EXPECT_EQ(f->GetString("out"), "--insecure");
}

TEST(Flags, UnknownFlagsSuggestTheClosest) {
  EXPECT_EQ(Error("--lcoal 3"), "--lcoal: unknown flag; did you mean --local? (see tool run --help)");
  EXPECT_EQ(Error("--tls-allow=x"),
            "--tls-allow: unknown flag; did you mean --tls_allow? (see tool run --help)");
  EXPECT_EQ(Error("-local 3"),
            "-local: unknown flag (flags start with \"--\"); did you mean --local? (see tool run "
            "--help)");
  // Nothing close: every flag is listed.
  EXPECT_EQ(Error("--frobnicate"),
            "--frobnicate: unknown flag; known: --insecure, --history, --offset, --local, --out, "
            "--tag, --tls_allow, --agent, --block (see tool run --help)");
  // Hidden flags are accepted but never suggested.
  auto h = ParseFlags({"--secret"}, kHidden);
  ASSERT_OK(h);
  EXPECT_TRUE(h->GetBool("secret"));
  auto e = ParseFlags({"--secre"}, kHidden);
  EXPECT_EQ(e.status().message(),
            "--secre: unknown flag; this command takes no flags (see tool hid --help)");
}

TEST(Flags, ParseOneFlagLeavesOtherWordsToTheCaller) {
  std::vector<std::string> args = {"-b", "4m", "--local", "3", "--posix.odirect", "--out=d"};
  size_t i = 0;
  auto v = ParseOneFlag(args, &i, kCmd);
  ASSERT_OK(v);
  EXPECT_FALSE(v->has_value());
  EXPECT_EQ(i, 0u);
  i = 2;
  v = ParseOneFlag(args, &i, kCmd);
  ASSERT_OK(v);
  ASSERT_TRUE(v->has_value());
  EXPECT_EQ((*v)->spec->name, "local");
  EXPECT_EQ((*v)->u, 3u);
  EXPECT_EQ(i, 3u);  // past the value
  i = 4;
  v = ParseOneFlag(args, &i, kCmd);
  ASSERT_OK(v);
  EXPECT_FALSE(v->has_value());
  i = 5;
  v = ParseOneFlag(args, &i, kCmd);
  ASSERT_OK(v);
  EXPECT_EQ((*v)->text, "d");
  constexpr absl::string_view kExtra[] = {"--posix.odirect"};
  EXPECT_EQ(UnknownFlagError("--posix.odirekt", kCmd, kExtra).message(),
            "--posix.odirekt: unknown flag; did you mean --posix.odirect? (see tool run --help)");
}

TEST(Flags, ClosestName) {
  const std::vector<std::string> names = {"run", "report", "history", "gate"};
  EXPECT_EQ(ClosestName("reprot", names), "report");
  EXPECT_EQ(ClosestName("hist", names), "history");
  EXPECT_EQ(ClosestName("benchmark", names), "");
}

TEST(FlagsHelp, ListsEveryVisibleFlagWithItsDefault) {
  const std::string help = FormatCommandHelp(kCmd);
  EXPECT_THAT(help, HasSubstr("usage: tool run [flags] PLAN.toml\n       tool run --other-form\n"));
  EXPECT_THAT(help, HasSubstr("\nRuns a plan. .TH is not a request.\n"));
  EXPECT_THAT(help, HasSubstr("  TABLE  kept as is\n"));
  for (const FlagSpec& f : kFlags) EXPECT_THAT(help, HasSubstr("--" + std::string(f.name))) << f.name;
  EXPECT_THAT(help, HasSubstr("--local N"));
  EXPECT_THAT(help, HasSubstr("--history=false"));
  EXPECT_THAT(help, HasSubstr("(default: ./results)"));
  EXPECT_THAT(help, HasSubstr("tags. Repeat or comma-separate."));
  EXPECT_THAT(help, HasSubstr("one agent. Repeat for more."));
  EXPECT_THAT(help, HasSubstr("exit status: 0 pass."));
  for (absl::string_view line : absl::StrSplit(help, '\n')) {
    EXPECT_LE(line.size(), 80u) << line;
  }
  EXPECT_THAT(FormatCommandHelp(kHidden), Not(HasSubstr("secret")));
}

TEST(FlagsMan, RoffHasTheSectionsAndEveryFlag) {
  constexpr const CommandSpec* kCommands[] = {&kCmd, &kHidden};
  constexpr ManSection kSections[] = {{.title = "Exit status", .text = "  0  ok"}};
  const ProgramSpec program = {.name = "tool",
                               .man_section = 1,
                               .summary = "does things",
                               .description = "Tool does things.",
                               .commands = kCommands,
                               .sections = kSections};
  const std::string man = FormatManPage(program, "1.2.3");
  EXPECT_THAT(man, HasSubstr(".TH TOOL 1 \"\" \"tool 1.2.3\" \"User Commands\"\n"));
  EXPECT_THAT(man, HasSubstr(".SH NAME\ntool \\- does things\n"));
  EXPECT_THAT(man, HasSubstr(".SH SYNOPSIS\n"));
  EXPECT_THAT(man, HasSubstr(".SH COMMANDS\n.SS \"tool run\"\n"));
  EXPECT_THAT(man, HasSubstr(".SH EXIT STATUS\n"));
  const size_t options = man.find(".SH OPTIONS\n");
  ASSERT_NE(options, std::string::npos);
  for (const FlagSpec& f : kFlags) {
    std::string roff_name = "\\-\\-" + std::string(f.name);
    EXPECT_NE(man.find(".B " + roff_name, options), std::string::npos) << f.name;
  }
  EXPECT_THAT(man, Not(HasSubstr("secret")));
  // A line starting with '.' in the text is not a request.
  EXPECT_THAT(man, HasSubstr("\n\\&.TH is not a request.\n"));
}

}  // namespace
}  // namespace lockstep
