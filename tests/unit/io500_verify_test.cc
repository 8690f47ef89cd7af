// Our IO500 files checked the way IO500's own tools read them: the score hash
// recomputed as IO500's verifier does (src/util.c hash_func and
// u_verify_result_files, src/ini-parse.c's line patterns, src/main.c's
// u_should_hash_phase), and result_summary.txt against src/main.c's
// dupprintf formats. Written from IO500's source, not from ours.
#include <regex>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "controller/io500/io500_config.h"
#include "controller/io500/io500_output.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace lockstep {
namespace {

// src/util.c: rotladd, u_hash_update, u_hash_update_key_val.
uint32_t Update(uint32_t h, const std::string& s) {
  for (char c : s) h = ((h << 2) | (h >> 30)) + static_cast<uint32_t>(static_cast<int>(c));
  return h;
}
void KeyVal(uint32_t* h, const std::string& k, const std::string& v) {
  *h ^= Update(Update(0, k), v);
}

// src/phase-definitions.h u_should_hash_phase: scored and not optional (the
// standard phases with group > IO500_NO_SCORE); a name it does not know: true.
bool ShouldHashPhase(const std::string& name) {
  static const std::set<std::string> kUnscored = {
      "opt", "debug", "ior-easy", "mdtest-easy", "timestamp", "ior-hard", "mdtest-hard",
      "ior-rnd4K-easy-read", "mdworkbench", "mdworkbench-create", "mdworkbench-bench",
      "mdworkbench-delete", "find-easy", "find-hard"};
  return kUnscored.count(name) == 0;
}

// u_verify_result_files without the configuration hash: "[OK]", "[OK] But
// this is an invalid run!", or the error IO500 prints.
std::string VerifyScoreHash(const std::string& result_txt) {
  const std::regex section(R"(^[[:space:]]*[[][[:space:]]*([0-9a-zA-Z_-]+)[[:space:]]*[]][[:space:]]*([[:space:]][#;].*)?$)",
                           std::regex::extended);
  const std::regex pair(R"(^[[:space:]]*([0-9a-zA-Z_.-]+)[[:space:]]*=[[:space:]]*([^#;]*)[[:space:]]*([[:space:]][#;].*)?$)",
                        std::regex::extended);
  const std::regex empty(R"(^[[:space:]]*([#;].*)?$)", std::regex::extended);
  uint32_t hash = 0;
  std::string last_section, hash_read, cfg_read;
  for (absl::string_view l : absl::StrSplit(result_txt, '\n', absl::SkipEmpty())) {
    const std::string line(l);
    std::smatch m;
    if (std::regex_match(line, m, section)) {
      last_section = m[1];
      continue;
    }
    if (std::regex_match(line, m, pair)) {
      const std::string key = m[1];
      std::string val = m[2];
      while (!val.empty() && (val.back() == ' ' || val.back() == '\t' || val.back() == '\r')) {
        val.pop_back();
      }
      if (val.empty()) continue;
      if (key == "version") {
        KeyVal(&hash, key, val);
      } else if (key == "config-hash") {
        cfg_read = val;
      } else if (last_section == "SCORE") {
        if (key == "SCORE") {
          KeyVal(&hash, key, val.substr(0, val.find(' ')));
        } else if (key == "hash") {
          hash_read = val;
        } else {
          KeyVal(&hash, key, val);
        }
      } else if (key == "score" && ShouldHashPhase(last_section)) {
        KeyVal(&hash, last_section, val);
      }
      continue;
    }
    if (std::regex_match(line, empty)) continue;
    return "Parsing error: " + line;
  }
  if (cfg_read.empty()) return "ERROR: Empty config hash read";
  if (absl::StrFormat("%X", hash) == hash_read) return "[OK]";
  KeyVal(&hash, "valid", "NO");
  if (absl::StrFormat("%X", hash) == hash_read) return "[OK] But this is an invalid run!";
  return "ERROR: Score hash expected: " + absl::StrFormat("%X", hash) + " read: " + hash_read;
}

Io500RunOutput SampleIo500Run(uint32_t stonewall_s, double write_time_s) {
  Io500RunOutput run;
  run.procs = 4;
  run.version = "lockstep-1.2.3";
  run.config_hash = 0xABC;
  run.result_dir = "/r";
  run.stonewall_seconds = stonewall_s;
  run.start_unix_ns = int64_t{1764633600} * 1000000000;
  run.end_unix_ns = run.start_unix_ns + int64_t{4000} * 1000000000;
  run.notes = {"a note of Lockstep's"};
  run.lockstep_run_dir = "/out/run";
  const char* kNames[] = {"ior-easy-write", "mdtest-easy-write", "timestamp", "ior-hard-write",
                          "mdtest-hard-write", "find", "ior-easy-read", "mdtest-easy-stat",
                          "ior-hard-read", "mdtest-hard-stat", "mdtest-easy-delete",
                          "mdtest-hard-read", "mdtest-hard-delete", "ior-rnd4K-easy-read"};
  double score = 1.5;
  for (const char* n : kNames) {
    Io500PhaseOutput p;
    p.figures = {.name = n, .ran = true, .score = std::string(n) == "timestamp" ? 0 : score,
                 .time_s = write_time_s};
    p.exe = std::string(n).rfind("ior", 0) == 0 ? "ior -w" : "mdtest -C";
    if (std::string(n).find("-write") != std::string::npos) p.stonewall_figure = 2.25;
    score += 0.731;
    run.phases.push_back(p);
  }
  return run;
}

TEST(Io500Verify, ResultTxtPassesIo500sScoreHashCheck) {
  EXPECT_EQ(VerifyScoreHash(FormatIo500ResultTxt(SampleIo500Run(300, 301))), "[OK]");
  // Invalid (a stonewall of 10 s; writes shorter than the stonewall): IO500's
  // verifier accepts the hash as that of an invalid run.
  EXPECT_EQ(VerifyScoreHash(FormatIo500ResultTxt(SampleIo500Run(10, 11))), "[OK] But this is an invalid run!");
  EXPECT_EQ(VerifyScoreHash(FormatIo500ResultTxt(SampleIo500Run(300, 250))),
            "[OK] But this is an invalid run!");
  // The check fails a changed score.
  std::string changed = FormatIo500ResultTxt(SampleIo500Run(300, 301));
  changed.replace(changed.find("score           = 1.500000"), 26, "score           = 1.600000");
  EXPECT_THAT(VerifyScoreHash(changed), ::testing::StartsWith("ERROR: Score hash expected"));
}

TEST(Io500Verify, ResultTxtLinesAsIo500PrintsThem) {
  const std::string s = FormatIo500ResultTxt(SampleIo500Run(300, 250));
  // "; START" (verbosity 1), then main.c's blank line and the first section.
  EXPECT_THAT(s, ::testing::MatchesRegex(
                     "(.|\n)*\nmode            = standard\n(;[^\n]*\n)*; START "
                     "[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}\n\n\n\\[ior-easy-write\\]\n(.|\n)*"));
  // phase_ior.c, then main.c's checks, in IO500's words and order.
  EXPECT_THAT(s, ::testing::HasSubstr(
                     "exe             = ior -w\n"
                     "; ERROR INVALID Write phase needed 250.000000s instead of stonewall 300s. "
                     "Stonewall was hit at 250.0s\n"
                     "throughput-stonewall = 2.25\n"
                     "; ERROR INVALID Runtime of phase (250.000000) is below stonewall time. This "
                     "shouldn't happen!\n"));
  // mdtest's rate-stonewall is "%f".
  EXPECT_THAT(s, ::testing::HasSubstr("\nrate-stonewall  = 2.250000\n"));
  EXPECT_THAT(s, ::testing::Not(::testing::HasSubstr("rate-stonewall  = 2.25\n")));
  // main.c's last line (verbosity 1), after [SCORE]'s hash.
  EXPECT_THAT(s, ::testing::MatchesRegex("(.|\n)*\nhash            = [0-9A-F]+\n; END [0-9]{4}-[0-9]{2}-"
                                         "[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}\n"));
  // Only IO500's own ';' lines: START, ERROR INVALID, END (issue 44: four
  // more of Lockstep's); Lockstep's go to lockstep.txt.
  for (absl::string_view line : absl::StrSplit(s, '\n')) {
    if (!absl::StartsWith(line, ";")) continue;
    EXPECT_TRUE(absl::StartsWith(line, "; START ") || absl::StartsWith(line, "; END ") ||
                absl::StartsWith(line, "; ERROR INVALID "))
        << line;
  }
  const std::string extras = FormatIo500LockstepTxt(SampleIo500Run(300, 250));
  EXPECT_THAT(extras, ::testing::HasSubstr("not an official IO500 list submission"));
  EXPECT_THAT(extras, ::testing::HasSubstr("; a note of Lockstep's\n"));
  EXPECT_THAT(extras, ::testing::HasSubstr("; lockstep run: /out/run"));
  // Verbosity 0: IO500 prints neither START nor END nor the t_* lines.
  Io500RunOutput quiet = SampleIo500Run(300, 301);
  quiet.verbosity = 0;
  const std::string q = FormatIo500ResultTxt(quiet);
  EXPECT_THAT(q, ::testing::Not(::testing::HasSubstr("; START")));
  EXPECT_THAT(q, ::testing::Not(::testing::HasSubstr("; END")));
  EXPECT_THAT(q, ::testing::Not(::testing::HasSubstr("t_delta")));
}

TEST(Io500Verify, SummaryIsIo500sDupprintfLines) {
  const std::string s = FormatIo500Summary(SampleIo500Run(300, 301));
  const std::regex version(R"(IO500 version [^ ]+ \((standard|extended)\))");
  // " %20s %15s %s : time %.3f seconds%s" after "[RESULT]" or "[      ]".
  const std::regex result(
      R"(\[(RESULT|      )\] {1,}[ -~]{20} {1,}[0-9]+\.[0-9]{6} (GiB/s|kIOPS) : time [0-9]+\.[0-9]{3} seconds( \[INVALID\])?)");
  const std::regex score(
      R"(\[SCORE \] Bandwidth [0-9]+\.[0-9]{6} GiB/s : IOPS [0-9]+\.[0-9]{6} kiops : TOTAL [0-9]+\.[0-9]{6}( \[INVALID\])?)");
  std::vector<std::string> lines = absl::StrSplit(s, '\n');
  ASSERT_EQ(lines.size(), 17u) << s;  // version, 14 phases, score, ""
  EXPECT_TRUE(std::regex_match(lines[0], version)) << lines[0];
  for (size_t i = 1; i <= 14; ++i) EXPECT_TRUE(std::regex_match(lines[i], result)) << lines[i];
  EXPECT_TRUE(std::regex_match(lines[15], score)) << lines[15];
  EXPECT_EQ(lines[16], "");
}

}  // namespace
}  // namespace lockstep

namespace lockstep {
namespace {

// IO500's u_ini_gen_hash over its whole option table: the expected values were
// computed by a separate script from IO500's src/util.c and the option tables
// of src/phase_*.c (every option with a default, the file's values over them).
TEST(Io500Verify, ConfigHashIsIo500s) {
  auto minimal = ParseIo500Config("[global]\ndatadir = /d\n", "io500.ini");
  ASSERT_TRUE(minimal.ok()) << minimal.status();
  EXPECT_EQ(absl::StrFormat("%X", Io500ConfigHash(*minimal)), "BE12C956");
  auto set = ParseIo500Config(
      "[global]\ndatadir = /scratch/io500   # data\ntimestamp-datadir = false\n"
      "[debug]\nstonewall-time = 10\n[ior-easy]\ntransferSize = 1m\nblockSize = 100m\n"
      "[mdtest-hard]\nn = 500\n[find]\nnproc = 4\n",
      "io500.ini");
  ASSERT_TRUE(set.ok()) << set.status();
  EXPECT_EQ(absl::StrFormat("%X", Io500ConfigHash(*set)), "AAE43DA2");
}

}  // namespace
}  // namespace lockstep
