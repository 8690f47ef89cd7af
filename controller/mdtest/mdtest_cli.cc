#include "controller/mdtest/mdtest_cli.h"

#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "common/mdtest_layout.h"
#include "common/names.h"
#include "common/sizes.h"
#include "common/status_macros.h"
#include "controller/cli/cli_common.h"
#include "controller/cli/command_specs.h"
#include "controller/ior/ior_options.h"
#include "controller/plan/limits.h"
#include "controller/plan/kinds/mdtest_plan.h"

namespace lockstep {
namespace {

using K = IorArgKind;

// mdtest_run()'s options of hpc/ior src/mdtest.c (4.1, built without the
// Lustre API, so no -g), in its order, and the POSIX backend's. Flags are
// option.c's 'd' counters; 'd' values are ints, 'l' values int64s read into
// mdtest's unsigned counts, both with string_to_bytes().
constexpr IorOptionSpec kMdtestOptions[] = {
    {'a', nullptr, K::kValue, 's'},         {'b', nullptr, K::kValue, 'd'},
    {'d', nullptr, K::kValue, 's'},         {'B', nullptr, K::kValue, 'd'},
    {'C', nullptr, K::kFlag, 'd'},          {'T', nullptr, K::kFlag, 'd'},
    {'E', nullptr, K::kFlag, 'd'},          {'r', nullptr, K::kFlag, 'd'},
    {'U', nullptr, K::kFlag, 'd'},          {'D', nullptr, K::kFlag, 'd'},
    {'e', nullptr, K::kValue, 'l'},         {'f', nullptr, K::kValue, 'd'},
    {'F', nullptr, K::kFlag, 'd'},          {'G', nullptr, K::kValue, 'd'},
    {'i', nullptr, K::kValue, 'd'},         {'I', nullptr, K::kValue, 'l'},
    {'k', nullptr, K::kFlag, 'd'},          {'l', nullptr, K::kValue, 'd'},
    {'L', nullptr, K::kFlag, 'd'},          {'n', nullptr, K::kValue, 'l'},
    {'N', nullptr, K::kValue, 'd'},         {'p', nullptr, K::kValue, 'd'},
    {'P', nullptr, K::kFlag, 'd'},          {0, "print-all-procs", K::kFlag, 'd'},
    {'R', nullptr, K::kFlag, 'd'},          {0, "random-seed", K::kValue, 'd'},
    {'s', nullptr, K::kValue, 'd'},         {'S', nullptr, K::kFlag, 'd'},
    {'c', nullptr, K::kFlag, 'd'},          {'t', nullptr, K::kFlag, 'd'},
    {'u', nullptr, K::kFlag, 'd'},          {'v', nullptr, K::kFlag, 'd'},
    {'V', nullptr, K::kValue, 'd'},         {'w', nullptr, K::kValue, 'l'},
    {'W', nullptr, K::kValue, 'd'},         {'x', nullptr, K::kValue, 's'},
    {'X', "verify-read", K::kFlag, 'd'},    {0, "verify-write", K::kFlag, 'd'},
    {'y', nullptr, K::kFlag, 'd'},          {'Y', nullptr, K::kFlag, 'd'},
    {'z', nullptr, K::kValue, 'd'},         {'Z', nullptr, K::kFlag, 'd'},
    {0, "dataPacketType", K::kValue, 's'},  {0, "run-cmd-before-phase", K::kValue, 's'},
    {0, "run-cmd-after-phase", K::kValue, 's'},
    {0, "warningAsErrors", K::kFlag, 'd'},  {0, "saveRankPerformanceDetails", K::kValue, 's'},
    {0, "savePerOpDataCSV", K::kValue, 's'}, {0, "showRankStatistics", K::kFlag, 'd'},
    // POSIX backend.
    {0, "posix.odirect", K::kFlag, 'd'},    {0, "posix.rangelocks", K::kFlag, 'd'},
};

const OptionReaderTool& MdtestReaderTool() {
  static const OptionReaderTool kTool{kMdtestOptions, "mdtest", "mdtest 4.1",
                                      "lockstep mdtest --help"};
  return kTool;
}

// mdtest's options Lockstep refuses, and why. A flag set to 0 (-c=0) and a
// number option given its default 0 (-B 0, -V 0, -p 0) are mdtest's
// defaults and accepted.
struct MdRefusal {
  char letter;
  const char* long_name;
  const char* why;
};
constexpr MdRefusal kMdRefused[] = {
    {'B', nullptr, "no barriers (-B): lockstep always separates sub-phases with its start barrier"},
    {'c', nullptr, "collective creates (-c) are not implemented"},
    {'k', nullptr, "mknod (-k) is not implemented"},
    {'R', nullptr, "random stat order (-R) is not implemented"},
    {'S', nullptr, "shared file (-S) is not implemented"},
    {'x', nullptr, "stonewall status file (-x) is not implemented"},
    {'y', nullptr, "sync after each write (-y) is not implemented"},
    {'p', nullptr, "pre-iteration delay (-p) is not implemented"},
    {'G', nullptr, "-G (data offset of the written pattern) is not implemented: lockstep writes "
                   "its own pattern"},
    {'v', nullptr, "verbose output (-v) is not reproduced: mdtest prints its V-1.. lines, "
                   "lockstep does not"},
    {'V', nullptr, "verbose output (-V) is not reproduced"},
    {0, "print-all-procs", "every process's excerpt (--print-all-procs) is not reproduced; "
                           "run.json has every task's figures"},
    {0, "verify-write", "reading back after each write (--verify-write) is not implemented; "
                        "use -X (verify on read)"},
    {0, "dataPacketType", "data packet types are not implemented: lockstep writes its own "
                          "checkable pattern"},
    {0, "run-cmd-before-phase", "commands around phases are not run; use a plan's command "
                                "phases (kind = \"command\")"},
    {0, "run-cmd-after-phase", "commands around phases are not run; use a plan's command "
                               "phases (kind = \"command\")"},
    {0, "warningAsErrors", "turning mdtest's warnings into errors is not implemented"},
    {0, "saveRankPerformanceDetails", "mdtest's per-rank CSV is not written; run.json has "
                                      "every task's figures"},
    {0, "savePerOpDataCSV", "mdtest's per-operation CSV files are not written; run.json has "
                            "the latency histograms"},
    {0, "showRankStatistics", "per-rank statistics are not printed; run.json has every task's "
                              "figures"},
    {0, "posix.odirect", "O_DIRECT for mdtest's file data is not implemented"},
    {0, "posix.rangelocks", "range locks are not implemented"},
};

// mdtest's options as the command line gives them: option.c's ints and
// int64s, before mdtest's own checks.
struct MdtestOptions {
  int64_t items = 0;            // -n
  int64_t items_per_dir = 0;    // -I
  int64_t branching = 1;        // -b
  int64_t depth = 0;            // -z
  int64_t write_bytes = 0;      // -w
  int64_t read_bytes = 0;       // -e
  int64_t reps = 1;             // -i
  int64_t shift = 0;            // -N
  int64_t stonewall_s = 0;      // -W
  int64_t first = 1;            // -f
  int64_t last = 0;             // -l
  int64_t stride = 1;           // -s
  int unique = 0;               // -u
  int files_only = 0;           // -F
  int dirs_only = 0;            // -D
  int create = 0;               // -C
  int stat = 0;                 // -T
  int read = 0;                 // -E
  int remove = 0;               // -r
  int rename = 0;               // -U
  int leaves_only = 0;          // -L
  int rate_and_time = 0;        // -P
  int time_only = 0;            // -Z
  int verify_read = 0;          // -X
  int sync = 0;                 // -Y
  int time_unique_dir = 0;      // -t
  std::string dir = "./out";    // -d; mdtest's default
};

// mdtest's flags that Lockstep honours.
struct MdFlagField {
  char letter;
  int MdtestOptions::*field;
};
constexpr MdFlagField kMdFlags[] = {
    {'u', &MdtestOptions::unique},      {'F', &MdtestOptions::files_only},
    {'D', &MdtestOptions::dirs_only},   {'C', &MdtestOptions::create},
    {'T', &MdtestOptions::stat},        {'E', &MdtestOptions::read},
    {'r', &MdtestOptions::remove},      {'U', &MdtestOptions::rename},
    {'L', &MdtestOptions::leaves_only}, {'P', &MdtestOptions::rate_and_time},
    {'Z', &MdtestOptions::time_only},   {'X', &MdtestOptions::verify_read},
    {'Y', &MdtestOptions::sync},
    // -t: mdtest 4.1 then starts a step's clock before its barrier for the
    // unique directory instead of after it. Lockstep has no such barrier
    // inside a step (the start instant comes after its barrier), so both
    // clocks start at the same point: nothing differs.
    {'t', &MdtestOptions::time_unique_dir},
};

bool MdNamed(const IorOptionSpec& s, char letter, const char* long_name) {
  return (letter != 0 && s.letter == letter) ||
         (long_name != nullptr && s.long_name != nullptr &&
          absl::string_view(long_name) == s.long_name);
}

// An 'l' option (-n -I -w -e) into mdtest's unsigned count, within `max`.
absl::StatusOr<int64_t> MdCount(const IorToken& t, uint64_t max, CliCommand* cmd) {
  ASSIGN_OR_RETURN(int64_t v, OptionNumber(t, MdtestReaderTool(), &cmd->notes));
  if (v < 0) {
    return CliBad(t.name + " " + t.value,
                  absl::StrFormat("mdtest reads it as %d (string_to_bytes) into an unsigned "
                                  "count, %u; give a number from 0 to %u",
                                  v, static_cast<uint64_t>(v), max));
  }
  if (static_cast<uint64_t>(v) > max) {
    return CliBad(t.name + " " + t.value, absl::StrFormat("out of range; use 0 to %u", max));
  }
  return v;
}

// An option with its value.
absl::Status ApplyMdtestValue(const IorToken& t, MdtestOptions* o, CliCommand* cmd) {
  const std::string shown = t.name + " " + t.value;
  const std::string& v = t.value;
  switch (t.spec->letter) {
    case 'n': { ASSIGN_OR_RETURN(o->items, MdCount(t, kMaxMdItems, cmd)); return absl::OkStatus(); }
    case 'I': {
      ASSIGN_OR_RETURN(o->items_per_dir, MdCount(t, kMaxMdItemsPerDir, cmd));
      return absl::OkStatus();
    }
    case 'w': {
      ASSIGN_OR_RETURN(o->write_bytes, MdCount(t, kMaxMdtestFileBytes, cmd));
      return absl::OkStatus();
    }
    case 'e': {
      ASSIGN_OR_RETURN(o->read_bytes, MdCount(t, kMaxMdtestFileBytes, cmd));
      return absl::OkStatus();
    }
    case 'd':
      if (v.empty()) return CliBad(t.name, "needs a directory");
      if (v.find('@') != std::string::npos) {
        return CliBad(shown, "several directories (dir1@dir2) are not implemented");
      }
      o->dir = v;
      return absl::OkStatus();
    case 'a':
      if (!absl::EqualsIgnoreCase(v, "POSIX")) {
        return CliBad(shown, "only the POSIX API is supported");
      }
      return absl::OkStatus();
    default:
      break;
  }
  if (t.spec->type != 'd') return absl::InternalError(shown + ": an mdtest option without a rule");
  ASSIGN_OR_RETURN(const int64_t n, OptionNumber(t, MdtestReaderTool(), &cmd->notes));
  switch (t.spec->letter) {
    case 'b': o->branching = n; break;
    case 'z': o->depth = n; break;
    case 'i': o->reps = n; break;
    case 'N': o->shift = n; break;
    case 'W': o->stonewall_s = n; break;
    case 'f': o->first = n; break;
    case 'l': o->last = n; break;
    case 's': o->stride = n; break;
    case 0: break;  // --random-seed: -R's seed; -R is refused, so it has no effect
    default: return absl::InternalError(shown + ": an mdtest option without a rule");
  }
  return absl::OkStatus();
}

// One option as mdtest's reader found it.
absl::Status ApplyMdtestToken(const IorToken& t, MdtestOptions* o, CliCommand* cmd) {
  const bool flag = t.spec->arg == IorArgKind::kFlag;
  if (IsIorOtherBackendOption(*t.spec)) {
    cmd->notes.push_back(absl::StrFormat("%s: an option of another backend than POSIX; mdtest "
                                         "accepts it and it has no effect, as here",
                                         t.name));
    return absl::OkStatus();
  }
  for (const MdRefusal& r : kMdRefused) {
    if (!MdNamed(*t.spec, r.letter, r.long_name)) continue;
    if (flag && t.flag_value == 0) return absl::OkStatus();  // mdtest's default
    if (!flag && t.spec->type == 'd' && t.spec->letter != 'G') {
      ASSIGN_OR_RETURN(const int64_t n, OptionNumber(t, MdtestReaderTool(), &cmd->notes));
      if (n == 0) return absl::OkStatus();  // -B 0, -V 0, -p 0: mdtest's default
    }
    return CliBad(t.name, absl::StrFormat("refused: %s", r.why));
  }
  if (!flag) return ApplyMdtestValue(t, o, cmd);
  for (const MdFlagField& f : kMdFlags) {
    if (!MdNamed(*t.spec, f.letter, nullptr)) continue;
    int& v = o->*f.field;
    v = t.flag_value < 0 ? v + 1 : t.flag_value;
    return absl::OkStatus();
  }
  return absl::InternalError(t.name + ": an mdtest flag without a rule");
}

// Reads every word of `args`: Lockstep's long options into cmd->controller,
// mdtest's into `o` as option.c reads them; mdtest's own words are appended
// to *mdtest_words.
absl::Status ReadMdtestArgs(const std::vector<std::string>& args, const FileReader& read_file,
                            MdtestOptions* o, CliCommand* cmd,
                            std::vector<std::string>* mdtest_words) {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    ASSIGN_OR_RETURN(bool own, ParseControllerOption(args, &i, MdtestCommandSpec(),
                                                     &cmd->controller, read_file));
    if (own) continue;
    const size_t first = i;
    auto tokens = ReadOptionWord(args, &i, MdtestReaderTool(), &cmd->notes);
    if (!tokens.ok() && a.rfind("--", 0) == 0) return UnknownFlagError(a, MdtestCommandSpec());
    if (!tokens.ok()) return tokens.status();
    for (size_t j = first; j <= i; ++j) mdtest_words->push_back(args[j]);
    for (const IorToken& t : *tokens) {
      absl::Status applied = ApplyMdtestToken(t, o, cmd);
      if (!applied.ok() && t.after_glued_value) {
        // option.c reads the letters after a glued value as options too.
        return CliBad(a, absl::StrFormat("mdtest reads the letters after the value as options "
                                         "too, so it reads %s here; %s; separate the value "
                                         "(%s %s)",
                                         t.name, applied.message(), tokens->front().name,
                                         tokens->front().value));
      }
      RETURN_IF_ERROR(applied);
      if (t.after_glued_value) {
        cmd->notes.push_back(absl::StrFormat("%s: mdtest also reads the '%c' after the value as "
                                             "%s, and so does lockstep; write the value as a "
                                             "separate word to avoid it",
                                             a, t.spec->letter, t.name));
      }
    }
  }
  return absl::OkStatus();
}

// md_validate_tests() of mdtest.c, in its words, and the numbers option.c
// lets through that Lockstep cannot run.
absl::Status CheckMdtestAsMdtestDoes(MdtestOptions* o) {
  if (o->stonewall_s > 0 && o->branching > 1) {
    return CliBad(absl::StrFormat("-W %d -b %d", o->stonewall_s, o->branching),
                  absl::StrFormat("mdtest refuses it (\"Error, stone wall timer does only work "
                                  "with a branch factor <= 1 (current is %d) and with "
                                  "barriers\")",
                                  o->branching));
  }
  if (o->depth < 0) {
    return CliBad(absl::StrFormat("-z %d", o->depth),
                  "mdtest refuses it (\"depth must be greater than or equal to zero\")");
  }
  if (o->branching < 1 && o->depth > 0) {
    return CliBad(absl::StrFormat("-b %d", o->branching),
                  "mdtest refuses it (\"branch factor must be greater than or equal to zero\"): "
                  "give 1 or more with -z");
  }
  if (o->branching < 1) o->branching = 1;  // -z 0: the tree is its root, whatever -b says
  if (o->items > 0 && o->items_per_dir > 0 && !o->unique && o->items % o->items_per_dir != 0) {
    return CliBad("-n -I", "mdtest refuses it (\"items must be a multiple of items per "
                           "directory\")");
  }
  if (o->branching > static_cast<int64_t>(kMaxMdBranching)) {
    return CliBad(absl::StrFormat("-b %d", o->branching),
                  absl::StrFormat("out of range; use 1 to %u", kMaxMdBranching));
  }
  if (o->depth > static_cast<int64_t>(kMaxMdDepth)) {
    return CliBad(absl::StrFormat("-z %d", o->depth),
                  absl::StrFormat("out of range; use 0 to %u", kMaxMdDepth));
  }
  if (o->reps < 1 || o->reps > static_cast<int64_t>(kMaxRepetitions)) {
    return CliBad(absl::StrFormat("-i %d", o->reps),
                  absl::StrFormat("out of range; use 1 to %u (mdtest runs no iteration below 1)",
                                  kMaxRepetitions));
  }
  if (o->shift < 0 || o->shift > static_cast<int64_t>(kMaxMdNeighborShift)) {
    return CliBad(absl::StrFormat("-N %d", o->shift),
                  absl::StrFormat("out of range; use 0 to %u (mdtest names items after "
                                  "(rank + N) %% tasks, which a negative N makes negative)",
                                  kMaxMdNeighborShift));
  }
  if (o->stonewall_s < 0) o->stonewall_s = 0;  // mdtest: no stonewall unless > 0
  if (o->stonewall_s > static_cast<int64_t>(kMaxStonewallSeconds)) {
    return CliBad(absl::StrFormat("-W %d", o->stonewall_s),
                  absl::StrFormat("out of range; use 0 to %u", kMaxStonewallSeconds));
  }
  return absl::OkStatus();
}

// -f -l -s: mdtest runs once per task count from -f to -l by -s, and with
// -l 0 (its default) once with all tasks, whatever -f and -s say.
absl::Status CheckTaskRange(const MdtestOptions& o, uint32_t tasks, CliCommand* cmd) {
  if (o.last == 0) {
    if (o.first != 1 || o.stride != 1) {
      cmd->notes.push_back("-f/-s without -l: mdtest runs once with all tasks, and so does "
                           "lockstep");
    }
    return absl::OkStatus();
  }
  if (o.first > o.last) {
    return CliBad(absl::StrFormat("-f %d -l %d", o.first, o.last),
                  "mdtest refuses it (\"process number: first > last doesn't make sense\")");
  }
  if (o.last > tasks) {
    return CliBad(absl::StrFormat("-l %d", o.last),
                  absl::StrFormat("mdtest refuses it (\"process number: last > number of "
                                  "processes doesn't make sense\"): there are %u tasks",
                                  tasks));
  }
  if (o.first != o.last || o.last != tasks) {
    return CliBad(absl::StrFormat("-f %d -l %d", o.first, o.last),
                  absl::StrFormat("refused: mdtest runs once per task count from -f to -l (by "
                                  "-s); lockstep runs one task count, all %u tasks: run once "
                                  "per count with --tasks N",
                                  tasks));
  }
  return absl::OkStatus();
}

// The tree's size and the item options.
absl::Status CheckMdtestTree(const MdtestOptions& o) {
  // Tree size (mdtest): (b^(z+1)-1)/(b-1) directories.
  const uint64_t dirs =
      MdtestTreeDirs(static_cast<uint32_t>(o.branching), static_cast<uint32_t>(o.depth));
  if (dirs > kMaxMdtestTreeDirs) {
    return CliBad(absl::StrFormat("-b %u -z %u", o.branching, o.depth),
                  absl::StrFormat("a tree of %u directories; the limit is 10 million", dirs));
  }
  if (o.items_per_dir > 0 && o.items > 0) {
    return CliBad("-I", o.unique ? "give the number of items (-n) or items per directory (-I), "
                                   "not both (mdtest refuses both with -u)"
                                 : "with -n: mdtest's directory loops (-n / -I test directories) "
                                   "are not implemented; give -n or -I");
  }
  return absl::OkStatus();
}

// mdtest's defaults: no step named means all, with the rename step; neither
// -F nor -D means both. Then the read size against the written one.
absl::Status ResolveSteps(MdtestOptions* o) {
  if (!o->create && !o->stat && !o->read && !o->remove && !o->rename) {
    o->create = o->stat = o->read = o->remove = o->rename = true;
  }
  if (!o->files_only && !o->dirs_only) o->files_only = o->dirs_only = true;
  if (o->verify_read && !o->read) {
    return CliBad("-X", "mdtest refuses it (\"Verify read requires that the read test is "
                        "used\"): add -E");
  }
  if (o->verify_read && o->read_bytes <= 0) {
    return CliBad("-X", "mdtest refuses it (\"Verify read requires that read bytes is > 0\"): "
                        "add -e N");
  }
  if (o->create && o->read && o->read_bytes > o->write_bytes) {
    return CliBad(absl::StrFormat("-e %u", o->read_bytes),
                  absl::StrFormat("reads more than each file holds (-w %u); mdtest refuses it too",
                                  o->write_bytes));
  }
  return absl::OkStatus();
}

bool IsDirOp(v1::MdtestOp op) {
  return op == v1::MD_DIR_STAT || op == v1::MD_DIR_RENAME || op == v1::MD_DIR_REMOVE;
}

// One phase per mdtest step, in mdtest's order.
void AddMdtestPhases(const MdtestOptions& o, uint64_t items, Plan* plan) {
  PhasePlan base;
  base.kind = v1::MDTEST;
  base.dir = o.dir;
  base.file_name = "mdtest";
  base.Own<MdtestPlan>().md_branching = static_cast<uint32_t>(o.branching);
  base.Own<MdtestPlan>().md_depth = static_cast<uint32_t>(o.depth);
  base.Own<MdtestPlan>().md_items = items;
  base.Own<MdtestPlan>().md_unique_dir = o.unique;
  base.Own<MdtestPlan>().md_write_bytes = o.write_bytes;
  base.Own<MdtestPlan>().md_read_bytes = o.read_bytes;
  base.fsync = o.sync;  // -Y: syncfs after each phase, timed
  base.Own<MdtestPlan>().md_leaf_only = o.leaves_only;
  base.keep = true;  // the tree_remove sub-phase removes what the others made
  // -W: the creates stop at the wall; the later steps of the same kind work
  // on the count the create agreed on (mdtest: "all processes did the same number").
  auto add = [&](v1::MdtestOp op) {
    PhasePlan p = base;
    p.Own<MdtestPlan>().md_op = op;
    p.name = MdtestOpName(op);
    if (o.stonewall_s > 0 && (op == v1::MD_DIR_CREATE || op == v1::MD_FILE_CREATE)) {
      p.Own<MdtestPlan>().md_stonewall_seconds = static_cast<uint32_t>(o.stonewall_s);
    }
    if (o.stonewall_s > 0 && o.create && op != v1::MD_DIR_CREATE && op != v1::MD_FILE_CREATE &&
        op != v1::MD_TREE_CREATE && op != v1::MD_TREE_REMOVE) {
      p.stonewall_count_from =
          MdtestOpName(IsDirOp(op) ? v1::MD_DIR_CREATE : v1::MD_FILE_CREATE);
    }
    plan->phases.push_back(p);
  };
  if (o.create) add(v1::MD_TREE_CREATE);
  if (o.dirs_only) {
    if (o.create) add(v1::MD_DIR_CREATE);
    if (o.stat) add(v1::MD_DIR_STAT);
    if (o.rename && items > 1) add(v1::MD_DIR_RENAME);  // mdtest: only with 2+ items
    if (o.remove) add(v1::MD_DIR_REMOVE);
  }
  if (o.files_only) {
    if (o.create) add(v1::MD_FILE_CREATE);
    if (o.stat) add(v1::MD_FILE_STAT);
    if (o.read) {
      add(v1::MD_FILE_READ);
      plan->phases.back().verify = o.verify_read;  // -X: what -w wrote
    }
    if (o.remove) add(v1::MD_FILE_REMOVE);
  }
  if (o.remove) add(v1::MD_TREE_REMOVE);
}

// The tasks once placed on agents, and -N as applied to them.
struct MdtestPlacement {
  uint32_t agents = 1;
  uint32_t tasks_per_agent = 1;
  uint32_t shift = 0;
};

// mdtest shifts by the tasks of a node when ranks fill nodes in blocks and
// there are several nodes; here a node is a client agent.
absl::StatusOr<MdtestPlacement> ApplyNeighborShift(const MdtestOptions& o, CliCommand* cmd) {
  MdtestPlacement placed;
  placed.agents = cmd->controller.agents.empty()
                      ? static_cast<uint32_t>(cmd->controller.local_agents)
                      : static_cast<uint32_t>(cmd->controller.agents.size());
  const std::vector<PhasePlan>& phases = cmd->plan.phases;
  placed.tasks_per_agent = phases.empty() ? 1 : phases.front().tasks_per_agent.front();
  const uint32_t tasks = placed.agents * placed.tasks_per_agent;
  const uint64_t applied = placed.agents > 1 ? o.shift * placed.tasks_per_agent : o.shift;
  if (applied > kMaxMdNeighborShift) return CliBad(absl::StrFormat("-N %u", o.shift), "too large");
  if (o.unique && o.depth > 0 && applied % tasks != 0) {
    return CliBad(absl::StrFormat("-N %u", o.shift),
                  "with -u and a tree deeper than 0 (-z): mdtest 4.1 then looks for each item in "
                  "directories named after its own rank inside another rank's tree, which do not "
                  "exist; use -z 0, or -N without -u");
  }
  placed.shift = static_cast<uint32_t>(applied);
  for (PhasePlan& p : cmd->plan.phases) p.Own<MdtestPlan>().md_neighbor_shift = placed.shift;
  return placed;
}

// What mdtest's output needs to know (info->args is already filled).
void FillMdtestInfo(const MdtestOptions& o, uint64_t items, const MdtestPlacement& placed,
                    uint32_t iterations, MdtestCommandInfo* info) {
  info->path = o.dir;
  info->tasks = placed.agents * placed.tasks_per_agent;
  info->nodes = placed.agents;
  info->tasks_per_node = placed.tasks_per_agent;
  info->read_warning = o.read && o.read_bytes == 0;
  info->shift = placed.shift;
  info->files = o.files_only;
  info->dirs = o.dirs_only;
  info->items = items;
  info->iterations = iterations;
  info->print_rate = o.rate_and_time || !o.time_only;
  info->print_time = o.rate_and_time || o.time_only;
}

}  // namespace

absl::StatusOr<CliCommand> ParseMdtestCommandLine(const std::vector<std::string>& args,
                                                  const FileReader& read_file,
                                                  MdtestCommandInfo* info_out) {
  CliCommand cmd;
  cmd.plan.name = "mdtest";
  cmd.plan.source = "mdtest command line";
  MdtestCommandInfo info;
  MdtestOptions o;
  RETURN_IF_ERROR(ReadMdtestArgs(args, read_file, &o, &cmd, &info.args));
  RETURN_IF_ERROR(CheckMdtestAsMdtestDoes(&o));
  RETURN_IF_ERROR(CheckMdtestTree(o));
  const MdtestItems layout =
      MdtestItemLayout(o.items, o.items_per_dir, static_cast<uint32_t>(o.branching),
                       static_cast<uint32_t>(o.depth), o.leaves_only);
  RETURN_IF_ERROR(ResolveSteps(&o));
  AddMdtestPhases(o, layout.items, &cmd.plan);
  cmd.plan.repetitions = static_cast<uint32_t>(o.reps);
  RETURN_IF_ERROR(PlaceTasks(cmd.controller.total_tasks, "--tasks", &cmd));
  ASSIGN_OR_RETURN(const MdtestPlacement placed, ApplyNeighborShift(o, &cmd));
  RETURN_IF_ERROR(CheckTaskRange(o, placed.agents * placed.tasks_per_agent, &cmd));
  RETURN_IF_ERROR(SetPlanText(&cmd.plan, "mdtest"));
  FillMdtestInfo(o, layout.items, placed, cmd.plan.repetitions, &info);
  if (info_out != nullptr) *info_out = std::move(info);
  return cmd;
}

}  // namespace lockstep
