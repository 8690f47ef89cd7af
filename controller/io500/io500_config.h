// IO500's configuration file (the ini `io500 CONFIG.ini` reads), for
// `lockstep io500`: parsing, checking and the resolved text IO500 keeps as
// config.ini. A pure function of the text: no file system access.
//
// The format is IO500's (src/ini-parse.c): "[section]" lines, "key = value"
// lines, '#' or ';' comments (a value ends at the first of them), blank
// lines; section and key names are case-insensitive; an empty value leaves
// the key at its default. Booleans are TRUE/FALSE/1/0 (any case).
//
// Sections and keys: IO500's whole option table (`io500 --list`, 02091cf),
// with its types and defaults, in its order: [global] datadir
// (./datafiles), timestamp-datadir (TRUE), resultdir, timestamp-resultdir,
// api, drop-caches, drop-caches-cmd, io-buffers-on-gpu, verbosity, scc,
// dataPacketType; [debug] stonewall-time (300), pause-dir; [ior-easy] API,
// transferSize (2m), blockSize (9920000m), filePerProc, uniqueDir, run,
// verbosity; [ior-hard] API, segmentCount (10000000), collective, run,
// verbosity; [mdtest-easy] API, n, run; [mdtest-hard] API, n,
// files-per-dir, run; [find] (and the extended mode's [find-easy],
// [find-hard]) external-script, external-mpi-args, external-extra-args,
// nproc, run, pfind-*; [mdworkbench*]; [timestamp] (no options); one
// section per phase: API, run (and collective for ior-hard-*).
//
// Refused, each naming the file, line and key: an unknown section, an
// unknown key with a value (IO500's own words: "Parsing error in section S
// line N, unknown option "K" with value "V""; a key without a value is
// passed over, as IO500 does), a key outside any section, a line that is
// neither, a key given twice in one section, a value of the wrong type, an
// API other than POSIX, uniqueDir = TRUE (IOR -u is not implemented),
// collective = TRUE (MPI-IO), stonewall-time = 0, a size that does not
// parse, a blockSize that is not a multiple of transferSize, n or
// segmentCount of 0, and the options Lockstep does not do set to anything
// but IO500's default (io-buffers-on-gpu, scc, dataPacketType, pause-dir,
// files-per-dir, [find] external-script), each with the reason.
#ifndef LOCKSTEP_CONTROLLER_IO500_IO500_CONFIG_H_
#define LOCKSTEP_CONTROLLER_IO500_IO500_CONFIG_H_

#include <cstdint>
#include <map>
#include <string>
#include "absl/strings/string_view.h"
#include <vector>

#include "absl/status/statusor.h"

namespace lockstep {

// IO500's standard phases, in the order it runs them.
inline constexpr const char* kIo500Phases[] = {
    "ior-easy-write",     "mdtest-easy-write", "timestamp",          "ior-hard-write",
    "mdtest-hard-write",  "find",              "ior-easy-read",      "mdtest-easy-stat",
    "ior-hard-read",      "mdtest-hard-stat",  "mdtest-easy-delete", "mdtest-hard-read",
    "mdtest-hard-delete", "ior-rnd4K-easy-read",
};

struct Io500Config {
  std::string source;  // the file name, for messages
  std::string text;    // as read (config-orig.ini)

  // [global]
  std::string datadir = "./datafiles";
  bool timestamp_datadir = true;
  std::string resultdir = "./results";
  bool timestamp_resultdir = true;
  bool drop_caches = false;
  std::string drop_caches_cmd;  // accepted; never run (see notes)
  uint32_t verbosity = 1;
  // [debug]
  uint32_t stonewall_seconds = 300;
  // [ior-easy]
  std::string ior_easy_transfer = "2m";  // as written, for the exe line
  uint64_t ior_easy_transfer_bytes = 2ull << 20;
  std::string ior_easy_block = "9920000m";
  uint64_t ior_easy_block_bytes = 9920000ull << 20;
  bool ior_easy_file_per_proc = true;
  // [ior-hard]
  uint64_t ior_hard_segments = 10000000;
  // [mdtest-easy], [mdtest-hard]
  uint64_t mdtest_easy_items = 1000000;
  uint64_t mdtest_hard_items = 1000000;
  // [find]
  uint32_t find_nproc = 0;  // 0: not given

  // Every (canonical) section name → its (canonical) key → the value, with
  // the defaults filled in; booleans as TRUE/FALSE. In IO500's order when
  // iterated through kIo500Sections (ResolvedIo500Config).
  std::map<std::string, std::map<std::string, std::string>> values;
  // What the parse decided that the user should know (ignored keys).
  std::vector<std::string> notes;

  // False when `phase` (one of kIo500Phases) or the section of its group
  // ("ior-easy" for ior-easy-write) says run = FALSE.
  bool PhaseEnabled(absl::string_view phase) const;
};

// Parses and checks `text`; `source` names the file in errors
// ("io500.ini:12: [ior-easy] key 'foo': unknown; known: ...").
// InvalidArgument for every refusal listed at the top of this header.
absl::StatusOr<Io500Config> ParseIo500Config(const std::string& text, const std::string& source);

// The configuration with every default resolved, as IO500 writes
// config.ini: every section in IO500's order, "key = value" per key
// (an unset key as "key = "), a blank line after each section.
std::string ResolvedIo500Config(const Io500Config& config);

// IO500's config-hash (u_ini_gen_hash of src/ini-parse.c): the XOR of
// u_hash_update_key_val(option, value) over every option of every IO500
// section that has a value (the file's, else IO500's default), printed %X:
// the hash io500 --verify computes from config.ini (ResolvedIo500Config).
uint32_t Io500ConfigHash(const Io500Config& config);

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_IO500_IO500_CONFIG_H_
