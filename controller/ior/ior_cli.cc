#include "controller/ior/ior_cli.h"

#include <algorithm>
#include <climits>
#include <optional>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/names.h"
#include "common/sizes.h"
#include "common/status_macros.h"
#include "controller/cli/cli_common.h"
#include "controller/cli/command_specs.h"
#include "controller/ior/ior_options.h"
#include "controller/plan/limits.h"

namespace lockstep {
namespace {

// IOR's options as the command line gives them, before they become phases.
// Flags are IOR's counters (-vv is 2, -F=0 is 0); numbers are IOR's ints.
struct IorOptions {
  int file_per_process = 0;     // -F
  int write = 0;                // -w
  int read = 0;                 // -r
  int check_write = 0;          // -W
  int check_read = 0;           // -R
  int fsync = 0;                // -e
  int fsync_per_transfer = 0;   // -Y
  int reorder_tasks = 0;        // -C
  int random_offsets = 0;       // -z
  int keep = 0;                 // -k
  int keep_with_error = 0;      // -K: what lockstep does anyway (a note)
  int intra_barriers = 0;       // -g
  int direct = 0;               // --posix.odirect
  int multi_file = 0;           // -m
  int random_reorder = 0;       // -Z
  int verbose = 0;              // -v
  bool wear_out = false;        // -O stoneWallingWearOut=1
  int64_t random_seed = 0;      // -X
  int64_t timestamp_seed = 0;   // -G
  int64_t block = 1 << 20;      // -b
  int64_t xfer = 256 << 10;     // -t
  int64_t segments = 1;         // -s
  int64_t reps = 1;             // -i
  int64_t total_tasks = -1;     // -N; -1: not given (IOR: all ranks)
  int64_t stonewall = 0;        // -D
  int64_t delay = 0;            // -d
  int64_t task_offset = 1;      // -Q
  std::string output = "testFile";   // -o
};

// IOR's flags that Lockstep honours, by the option that sets them.
struct IorFlagField {
  char letter;
  const char* long_name;
  int IorOptions::*field;
};
constexpr IorFlagField kIorFlags[] = {
    {'F', nullptr, &IorOptions::file_per_process}, {'w', nullptr, &IorOptions::write},
    {'r', nullptr, &IorOptions::read},             {'W', nullptr, &IorOptions::check_write},
    {'R', nullptr, &IorOptions::check_read},       {'e', nullptr, &IorOptions::fsync},
    {'Y', nullptr, &IorOptions::fsync_per_transfer}, {'C', nullptr, &IorOptions::reorder_tasks},
    {'z', nullptr, &IorOptions::random_offsets},   {'k', nullptr, &IorOptions::keep},
    {'g', nullptr, &IorOptions::intra_barriers},   {'m', nullptr, &IorOptions::multi_file},
    {'K', nullptr, &IorOptions::keep_with_error},
    {'Z', nullptr, &IorOptions::random_reorder},   {'v', nullptr, &IorOptions::verbose},
    {0, "posix.odirect", &IorOptions::direct},
};

// IOR 4.1's options Lockstep refuses, and why. A refused flag set to 0
// (-E=0, -O useExistingTestFile=0) is IOR's default and accepted.
struct IorRefusal {
  char letter;
  const char* long_name;
  const char* why;
};
constexpr IorRefusal kIorRefused[] = {
    {'c', "collective", "collective I/O is MPI-IO's; lockstep's agents use POSIX"},
    {'E', nullptr, "use existing file is not implemented: lockstep removes stale files before a "
                   "write"},
    {'u', nullptr, "a unique directory per task is not implemented; use -F"},
    {'x', nullptr, "single transfer attempt is not implemented: lockstep retries short transfers"},
    {'T', nullptr, "maximum time is not implemented; use -D (stonewall)"},
    {'l', "dataPacketType", "data packet types are not implemented: lockstep writes its own "
                            "checkable pattern"},
    {'f', nullptr, "IOR scripts are not supported; use a lockstep plan (lockstep run)"},
    {'j', nullptr, "the outlier threshold is not implemented"},
    {'M', nullptr, "the memory hog is not implemented"},
    {'y', nullptr, "dual mount points are not implemented"},
    {0, "randomPrefill", "prefilling a file for -z is not implemented"},
    {0, "random-offset-seed", "-z's seed is not implemented: lockstep shuffles with its own seed "
                              "(-G)"},
    {0, "warningAsErrors", "turning IOR's warnings into errors is not implemented"},
    {0, "dryRun", "a dry run of IOR is not implemented; use lockstep run --dry-run on the plan"},
    {0, "posix.rangelocks", "range locks are not implemented"},
    {0, "posix.lustre.stripecount", "set striping on the directory with lfs setstripe, or in a "
                                    "plan"},
    {0, "posix.lustre.stripesize", "set striping on the directory with lfs setstripe, or in a "
                                   "plan"},
    {0, "posix.lustre.startost", "set striping on the directory with lfs setstripe, or in a "
                                 "plan"},
    {0, "posix.lustre.ignorelocks", "Lustre's lock bypass is not implemented"},
    {0, "posix.lustre.pool", "set the pool on the directory with lfs setstripe, or in a plan"},
};

bool Named(const IorOptionSpec& s, char letter, const char* long_name) {
  return (letter != 0 && s.letter == letter) ||
         (long_name != nullptr && s.long_name != nullptr && absl::string_view(long_name) ==
                                                                s.long_name);
}

// The option's value as IOR reads its numbers (string_to_bytes, or atoi from
// -O), an int for IOR's 'd' options; a reading people may not expect is a note.
absl::StatusOr<int64_t> IorNumber(const IorToken& t, CliCommand* cmd) {
  return OptionNumber(t, IorReaderTool(), &cmd->notes);
}

// In [min, max]; the message names [shown_min, max] (IOR resets some values
// below shown_min to its default itself).
absl::StatusOr<int64_t> IorRanged(const IorToken& t, int64_t min, int64_t max, CliCommand* cmd,
                                  std::optional<int64_t> shown_min = std::nullopt) {
  ASSIGN_OR_RETURN(int64_t v, IorNumber(t, cmd));
  if (v < min || v > max) {
    return CliBad(t.name + " " + t.value,
                  absl::StrFormat("out of range; use %d to %d", shown_min.value_or(min), max));
  }
  return v;
}

absl::Status ApplyIorToken(const IorToken& t, IorOptions* o, CliCommand* cmd);

// One KEY=VALUE of -O, as DecodeDirective() reads it.
absl::Status ApplyDashOItem(const IorKeyValue& kv, IorOptions* o, CliCommand* cmd) {
  const std::string opt = absl::StrFormat("-O %s=%s", kv.key, kv.value);
  const IorDirective* d = FindIorDirective(kv.key);
  if (d == nullptr) {
    return CliBad(opt, absl::StrFormat("IOR refuses it (\"Unrecognized parameter \\\"%s\\\"\")",
                                       kv.key));
  }
  if (d->how == 'x') return CliBad(opt, absl::StrFormat("refused: %s", d->refused));
  const absl::string_view key = d->key;
  if (key == "summaryFormat") {
    const std::string v = absl::AsciiStrToUpper(kv.value);
    if (v == "JSON") {
      cmd->summary_format = SummaryFormat::kJson;
    } else if (v == "CSV") {
      cmd->summary_format = SummaryFormat::kCsv;
    } else if (v == "DEFAULT") {
      cmd->summary_format = SummaryFormat::kText;
    } else {
      return CliBad(opt, "IOR refuses it (\"Unknown summaryFormat\"): JSON, CSV or default");
    }
  } else if (key == "summaryFile") {
    cmd->summary_file = kv.value;
  } else if (key == "stoneWallingWearOut") {
    o->wear_out = IorAtoi(kv.value) > 0;
  } else if (key == "lustreStripeCount") {
    if (kv.value != "0") {
      return CliBad(opt, "only 0 (the file system's default striping) is accepted; set "
                         "striping on the directory with lfs setstripe");
    }
    cmd->notes.push_back("-O lustreStripeCount=0: the file system's default striping");
  } else {
    // A key that stands for an option: as that option, its value read as IOR
    // reads it there.
    IorToken t;
    for (const IorOptionSpec& s : IorOptionTable()) {
      if (Named(s, d->letter, d->long_name)) t.spec = &s;
    }
    if (t.spec == nullptr) return absl::InternalError(opt + ": no option in IOR's table");
    t.name = opt;
    t.word = opt;
    t.value = kv.value;
    t.read_with_atoi = d->how == 'a';
    if (t.spec->arg == IorArgKind::kFlag) t.flag_value = IorAtoi(kv.value);
    return ApplyIorToken(t, o, cmd);
  }
  return absl::OkStatus();
}

// An option with its value.
absl::Status ApplyIorValue(const IorToken& t, IorOptions* o, CliCommand* cmd) {
  const std::string& v = t.value;
  const std::string shown = t.name + " " + v;
  switch (t.spec->letter) {
    case 'a':
      if (!absl::EqualsIgnoreCase(v, "POSIX")) {
        return CliBad(shown, "only the POSIX API is supported (lockstep's agents use "
                             "open/pwrite/pread)");
      }
      return absl::OkStatus();
    case 'b': { ASSIGN_OR_RETURN(o->block, IorNumber(t, cmd)); break; }
    case 't': { ASSIGN_OR_RETURN(o->xfer, IorNumber(t, cmd)); break; }
    case 's': { ASSIGN_OR_RETURN(o->segments, IorNumber(t, cmd)); break; }
    case 'i': {
      ASSIGN_OR_RETURN(o->reps, IorRanged(t, INT_MIN, kMaxRepetitions, cmd, 1));
      if (o->reps <= 0) {
        cmd->notes.push_back("WARNING: too few test repetitions. Using value of 1. (IOR's reset)");
        o->reps = 1;
      }
      break;
    }
    case 'N': {
      ASSIGN_OR_RETURN(o->total_tasks, IorRanged(t, -1, kMaxTotalTasks, cmd, 1));
      if (o->total_tasks == 0) {
        return CliBad(shown, "IOR refuses it (\"too few tasks for testing\")");
      }
      break;
    }
    case 'D': { ASSIGN_OR_RETURN(o->stonewall, IorRanged(t, 0, kMaxStonewallSeconds, cmd)); break; }
    case 'd': {
      ASSIGN_OR_RETURN(o->delay, IorRanged(t, INT_MIN, kMaxDelaySeconds, cmd, 0));
      if (o->delay < 0) {
        cmd->notes.push_back("WARNING: inter-test delay must be nonnegative value. Using value "
                             "of 0. (IOR's reset)");
        o->delay = 0;
      }
      break;
    }
    case 'G': { ASSIGN_OR_RETURN(o->timestamp_seed, IorRanged(t, 0, INT_MAX, cmd)); break; }
    case 'A': {
      ASSIGN_OR_RETURN(int64_t n, IorNumber(t, cmd));
      cmd->reference_number = static_cast<int32_t>(n);
      break;
    }
    case 'Q': { ASSIGN_OR_RETURN(o->task_offset, IorRanged(t, 1, kMaxReorderNodeOffset, cmd)); break; }
    case 'X': { ASSIGN_OR_RETURN(o->random_seed, IorNumber(t, cmd)); break; }
    case 'o':
      if (v.empty() || v.back() == '/') return CliBad(shown, "needs a file path, not a directory");
      o->output = v;
      break;
    case 'O': {
      ASSIGN_OR_RETURN(std::vector<IorKeyValue> items, SplitIorDirectives(v));
      for (const IorKeyValue& kv : items) RETURN_IF_ERROR(ApplyDashOItem(kv, o, cmd));
      break;
    }
    default:
      return absl::InternalError(shown + ": an IOR value option without a rule");
  }
  return absl::OkStatus();
}

absl::Status ApplyIorToken(const IorToken& t, IorOptions* o, CliCommand* cmd) {
  const bool flag = t.spec->arg == IorArgKind::kFlag;
  if (IsIorOtherBackendOption(*t.spec)) {
    cmd->notes.push_back(absl::StrFormat("%s: an option of another IOR backend than POSIX; IOR "
                                         "accepts it and it has no effect, as here",
                                         t.name));
    return absl::OkStatus();
  }
  for (const IorRefusal& r : kIorRefused) {
    if (!Named(*t.spec, r.letter, r.long_name)) continue;
    if (flag && t.flag_value == 0) return absl::OkStatus();  // IOR's default
    return CliBad(t.name, absl::StrFormat("refused: %s", r.why));
  }
  if (!flag) return ApplyIorValue(t, o, cmd);
  for (const IorFlagField& f : kIorFlags) {
    if (!Named(*t.spec, f.letter, f.long_name)) continue;
    int& v = o->*f.field;
    v = t.flag_value < 0 ? v + 1 : t.flag_value;
    return absl::OkStatus();
  }
  return absl::InternalError(t.name + ": an IOR flag without a rule");
}

// The options of one word, with what IOR's reader does to the letters
// after a value: a flag there is set (and said so), a value option there
// would take the same value, which no one means.
absl::Status ApplyIorWord(const std::vector<IorToken>& tokens, IorOptions* o, CliCommand* cmd) {
  for (const IorToken& t : tokens) {
    if (t.after_glued_value && t.spec->arg == IorArgKind::kValue) {
      return CliBad(t.word, absl::StrFormat("IOR's parser reads the letters after the value as "
                                            "options too, so IOR would take \"%s\" as %s's value "
                                            "as well; separate the value (%s %s)",
                                            t.value, t.name, tokens.front().name,
                                            tokens.front().value));
    }
    if (t.after_glued_value) {
      cmd->notes.push_back(absl::StrFormat(
          "%s: IOR also reads the '%c' after the value as %s (set to %d), and so does lockstep; "
          "write the value as a separate word to avoid it",
          t.word, t.spec->letter, t.name, t.flag_value));
    }
    RETURN_IF_ERROR(ApplyIorToken(t, o, cmd));
  }
  return absl::OkStatus();
}

// Reads every word of `args`: Lockstep's long options into cmd->controller,
// IOR's into `o` as IOR's own parser reads them; IOR's words are appended
// to *ior_words.
absl::Status ReadIorArgs(const std::vector<std::string>& args, const FileReader& read_file,
                         IorOptions* o, CliCommand* cmd, std::vector<std::string>* ior_words) {
  for (size_t i = 0; i < args.size(); ++i) {
    const size_t first = i;
    ASSIGN_OR_RETURN(bool own, ParseControllerOption(args, &i, IorCommandSpec(), &cmd->controller,
                                                     read_file));
    if (own) continue;
    auto tokens = ReadIorWord(args, &i, &cmd->notes);
    if (!tokens.ok() && args[first].rfind("--", 0) == 0) {
      static constexpr absl::string_view kIorLongOptions[] = {"--posix.odirect"};
      return UnknownFlagError(args[first], IorCommandSpec(), kIorLongOptions);
    }
    if (!tokens.ok()) return tokens.status();
    for (size_t w = first; w <= i; ++w) ior_words->push_back(args[w]);  // with a separate value
    RETURN_IF_ERROR(ApplyIorWord(*tokens, o, cmd));
  }
  return absl::OkStatus();
}

// IOR's own refusals (ValidateTests of src/ior.c), in its words.
absl::Status CheckIorAsIorDoes(const IorOptions& o) {
  if (o.read != 1 && o.write != 1 && o.check_read != 1 && o.check_write != 1) {
    return CliBad("-w/-r/-W/-R", "IOR refuses it (\"test must write, read, or check read/write "
                                 "file\"): a flag given twice is 2 to IOR; give each once");
  }
  if (o.timestamp_seed == 0 && o.write != 1 && o.check_read == 1) {
    return CliBad("-R", "IOR refuses it (\"using readCheck only requires to write a "
                        "timeStampSignature -- use -G\"): add -G N, the -G the write used");
  }
  if (o.segments < 0) return CliBad("-s", "IOR refuses it (\"segment count must be positive value\")");
  if (o.block % kTransferAlignBytes != 0) {
    return CliBad(absl::StrFormat("-b %d", o.block),
                  "IOR refuses it (\"block size must be a multiple of access size\": 8 bytes)");
  }
  if (o.block < 0) return CliBad(absl::StrFormat("-b %d", o.block), "IOR refuses it (\"block size must be non-negative integer\")");
  if (o.xfer % kTransferAlignBytes != 0) {
    return CliBad(absl::StrFormat("-t %d", o.xfer),
                  "IOR refuses it (\"transfer size must be a multiple of access size\": 8 bytes)");
  }
  if (o.xfer < 0) return CliBad(absl::StrFormat("-t %d", o.xfer), "IOR refuses it (\"transfer size must be non-negative integer\")");
  if (o.xfer == 0) return CliBad("-t 0", "IOR refuses it (\"test will not complete with zero transfer size\")");
  if (o.block % o.xfer != 0) {
    return CliBad(absl::StrFormat("-b %d", o.block),
                  absl::StrFormat("IOR refuses it (\"block size must be a multiple of transfer "
                                  "size\": -t %d)", o.xfer));
  }
  if (o.block < o.xfer) {
    return CliBad(absl::StrFormat("-b %d", o.block),
                  absl::StrFormat("IOR refuses it (\"block size must not be smaller than "
                                  "transfer size\": -t %d)", o.xfer));
  }
  if (o.random_offsets == 1 && o.block == o.xfer) {
    return CliBad("-z", "IOR refuses it (\"IOR will randomize access within a block and repeats "
                        "the same pattern for all segments, therefore choose blocksize > "
                        "transferSize\")");
  }
  if (o.stonewall == 0 && o.wear_out) {
    return CliBad("-O stoneWallingWearOut=1", "IOR refuses it (\"the stoneWallingWearOut is only "
                                              "sensible when setting a stonewall deadline with "
                                              "-D\")");
  }
  if (o.reorder_tasks == 1 && o.random_reorder == 1) {
    return CliBad("-C -Z", "IOR refuses it (\"Both Constant and Random task re-ordering "
                           "specified. Choose one and resubmit\")");
  }
  if (o.random_offsets && o.random_reorder && !o.file_per_process) {
    return CliBad("-z -Z", "IOR refuses it (\"random offset and random reorder tasks specified "
                           "with single-shared-file. Choose one and resubmit\")");
  }
  if (o.random_offsets && o.reorder_tasks && !o.file_per_process) {
    return CliBad("-z -C", "IOR refuses it (\"random offset and constant reorder tasks specified "
                           "with single-shared-file. Choose one and resubmit\")");
  }
  if (o.random_offsets && o.check_read) {
    return CliBad("-z -R", "IOR refuses it (\"random offset with read check option requires to "
                           "set the random seed\", --random-offset-seed, which lockstep does not "
                           "implement)");
  }
  return absl::OkStatus();
}

// What IOR does that Lockstep does not, refused by name.
absl::Status CheckIorOptions(const IorOptions& o) {
  RETURN_IF_ERROR(CheckIorAsIorDoes(o));
  if (o.segments == 0) return CliBad("-s 0", "no transfers at all; give 1 or more segments");
  if (o.segments > static_cast<int64_t>(kMaxSegments)) {
    return CliBad(absl::StrFormat("-s %d", o.segments),
                  absl::StrFormat("out of range; use 1 to %u", kMaxSegments));
  }
  if (o.block == 0) return CliBad("-b 0", "must be greater than zero");
  if (o.random_offsets > 1 && o.write) {
    // The one case of -z -z Lockstep does not run: IOR's own write dies.
    return CliBad("-z -z -w", "refused: IOR 4.1 draws the blocks of -z -z (\"random "
                              "(potentially overlapping)\") from the size of the file it read, "
                              "which a write has not (0), divides by it and dies (SIGFPE, exit "
                              "136, an empty file left); write with -z once (each transfer once, "
                              "shuffled), then read with -z -z");
  }
  if (o.random_reorder > 1) {
    return CliBad("-Z", "given twice: IOR then shuffles all tasks' files with one seed; that "
                        "mode is not implemented (give -Z once)");
  }
  if (o.reorder_tasks > 1) {
    return CliBad("-C", "given twice: IOR then reads with the offset but prints no task offset "
                        "(its checks want 1); give -C once");
  }
  if (o.verbose > 1) {
    return CliBad("-v", absl::StrFormat("given %d times: IOR's verbosity %d lines are not "
                                        "reproduced; give -v once",
                                        o.verbose, o.verbose));
  }
  if (o.direct && o.xfer % kDirectIoAlignBytes != 0) {
    return CliBad("--posix.odirect",
                  absl::StrFormat("O_DIRECT needs -t a multiple of %u, got %d",
                                  kDirectIoAlignBytes, o.xfer));
  }
  if (o.check_write && !o.write) return CliBad("-W", "checks what the write phase wrote; add -w");
  return absl::OkStatus();
}

// What the write and read phases share.
PhasePlan IorBasePhase(const IorOptions& o, const std::string& dir, const std::string& file) {
  PhasePlan base;
  base.dir = dir;
  base.file_name = file;
  base.file_per_process = o.file_per_process;
  base.transfer_bytes = o.xfer;
  base.block_bytes = o.block;
  base.segments = o.segments;
  base.direct = o.direct;
  base.keep = o.keep;
  base.random_offsets = o.random_offsets == 1;
  base.random_blocks = o.random_offsets > 1;  // -z -z: reads only (CheckIorOptions)
  base.stonewall_seconds = static_cast<uint32_t>(o.stonewall);
  base.stonewall_wear_out = o.wear_out;
  base.delay_seconds = static_cast<uint32_t>(o.delay);
  base.intra_barriers = o.intra_barriers;
  base.multi_file = o.multi_file;
  return base;
}

// The write phase (-w) and the read phase (-r, or -R); IOR's defaults
// (neither given is both) are applied by the caller.
absl::Status AddIorPhases(IorOptions o, CliCommand* cmd) {
  Plan* plan = &cmd->plan;
  if (o.check_read) o.read = 1;
  if (o.keep_with_error) {
    cmd->notes.push_back("-K: lockstep keeps the files of a failed verification (-R, -W) with or "
                         "without it, and names them");
  }
  std::string dir, file;
  SplitOutputPath(o.output, &dir, &file);
  if (file.empty()) return CliBad("-o " + o.output, "needs a file name");
  const PhasePlan base = IorBasePhase(o, dir, file);
  if (o.write) {
    PhasePlan p = base;
    p.name = "write";
    p.kind = v1::WRITE;
    p.fsync = o.fsync;
    p.fsync_per_transfer = o.fsync_per_transfer;
    p.verify_after_write = o.check_write;
    plan->phases.push_back(p);
  }
  if (o.read) {
    PhasePlan p = base;
    p.name = "read";
    p.kind = v1::READ;
    p.verify = o.check_read;
    p.reorder_tasks = o.reorder_tasks;
    p.reorder_random = o.random_reorder > 0;
    p.reorder_random_seed = static_cast<int32_t>(o.random_seed);
    p.reorder_node_offset = static_cast<uint32_t>(o.task_offset);
    // IOR removes what a read-only test read unless -k.
    p.remove_files = !o.write && !o.keep;
    plan->phases.push_back(p);
  } else if (o.reorder_tasks || o.random_reorder) {
    // IOR accepts them on a write-only test and writes the same files.
    cmd->notes.push_back(absl::StrFormat(
        "%s on a test without a read: no effect on the files written, as in IOR (shown in the "
        "Options block and the summary's reord columns, as IOR shows it)",
        o.reorder_tasks ? "-C" : "-Z"));
  }
  return absl::OkStatus();
}

// What the number of agents means for -C, -g and wear-out.
absl::Status CheckIorAgents(const IorOptions& o, CliCommand* cmd) {
  const size_t agents =
      cmd->controller.agents.empty() ? cmd->controller.local_agents : cmd->controller.agents.size();
  if (o.reorder_tasks && agents < 2) {
    cmd->notes.push_back("-C with one agent: every task reads its own node's data, as IOR on one "
                         "node; use two or more agents to defeat the client cache");
  }
  if (o.intra_barriers && agents > 1) {
    return CliBad("-g", absl::StrFormat("intra-phase barriers span one agent's tasks only, and "
                                        "there are %u agents; use --local 1 or one --agents entry",
                                        agents));
  }
  if (o.wear_out && agents > 1) {
    cmd->notes.push_back(
        "-O stoneWallingWearOut=1: wear-out evens out the tasks of each agent (the most pairs "
        "of that agent's tasks), not across agents");
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<CliCommand> ParseIorCommandLine(const std::vector<std::string>& args,
                                               const FileReader& read_file) {
  CliCommand cmd;
  cmd.plan.name = "ior";
  cmd.plan.source = "ior command line";
  IorOptions options;
  std::vector<std::string> ior_words = {"ior"};  // IOR's own argv, for its "Command line"
  RETURN_IF_ERROR(ReadIorArgs(args, read_file, &options, &cmd, &ior_words));
  // CheckRunSettings() of IOR: no action given is write and read.
  if (!options.write && !options.read && !options.check_write && !options.check_read) {
    options.write = options.read = 1;
  }
  RETURN_IF_ERROR(CheckIorOptions(options));
  RETURN_IF_ERROR(AddIorPhases(options, &cmd));
  cmd.plan.repetitions = static_cast<uint32_t>(options.reps);
  if (options.timestamp_seed != 0) cmd.plan.seed = static_cast<uint64_t>(options.timestamp_seed);
  cmd.verbose = options.verbose > 0;
  cmd.reorder_constant = options.reorder_tasks > 0;
  cmd.reorder_random = options.random_reorder > 0;
  cmd.reorder_random_seed = static_cast<int32_t>(options.random_seed);
  cmd.task_offset = static_cast<uint32_t>(options.task_offset);
  RETURN_IF_ERROR(PlaceTasks(static_cast<uint32_t>(std::max<int64_t>(options.total_tasks, 0)),
                             "-N", &cmd));
  RETURN_IF_ERROR(CheckIorAgents(options, &cmd));
  RETURN_IF_ERROR(SetPlanText(&cmd.plan, "ior"));
  cmd.tool_command_line = absl::StrJoin(ior_words, " ");
  return cmd;
}

}  // namespace lockstep
