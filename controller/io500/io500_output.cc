#include "controller/io500/io500_output.h"

#include <ctime>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/files.h"
#include "common/status_macros.h"

namespace lockstep {
namespace {

std::string LocalTime(int64_t unix_seconds, const char* format) {
  const time_t t = static_cast<time_t>(unix_seconds);
  struct tm tm = {};
  localtime_r(&t, &tm);
  char buf[64];
  strftime(buf, sizeof buf, format, &tm);
  return buf;
}

// IO500's u_print_timestamp.
std::string PairTime(int64_t unix_ns) {
  return LocalTime(unix_ns / 1000000000, "%Y-%m-%d %H:%M:%S");
}

// IO500's PRINT_PAIR.
std::string Pair(const std::string& key, const std::string& value) {
  return absl::StrFormat("%-15s = %s\n", key, value);
}

}  // namespace

uint32_t Io500HashUpdate(uint32_t hash, absl::string_view text) {
  for (char c : text) hash = ((hash << 2) | (hash >> 30)) + static_cast<uint32_t>(c);
  return hash;
}

void Io500HashKeyVal(uint32_t* hash, absl::string_view key, absl::string_view value) {
  *hash ^= Io500HashUpdate(Io500HashUpdate(0, key), value);
}

namespace {

// IO500's t_delta and t_end (verbosity > 0).
std::string PhaseEnd(const Io500PhaseOutput& p, bool verbose) {
  if (!verbose) return "";
  std::string s = Pair("t_delta", absl::StrFormat("%.4f", p.figures.time_s));
  if (p.end_unix_ns > 0) s += Pair("t_end", PairTime(p.end_unix_ns));
  return s;
}

std::string PhaseSection(const Io500PhaseOutput& p, uint32_t stonewall_seconds, bool verbose) {
  const Io500PhaseFigures& f = p.figures;
  std::string s = absl::StrFormat("\n[%s]\n", f.name);
  if (p.start_unix_ns > 0 && verbose) s += Pair("t_start", PairTime(p.start_unix_ns));
  if (Io500IsDummy(f.name)) return s + PhaseEnd(p, verbose);
  if (!p.exe.empty()) s += Pair("exe", p.exe);
  if (p.is_find && f.ran) {
    s += Pair("nproc", absl::StrCat(p.find_nproc));
    s += Pair("found", absl::StrCat(p.found));
    s += Pair("total-files", absl::StrCat(p.total_files));
  }
  const bool ior = f.name[0] == 'i';
  // phase_ior.c's check of a stonewalled IOR write, before its figure.
  if (ior && f.ran && Io500IsStonewalledWrite(f.name) && f.time_s < stonewall_seconds) {
    s += absl::StrFormat("; ERROR INVALID Write phase needed %fs instead of stonewall %ds. "
                         "Stonewall was hit at %.1fs\n",
                         f.time_s, stonewall_seconds,
                         p.stonewall_hit_s >= 0 ? p.stonewall_hit_s : f.time_s);
  }
  // IOR's "%.2f" (phase_ior.c), mdtest's "%f" (phase_mdtest_*_write.c).
  if (p.stonewall_figure >= 0) {
    s += Pair(ior ? "throughput-stonewall" : "rate-stonewall",
              absl::StrFormat(ior ? "%.2f" : "%f", p.stonewall_figure));
  }
  for (const std::string& r : JudgeIo500Phase(f, stonewall_seconds).reasons) {
    s += absl::StrFormat("; ERROR INVALID %s\n", r);
  }
  s += Pair("score", absl::StrFormat("%f", f.score));
  return s + PhaseEnd(p, verbose);
}

std::string PhaseSections(const Io500RunOutput& run) {
  std::string s;
  for (const Io500PhaseOutput& p : run.phases) {
    s += PhaseSection(p, run.stonewall_seconds, run.verbosity > 0);
  }
  return s;
}

std::vector<Io500PhaseFigures> Figures(const Io500RunOutput& run) {
  std::vector<Io500PhaseFigures> out;
  for (const Io500PhaseOutput& p : run.phases) out.push_back(p.figures);
  return out;
}

}  // namespace

std::string Io500ProvenanceLine() {
  return "; The phases were run by Lockstep (lockstep io500) on its agents without MPI: IO500's "
         "phases, parameters and score, but not the io500 program, so this is not an official "
         "IO500 list submission.";
}

std::string FormatIo500Summary(const Io500RunOutput& run) {
  // As IO500 writes it, line for line: Lockstep's notice is in result.txt's
  // '; ' lines and in lockstep io500's own output.
  std::string s = absl::StrFormat("IO500 version %s (standard)\n", run.version);
  for (const Io500PhaseOutput& p : run.phases) {
    const Io500PhaseFigures& f = p.figures;
    const Io500PhaseVerdict v = JudgeIo500Phase(f, run.stonewall_seconds);
    s += absl::StrFormat("%s %20s %15s %s : time %.3f seconds%s\n",
                         Io500GroupOf(f.name) == Io500Group::kNone ? "[      ]" : "[RESULT]",
                         f.name, absl::StrFormat("%f", f.score),
                         f.name[0] == 'i' ? "GiB/s" : "kIOPS", f.time_s,
                         v.valid ? "" : " [INVALID]");
  }
  const Io500Score score = ComputeIo500Score(Figures(run), run.stonewall_seconds);
  s += absl::StrFormat("[SCORE ] Bandwidth %f GiB/s : IOPS %f kiops : TOTAL %f%s\n", score.bw,
                       score.md, score.total, score.valid ? "" : " [INVALID]");
  return s;
}

std::string FormatIo500ResultTxt(const Io500RunOutput& run) {
  std::string s = "[run]\n";
  s += Pair("procs", absl::StrCat(run.procs));
  s += Pair("version", run.version);
  s += Pair("config-hash", absl::StrFormat("%X", run.config_hash));
  s += Pair("result-dir", run.result_dir);
  s += Pair("mode", "standard");
  // main.c: "; START" (verbosity 1, IO500's default), the debug phase's
  // stonewall check (phase_dbg.c), then a blank line before the phases.
  if (run.start_unix_ns > 0 && run.verbosity > 0) {
    s += absl::StrFormat("; START %s\n", PairTime(run.start_unix_ns));
  }
  if (run.stonewall_seconds != kIo500StonewallSeconds) {
    s += absl::StrFormat("; ERROR INVALID stonewall-time %us != %us\n", run.stonewall_seconds,
                         static_cast<uint32_t>(kIo500MinWriteSeconds));
  }
  s += "\n";
  const Io500Score score = ComputeIo500Score(Figures(run), run.stonewall_seconds);
  s += PhaseSections(run);
  s += "\n[SCORE]\n";
  s += Pair("MD", absl::StrFormat("%f", score.md));
  s += Pair("BW", absl::StrFormat("%f", score.bw));
  s += Pair("SCORE", absl::StrFormat("%f%s", score.total, score.valid ? "" : " [INVALID]"));
  s += Pair("hash", absl::StrFormat("%X", Io500ScoreHash(run)));
  if (run.end_unix_ns > 0 && run.verbosity > 0) {
    s += absl::StrFormat("; END %s\n", PairTime(run.end_unix_ns));
  }
  return s;
}

std::string FormatIo500LockstepTxt(const Io500RunOutput& run) {
  std::string s = Io500ProvenanceLine() + "\n";
  if (!run.lockstep_run_dir.empty()) {
    s += absl::StrFormat("; lockstep run: %s (run.json, journal, history)\n",
                         run.lockstep_run_dir);
  }
  for (const std::string& n : run.notes) s += absl::StrFormat("; %s\n", n);
  for (const Io500PhaseOutput& p : run.phases) {
    if (p.wear_out_tail_s >= 0) {
      s += absl::StrFormat("; %s: wear-out tail %.3f s after the stonewall\n", p.figures.name,
                           p.wear_out_tail_s);
    }
    for (const std::string& l : p.lockstep_lines) {
      s += absl::StrFormat("; %s: %s\n", p.figures.name, l);
    }
  }
  return s;
}

uint32_t Io500ScoreHash(const Io500RunOutput& run) {
  const Io500Score score = ComputeIo500Score(Figures(run), run.stonewall_seconds);
  uint32_t hash = 0;
  Io500HashKeyVal(&hash, "version", run.version);
  for (const Io500PhaseOutput& p : run.phases) {
    if (Io500GroupOf(p.figures.name) == Io500Group::kNone) continue;
    Io500HashKeyVal(&hash, p.figures.name, absl::StrFormat("%f", p.figures.score));
  }
  Io500HashKeyVal(&hash, "MD", absl::StrFormat("%f", score.md));
  Io500HashKeyVal(&hash, "BW", absl::StrFormat("%f", score.bw));
  Io500HashKeyVal(&hash, "SCORE", absl::StrFormat("%f", score.total));
  if (!score.valid) Io500HashKeyVal(&hash, "valid", "NO");
  return hash;
}

std::string Io500DirTimestamp(int64_t unix_seconds) {
  return LocalTime(unix_seconds, "%Y.%m.%d-%H.%M.%S");
}

absl::Status WriteIo500Output(const Io500RunOutput& run, const std::string& dir) {
  RETURN_IF_ERROR(WriteFileAtomically(dir + "/config-orig.ini", run.config_orig));
  RETURN_IF_ERROR(WriteFileAtomically(dir + "/config.ini", run.config_resolved));
  for (const Io500PhaseOutput& p : run.phases) {
    if (!p.text.empty()) {
      RETURN_IF_ERROR(WriteFileAtomically(dir + "/" + p.figures.name + ".txt", p.text));
    }
    if (!p.csv.empty()) {
      RETURN_IF_ERROR(WriteFileAtomically(dir + "/" + p.figures.name + ".csv", p.csv));
    }
  }
  RETURN_IF_ERROR(WriteFileAtomically(dir + "/lockstep.txt", FormatIo500LockstepTxt(run)));
  RETURN_IF_ERROR(WriteFileAtomically(dir + "/result.txt", FormatIo500ResultTxt(run)));
  return WriteFileAtomically(dir + "/result_summary.txt", FormatIo500Summary(run));
}

}  // namespace lockstep
