// IO500's output files for `lockstep io500`, from the figures of its phases
// (the command fills them from the run record): result_summary.txt,
// result.txt, config-orig.ini, config.ini, one <phase>.txt and <phase>.csv
// per phase, and Lockstep's own lockstep.txt, which says that the phases
// were run by Lockstep without MPI and are not an official IO500 list
// submission (lockstep io500 prints it too; result.txt's version line is
// Lockstep's). result_summary.txt and result.txt are IO500's, line for line.
//
// result_summary.txt (IO500's layout, src/main.c):
//   IO500 version lockstep-<v> (standard)
//   [RESULT]       ior-easy-write        1.234567 GiB/s : time 300.123 seconds
//   [      ]            timestamp        0.000000 kIOPS : time 0.000 seconds
//   ... " [INVALID]" appended to an invalid phase ...
//   [SCORE ] Bandwidth 1.234567 GiB/s : IOPS 12.345678 kiops : TOTAL 3.903211
// (GiB/s when the phase name starts with 'i', kIOPS otherwise; "[      ]"
// for unscored phases.)
//
// result.txt is INI-like, one "%-15s = value" per line, as IO500's main.c
// writes it and nothing else: [run] (procs, version, config-hash,
// result-dir, mode, "; START <time>", the debug phase's "; ERROR INVALID",
// a blank line), one section per phase (t_start, exe, find's
// nproc/found/total-files, throughput-stonewall or rate-stonewall, "; ERROR
// INVALID <reason>" lines, score, t_delta, t_end; the timestamp phase only
// t_start, t_delta, t_end), [SCORE] (MD, BW, SCORE, hash: IO500's score
// hash, Io500ScoreHash), "; END <time>". START, END and the t_* lines at
// verbosity > 0, as IO500. config.ini is IO500's whole option table with
// the values (ResolvedIo500Config), so that `io500-verify config.ini
// result.txt` accepts the directory. Each IOR/mdtest phase's <phase>.csv
// (and find.csv): io500_csv.h. Lockstep's own lines (what ran it, its
// notes, each write's wear-out tail) are in lockstep.txt.
#ifndef LOCKSTEP_CONTROLLER_IO500_IO500_OUTPUT_H_
#define LOCKSTEP_CONTROLLER_IO500_IO500_OUTPUT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "controller/io500/io500_score.h"

namespace lockstep {

struct Io500PhaseOutput {
  Io500PhaseFigures figures;
  int64_t start_unix_ns = 0;  // 0: did not start
  int64_t end_unix_ns = 0;
  std::string exe;            // the equivalent ior/mdtest/pfind command line
  // IOR writes: throughput-stonewall (GiB/s); mdtest writes: rate-stonewall
  // (kIOPS); < 0: none.
  double stonewall_figure = -1;
  // Time from the stonewall deadline to the last task's end (wear-out); < 0: none.
  double wear_out_tail_s = -1;
  // When the stonewall was hit, from the phase's start (IOR's stonewall_time);
  // < 0: unknown (its time is shown).
  double stonewall_hit_s = -1;
  // find only
  bool is_find = false;
  uint64_t find_nproc = 0;
  uint64_t found = 0;
  uint64_t total_files = 0;
  std::string text;  // <phase>.txt; empty: no such file
  std::string csv;   // <phase>.csv, the file its exe line names (io500_csv.h); empty: none
  // Lockstep's own lines about the phase, for lockstep.txt (never result.txt).
  std::vector<std::string> lockstep_lines;
};

struct Io500RunOutput {
  uint32_t procs = 0;                 // tasks of all agents
  uint32_t verbosity = 1;             // [global] verbosity: "; START", "; END", t_* at > 0
  int64_t start_unix_ns = 0;          // "; START"; 0: no such line
  int64_t end_unix_ns = 0;            // "; END"; 0: no such line
  std::string version;                // "lockstep-<version>"
  uint32_t config_hash = 0;
  std::string result_dir;
  uint32_t stonewall_seconds = 300;
  std::vector<Io500PhaseOutput> phases;  // in IO500's order
  std::string config_orig;            // config-orig.ini
  std::string config_resolved;        // config.ini
  std::string lockstep_run_dir;       // where run.json is; may be empty
  std::vector<std::string> notes;     // Lockstep's notes, for lockstep.txt
};

// The line every output carries: run by Lockstep without MPI, not an
// official list submission.
std::string Io500ProvenanceLine();

// IO500's u_hash_update (rotate left by 2, add the character) and
// u_hash_update_key_val (the pair's hash XORed in), src/util.c.
uint32_t Io500HashUpdate(uint32_t hash, absl::string_view text);
void Io500HashKeyVal(uint32_t* hash, absl::string_view key, absl::string_view value);
// The [SCORE] hash as IO500's main.c computes it: version, each scored
// phase's "%f" score, MD, BW, SCORE, and valid=NO for an invalid run.
uint32_t Io500ScoreHash(const Io500RunOutput& run);

std::string FormatIo500Summary(const Io500RunOutput& run);
std::string FormatIo500ResultTxt(const Io500RunOutput& run);
// lockstep.txt: the provenance line, the run directory, the notes and each
// phase's Lockstep lines.
std::string FormatIo500LockstepTxt(const Io500RunOutput& run);

// IO500's result directory name: local time "YYYY.MM.DD-HH.MM.SS".
std::string Io500DirTimestamp(int64_t unix_seconds);

// Writes every file into `dir` (which must exist), each atomically.
absl::Status WriteIo500Output(const Io500RunOutput& run, const std::string& dir);

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_IO500_IO500_OUTPUT_H_
