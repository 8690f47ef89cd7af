#include "controller/cli/ior_cli.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/names.h"
#include "common/sizes.h"
#include "common/status_macros.h"
#include "controller/cli/cli_common.h"
#include "controller/cli/command_specs.h"
#include "controller/plan/limits.h"

namespace lockstep {
namespace {

// IOR options we translate, and those we refuse with the reason.
constexpr const char* kIorValues = "abtsoiNDdOGQXA";

constexpr CliRefusal kIorRefused[] = {
    // MPI-IO and HDF5 only: no POSIX meaning.
    {'c', "collective I/O (-c) is MPI-IO's; lockstep's agents use POSIX"},
    {'H', "hints (-H) are MPI-IO's; lockstep's agents use POSIX"},
    {'U', "a hints file (-U) is MPI-IO's; lockstep's agents use POSIX"},
    {'V', "MPI file views (-V) are MPI-IO's; lockstep's agents use POSIX"},
    {'p', "preallocation (-p) is MPI-IO's in IOR; lockstep's agents use POSIX"},
    {'P', "a shared file pointer (-P) is MPI-IO's; lockstep's agents use POSIX"},
    {'S', "strided datatypes (-S) are MPI-IO's; lockstep's agents use POSIX"},
    {'I', "individual data sets (-I) are HDF5's; lockstep's agents use POSIX"},
    {'J', "alignment (-J) is HDF5's; lockstep's agents use POSIX"},
    {'n', "no-fill (-n) is HDF5's; lockstep's agents use POSIX"},
    // Not implemented yet.
    {'E', "use existing file (-E) is not implemented: lockstep removes stale files before a write"},
    {'u', "a unique directory per task (-u) is not implemented; use -F"},
    {'x', "single transfer attempt (-x) is not implemented: lockstep retries short transfers"},
    {'T', "maximum time (-T) is not implemented; use -D (stonewall)"},
    {'l', "data packet types (-l) are not implemented: lockstep writes its own checkable pattern"},
    {'f', "IOR scripts (-f) are not supported; use a lockstep plan (lockstep run)"},
    {'j', "the outlier threshold (-j) is not implemented"},
    {'K', "keeping files after a data error (-K) is not implemented: lockstep removes them"},
    {'M', "the memory hog (-M) is not implemented"},
};

// IOR's options as the command line gives them, before they become phases.
struct IorOptions {
  bool file_per_process = false;     // -F
  bool write = false;                // -w
  bool read = false;                 // -r
  bool check_write = false;          // -W
  bool check_read = false;           // -R
  bool fsync = false;                // -e
  bool fsync_per_transfer = false;   // -Y
  bool reorder_tasks = false;        // -C
  bool random_offsets = false;       // -z
  bool keep = false;                 // -k
  bool intra_barriers = false;       // -g
  bool direct = false;               // -B, --posix.odirect
  bool multi_file = false;           // -m
  bool wear_out = false;             // -O stoneWallingWearOut=1
  bool task_offset_given = false;    // -Q
  int random_reorder = 0;            // -Z, counted as IOR counts flags
  int64_t random_seed = 0;           // -X
  uint64_t block = 1 << 20;          // -b
  uint64_t xfer = 256 << 10;         // -t
  uint64_t segments = 1;             // -s
  uint64_t reps = 1;                 // -i
  uint64_t total_tasks = 0;          // -N; 0: not given
  uint64_t stonewall = 0;            // -D
  uint64_t delay = 0;                // -d
  uint64_t task_offset = 1;          // -Q
  std::string output = "testFile";   // -o
};

// IOR's flags that only switch an option on.
constexpr CliFlag<IorOptions> kIorFlags[] = {
    {'F', &IorOptions::file_per_process}, {'w', &IorOptions::write},
    {'r', &IorOptions::read},             {'W', &IorOptions::check_write},
    {'R', &IorOptions::check_read},       {'e', &IorOptions::fsync},
    {'Y', &IorOptions::fsync_per_transfer}, {'C', &IorOptions::reorder_tasks},
    {'z', &IorOptions::random_offsets},   {'k', &IorOptions::keep},
    {'g', &IorOptions::intra_barriers},   {'m', &IorOptions::multi_file},
    {'B', &IorOptions::direct},  // IOR's useO_DIRECT, as --posix.odirect
};

absl::StatusOr<uint64_t> Size(const std::string& opt, const std::string& v) {
  auto s = ParseSize(v);
  if (!s.ok()) return CliBad(opt + " " + v, std::string(s.status().message()));
  if (*s == 0) return CliBad(opt + " " + v, "must be greater than zero");
  return *s;
}

// One KEY=VALUE of -O.
absl::Status ApplyDashOItem(const std::string& item, IorOptions* o, CliCommand* cmd) {
  const size_t eq = item.find('=');
  const std::string key = item.substr(0, eq), val = item.substr(eq + 1);
  const std::string opt = "-O " + item;
  if (key == "summaryFormat") {
    const std::string v = absl::AsciiStrToUpper(val);
    if (v == "JSON") {
      cmd->summary_format = SummaryFormat::kJson;
    } else if (v == "CSV") {
      cmd->summary_format = SummaryFormat::kCsv;
    } else if (v == "DEFAULT" || v == "TEXT") {
      cmd->summary_format = SummaryFormat::kText;
    } else {
      return CliBad(opt, "summaryFormat is JSON, CSV or default");
    }
  } else if (key == "summaryFile") {
    if (val.empty()) return CliBad(opt, "needs a file name");
    cmd->summary_file = val;
  } else if (key == "stoneWallingWearOut") {
    ASSIGN_OR_RETURN(uint64_t n, CliUint(opt, val, 0, 1));
    o->wear_out = n == 1;
  } else if (key == "lustreStripeCount") {
    if (val != "0") {
      return CliBad(opt, "only 0 (the file system's default striping) is accepted; set "
                         "striping on the directory with lfs setstripe");
    }
    cmd->notes.push_back("-O lustreStripeCount=0: the file system's default striping");
  } else {
    return CliBad(opt, absl::StrFormat("unknown -O key '%s'; known: summaryFormat, summaryFile, "
                                       "stoneWallingWearOut, lustreStripeCount",
                                       key));
  }
  return absl::OkStatus();
}

// -O KEY=VALUE[,KEY=VALUE...]
absl::Status ApplyDashO(const std::string& kv, IorOptions* o, CliCommand* cmd) {
  for (absl::string_view item : absl::StrSplit(kv, ',')) {
    if (item.find('=') == absl::string_view::npos) return CliBad("-O " + kv, "expected key=value");
    RETURN_IF_ERROR(ApplyDashOItem(std::string(item), o, cmd));
  }
  return absl::OkStatus();
}

// An option of kIorValues with its value.
absl::Status ApplyIorValue(const ShortOption& so, IorOptions* o, CliCommand* cmd) {
  const std::string& opt = so.name;
  const std::string& v = so.value;
  switch (so.letter) {
    case 'a':
      if (v != "POSIX") {
        return CliBad(opt + " " + v, "only the POSIX API is supported (lockstep's agents use "
                                     "open/pwrite/pread)");
      }
      return absl::OkStatus();
    case 'b': { ASSIGN_OR_RETURN(o->block, Size(opt, v)); break; }
    case 't': { ASSIGN_OR_RETURN(o->xfer, Size(opt, v)); break; }
    case 's': { ASSIGN_OR_RETURN(o->segments, CliUint(opt, v, 1, kMaxSegments)); break; }
    case 'i': { ASSIGN_OR_RETURN(o->reps, CliUint(opt, v, 1, kMaxRepetitions)); break; }
    case 'N': { ASSIGN_OR_RETURN(o->total_tasks, CliUint(opt, v, 1, kMaxTotalTasks)); break; }
    case 'D': { ASSIGN_OR_RETURN(o->stonewall, CliUint(opt, v, 0, kMaxStonewallSeconds)); break; }
    case 'd': { ASSIGN_OR_RETURN(o->delay, CliUint(opt, v, 0, kMaxDelaySeconds)); break; }
    case 'G': { ASSIGN_OR_RETURN(cmd->plan.seed, CliUint(opt, v, 0, kMaxSeed)); break; }
    case 'A':
      if (!absl::SimpleAtoi(v, &cmd->reference_number)) {
        return CliBad(opt + " " + v, "expected a whole number");
      }
      break;
    case 'Q': {
      ASSIGN_OR_RETURN(o->task_offset, CliUint(opt, v, 1, kMaxReorderNodeOffset));
      o->task_offset_given = true;
      break;
    }
    case 'X':
      if (!absl::SimpleAtoi(v, &o->random_seed) || o->random_seed < INT32_MIN ||
          o->random_seed > INT32_MAX) {
        return CliBad(opt + " " + v, "expected a whole number (negative: -X plus the "
                                     "repetition)");
      }
      break;
    case 'o':
      if (v.empty() || v.back() == '/') {
        return CliBad(opt + " " + v, "needs a file path, not a directory");
      }
      o->output = v;
      break;
    case 'O': return ApplyDashO(v, o, cmd);
  }
  return absl::OkStatus();
}

// An option without a value: kIorFlags, or one of the few that do more.
absl::Status ApplyIorFlag(const ShortOption& so, IorOptions* o, CliCommand* cmd) {
  if (SetCliFlag<IorOptions>(kIorFlags, so.letter, o)) return absl::OkStatus();
  switch (so.letter) {
    case 'v': cmd->verbose = true; return absl::OkStatus();
    case 'Z': ++o->random_reorder; return absl::OkStatus();
    // -q, quit on error: lockstep always stops a phase at its first error.
    case 'q': return absl::OkStatus();
  }
  return CliBad(so.name, "unknown IOR option");
}

// Reads every word of `args`: Lockstep's long options into cmd->controller,
// IOR's into `o`; IOR's own words are appended to *ior_words.
absl::Status ReadIorArgs(const std::vector<std::string>& args, const FileReader& read_file,
                         IorOptions* o, CliCommand* cmd, std::vector<std::string>* ior_words) {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    const size_t first = i;
    ASSIGN_OR_RETURN(bool own, ParseControllerOption(args, &i, IorCommandSpec(), &cmd->controller,
                                                     read_file));
    if (own) continue;
    if (a == "--posix.odirect") {
      o->direct = true;
      ior_words->push_back(a);
      continue;
    }
    if (a.rfind("--", 0) == 0) {
      static constexpr absl::string_view kIorLongOptions[] = {"--posix.odirect"};
      return UnknownFlagError(a, IorCommandSpec(), kIorLongOptions);
    }
    ASSIGN_OR_RETURN(std::vector<ShortOption> options,
                     SplitShortOptions(args, &i, kIorValues, kIorRefused, "IOR"));
    for (size_t w = first; w <= i; ++w) ior_words->push_back(args[w]);  // with a separate value
    for (const ShortOption& so : options) {
      RETURN_IF_ERROR(so.has_value ? ApplyIorValue(so, o, cmd) : ApplyIorFlag(so, o, cmd));
    }
  }
  return absl::OkStatus();
}

// The options' consistency, each error naming the options at fault.
absl::Status CheckIorOptions(const IorOptions& o) {
  if (o.xfer % kTransferAlignBytes != 0) {
    return CliBad(absl::StrFormat("-t %u", o.xfer),
                  absl::StrFormat("must be a multiple of %u bytes", kTransferAlignBytes));
  }
  if (o.block % o.xfer != 0) {
    return CliBad(absl::StrFormat("-b %u", o.block),
                  absl::StrFormat("block size must be a multiple of the transfer size -t %u",
                                  o.xfer));
  }
  if (o.random_offsets && o.block == o.xfer && o.segments == 1) {
    return CliBad("-z", absl::StrFormat("random offsets with -b equal to -t (%s) and one segment: "
                                        "each task has a single transfer, nothing to shuffle",
                                        HumanBytes(o.block)));
  }
  if (o.wear_out && o.stonewall == 0) {
    return CliBad("-O stoneWallingWearOut=1", "needs -D SECONDS (wear-out follows the stonewall)");
  }
  if (o.direct && o.xfer % kDirectIoAlignBytes != 0) {
    return CliBad("-B/--posix.odirect",
                  absl::StrFormat("O_DIRECT needs -t a multiple of %u, got %u",
                                  kDirectIoAlignBytes, o.xfer));
  }
  if (o.check_write && !o.write) return CliBad("-W", "checks what the write phase wrote; add -w");
  if (o.random_reorder > 1) {
    return CliBad("-Z", "given twice: IOR then shuffles all tasks' files with one seed; that "
                        "mode is not implemented (give -Z once)");
  }
  if (o.random_reorder && o.reorder_tasks) {
    return CliBad("-Z", "with -C: IOR refuses both constant and random task reordering; choose "
                        "one");
  }
  if (o.random_reorder && o.random_offsets && !o.file_per_process) {
    return CliBad("-Z", "with -z on a shared file: IOR refuses random offsets with random task "
                        "reordering on a single shared file; add -F or drop one");
  }
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
  base.random_offsets = o.random_offsets;
  base.stonewall_seconds = static_cast<uint32_t>(o.stonewall);
  base.stonewall_wear_out = o.wear_out;
  base.delay_seconds = static_cast<uint32_t>(o.delay);
  base.intra_barriers = o.intra_barriers;
  base.multi_file = o.multi_file;
  return base;
}

// The write phase (-w) and the read phase (-r, or -R), IOR's defaults
// applied: neither given is both.
absl::Status AddIorPhases(IorOptions o, Plan* plan) {
  if (!o.write && !o.read && !o.check_write && !o.check_read) o.write = o.read = true;
  if (o.check_read) o.read = true;
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
  } else if (o.reorder_tasks) {
    return CliBad("-C", "reorders the tasks of the read phase; add -r");
  } else if (o.random_reorder) {
    return CliBad("-Z", "reorders the tasks of the read phase; add -r");
  }
  if (o.task_offset_given && o.random_reorder && o.task_offset != 1) {
    return CliBad(absl::StrFormat("-Q %u", o.task_offset),
                  "with -Z only IOR's default task offset 1 is implemented; drop -Q");
  }
  if (o.task_offset_given && !o.reorder_tasks && !o.random_reorder) {
    return CliBad("-Q", "is the task offset of -C and -Z; add -C or -Z");
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
  RETURN_IF_ERROR(CheckIorOptions(options));
  RETURN_IF_ERROR(AddIorPhases(options, &cmd.plan));
  cmd.plan.repetitions = static_cast<uint32_t>(options.reps);
  RETURN_IF_ERROR(PlaceTasks(static_cast<uint32_t>(options.total_tasks), "-N", &cmd));
  RETURN_IF_ERROR(CheckIorAgents(options, &cmd));
  cmd.plan.text = PlanToToml(cmd.plan);
  cmd.tool_command_line = absl::StrJoin(ior_words, " ");
  return cmd;
}

std::string PlanToToml(const Plan& plan) {
  std::string s = absl::StrFormat("# translated by lockstep\n[run]\nname = \"%s\"\nrepetitions = %u\nseed = %u\n",
                                  plan.name, plan.repetitions, plan.seed);
  for (const AgentPlan& a : plan.agents) {
    s += absl::StrFormat("\n[[agent]]\naddress = \"%s\"\nrole = \"%s\"\n", a.address,
                         RoleName(a.role));
  }
  for (const PhasePlan& p : plan.phases) {
    s += absl::StrFormat("\n[[phase]]\nname = \"%s\"\nkind = \"%s\"\ndir = \"%s\"\nfile_name = \"%s\"\n",
                         p.name, PhaseKindName(p.kind), p.dir, p.file_name);
    s += absl::StrFormat("tasks_per_agent = %u\n", p.tasks_per_agent.empty() ? 1 : p.tasks_per_agent[0]);
    auto b = [&](const char* key, bool v) {
      if (v) s += absl::StrFormat("%s = true\n", key);
    };
    auto u = [&](const char* key, uint64_t v) {
      if (v) s += absl::StrFormat("%s = %u\n", key, v);
    };
    if (p.kind == v1::WRITE || p.kind == v1::READ || p.kind == v1::REWRITE) {
      b("file_per_process", p.file_per_process);
      u("transfer_size", p.transfer_bytes);
      if (p.total_bytes > 0) {
        u("total_size", p.total_bytes);
      } else {
        u("block_size", p.block_bytes);
      }
      u("segments", p.segments);
      b("fsync", p.fsync);
      b("fsync_per_transfer", p.fsync_per_transfer);
      b("direct", p.direct);
      b("verify", p.verify);
      b("reorder_tasks", p.reorder_tasks);
      if (p.reorder_tasks && p.reorder_node_offset != 1) u("reorder_node_offset", p.reorder_node_offset);
      b("remove_files", p.remove_files);
      b("reorder_random", p.reorder_random);
      if (p.reorder_random && p.reorder_random_seed != 0) {
        s += absl::StrFormat("reorder_random_seed = %d\n", p.reorder_random_seed);
      }
      b("multi_file", p.multi_file);
      b("random_offsets", p.random_offsets);
      u("stonewall_seconds", p.stonewall_seconds);
      b("stonewall_wear_out", p.stonewall_wear_out);
      b("verify_after_write", p.verify_after_write);
      b("intra_barriers", p.intra_barriers);
    }
    b("keep", p.keep);
    u("delay_seconds", p.delay_seconds);
    if (p.kind == v1::SMALL_FILES) {
      u("small_files", p.small_files);
      u("small_file_min_size", p.small_file_min_bytes);
      u("small_file_max_size", p.small_file_max_bytes);
      u("small_files_per_dir", p.small_files_per_dir);
    }
    if (p.kind == v1::SEEKS) {
      u("transfer_size", p.transfer_bytes);
      u("block_size", p.block_bytes);
      u("segments", p.segments);
      b("fsync", p.fsync);
      b("fsync_per_transfer", p.fsync_per_transfer);
      b("direct", p.direct);
      b("verify", p.verify);
      u("seeks", p.seeks);
      s += absl::StrFormat("seek_rewrite_pct = %u\n", p.seek_rewrite_pct);  // 0 too
    }
    if (p.kind == v1::MDTEST) {
      s += absl::StrFormat("md_op = \"%s\"\n", MdtestOpName(p.md_op));
      u("md_branching", p.md_branching);
      u("md_depth", p.md_depth);
      s += absl::StrFormat("md_items = %u\n", p.md_items);  // 0 too: mdtest without -n
      b("md_unique_dir", p.md_unique_dir);
      u("md_write_size", p.md_write_bytes);
      u("md_read_size", p.md_read_bytes);
      b("md_leaf_only", p.md_leaf_only);
      u("md_neighbor_shift", p.md_neighbor_shift);
      u("md_stonewall_seconds", p.md_stonewall_seconds);
    }
    if (!p.stonewall_count_from.empty()) {
      s += absl::StrFormat("stonewall_count_from = \"%s\"\n", p.stonewall_count_from);
    }
  }
  return s;
}

}  // namespace lockstep
