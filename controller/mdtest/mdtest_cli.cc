#include "controller/mdtest/mdtest_cli.h"

#include "absl/strings/str_format.h"
#include "common/mdtest_layout.h"
#include "common/names.h"
#include "common/sizes.h"
#include "common/status_macros.h"
#include "controller/cli/cli_common.h"
#include "controller/cli/command_specs.h"
#include "controller/plan/limits.h"

namespace lockstep {
namespace {

constexpr const char* kMdValues = "nbzweidIaNW";

constexpr CliRefusal kMdRefused[] = {
    {'B', "no barriers (-B): lockstep always separates sub-phases with its start barrier"},
    {'c', "collective creates (-c) are not implemented"},
    {'k', "mknod (-k) is not implemented"},
    {'R', "random stat order (-R) is not implemented"},
    {'S', "shared file (-S) is not implemented"},
    {'s', "-s (stride between task counts) is not implemented; run once per task count"},
    {'x', "stonewall status file (-x) is not implemented"},
    {'y', "sync after each write (-y) is not implemented"},
    {'p', "pre-iteration delay (-p) is not implemented"},
    {'l', "-l (last task count) is not implemented; run once per task count with --tasks"},
    {'f', "-f (first task count) is not implemented; use --tasks"},
    {'G', "-G (data offset of the written pattern) is not implemented: lockstep writes its own "
          "pattern"},
    {'g', "-g (Lustre global directory layout) is not implemented"},
    {'v', "verbose output (-v) is not reproduced: mdtest prints its V-1.. lines, lockstep does "
          "not"},
    {'V', "verbose output (-V) is not reproduced"},
};

// mdtest's options as the command line gives them.
struct MdtestOptions {
  uint64_t items = 0;           // -n
  uint64_t items_per_dir = 0;   // -I
  uint64_t branching = 1;       // -b
  uint64_t depth = 0;           // -z
  uint64_t write_bytes = 0;     // -w
  uint64_t read_bytes = 0;      // -e
  uint64_t reps = 1;            // -i
  uint64_t shift = 0;           // -N
  uint64_t stonewall_s = 0;     // -W
  bool unique = false;          // -u
  bool files_only = false;      // -F
  bool dirs_only = false;       // -D
  bool create = false;          // -C
  bool stat = false;            // -T
  bool read = false;            // -E
  bool remove = false;          // -r
  bool rename = false;          // -U
  bool leaves_only = false;     // -L
  bool rate_and_time = false;   // -P
  bool time_only = false;       // -Z
  bool verify_read = false;     // -X
  bool sync = false;            // -Y
  std::string dir = "./out";    // -d; mdtest's default
};

// mdtest's flags that only switch an option on.
constexpr CliFlag<MdtestOptions> kMdFlags[] = {
    {'u', &MdtestOptions::unique},      {'F', &MdtestOptions::files_only},
    {'D', &MdtestOptions::dirs_only},   {'C', &MdtestOptions::create},
    {'T', &MdtestOptions::stat},        {'E', &MdtestOptions::read},
    {'r', &MdtestOptions::remove},      {'U', &MdtestOptions::rename},
    {'L', &MdtestOptions::leaves_only}, {'P', &MdtestOptions::rate_and_time},
    {'Z', &MdtestOptions::time_only},   {'X', &MdtestOptions::verify_read},
    {'Y', &MdtestOptions::sync},
};

// An option of kMdValues with its value.
absl::Status ApplyMdtestValue(const ShortOption& so, MdtestOptions* o) {
  const std::string& opt = so.name;
  const std::string& v = so.value;
  switch (so.letter) {
    case 'n': { ASSIGN_OR_RETURN(o->items, CliUint(opt, v, 0, kMaxMdItems)); break; }
    case 'I': { ASSIGN_OR_RETURN(o->items_per_dir, CliUint(opt, v, 0, kMaxMdItemsPerDir)); break; }
    case 'b': { ASSIGN_OR_RETURN(o->branching, CliUint(opt, v, 1, kMaxMdBranching)); break; }
    case 'z': { ASSIGN_OR_RETURN(o->depth, CliUint(opt, v, 0, kMaxMdDepth)); break; }
    case 'i': { ASSIGN_OR_RETURN(o->reps, CliUint(opt, v, 1, kMaxRepetitions)); break; }
    case 'N': { ASSIGN_OR_RETURN(o->shift, CliUint(opt, v, 0, kMaxMdNeighborShift)); break; }
    case 'W': { ASSIGN_OR_RETURN(o->stonewall_s, CliUint(opt, v, 0, kMaxStonewallSeconds)); break; }
    case 'w':
    case 'e': {
      auto sz = ParseSize(v);
      if (!sz.ok()) return CliBad(opt + " " + v, std::string(sz.status().message()));
      if (*sz > kMaxMdtestFileBytes) {
        return CliBad(opt + " " + v,
                      absl::StrFormat("at most %s per file", HumanBytes(kMaxMdtestFileBytes)));
      }
      (so.letter == 'w' ? o->write_bytes : o->read_bytes) = *sz;
      break;
    }
    case 'd':
      if (v.empty()) return CliBad(opt, "needs a directory");
      if (v.find('@') != std::string::npos) {
        return CliBad(opt + " " + v, "several directories (dir1@dir2) are not implemented");
      }
      o->dir = v;
      break;
    case 'a':
      if (v != "POSIX") return CliBad(opt + " " + v, "only the POSIX API is supported");
      break;
  }
  return absl::OkStatus();
}

// An option without a value: kMdFlags, or -t.
absl::Status ApplyMdtestFlag(const ShortOption& so, MdtestOptions* o) {
  if (SetCliFlag<MdtestOptions>(kMdFlags, so.letter, o)) return absl::OkStatus();
  // -t: mdtest 4.1 then starts a step's clock before its barrier for the
  // unique directory instead of after it. Lockstep has no such barrier
  // inside a step (the start instant comes after its barrier), so both
  // clocks start at the same point: nothing differs.
  if (so.letter == 't') return absl::OkStatus();
  return CliBad(so.name, "unknown mdtest option");
}

// Reads every word of `args`: Lockstep's long options into cmd->controller,
// mdtest's into `o`; mdtest's own words are appended to *mdtest_words.
absl::Status ReadMdtestArgs(const std::vector<std::string>& args, const FileReader& read_file,
                            MdtestOptions* o, CliCommand* cmd,
                            std::vector<std::string>* mdtest_words) {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    ASSIGN_OR_RETURN(bool own, ParseControllerOption(args, &i, MdtestCommandSpec(),
                                                     &cmd->controller, read_file));
    if (own) continue;
    if (a.rfind("--", 0) == 0) return UnknownFlagError(a, MdtestCommandSpec());
    const size_t first = i;
    ASSIGN_OR_RETURN(std::vector<ShortOption> options,
                     SplitShortOptions(args, &i, kMdValues, kMdRefused, "mdtest"));
    for (size_t j = first; j <= i; ++j) mdtest_words->push_back(args[j]);
    for (const ShortOption& so : options) {
      RETURN_IF_ERROR(so.has_value ? ApplyMdtestValue(so, o) : ApplyMdtestFlag(so, o));
    }
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
  base.md_branching = static_cast<uint32_t>(o.branching);
  base.md_depth = static_cast<uint32_t>(o.depth);
  base.md_items = items;
  base.md_unique_dir = o.unique;
  base.md_write_bytes = o.write_bytes;
  base.md_read_bytes = o.read_bytes;
  base.fsync = o.sync;  // -Y: syncfs after each phase, timed
  base.md_leaf_only = o.leaves_only;
  base.keep = true;  // the tree_remove sub-phase removes what the others made
  // -W: the creates stop at the wall; the later steps of the same kind work
  // on the count the create agreed on (mdtest: "all processes did the same number").
  auto add = [&](v1::MdtestOp op) {
    PhasePlan p = base;
    p.md_op = op;
    p.name = MdtestOpName(op);
    if (o.stonewall_s > 0 && (op == v1::MD_DIR_CREATE || op == v1::MD_FILE_CREATE)) {
      p.md_stonewall_seconds = static_cast<uint32_t>(o.stonewall_s);
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
  for (PhasePlan& p : cmd->plan.phases) p.md_neighbor_shift = placed.shift;
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
  RETURN_IF_ERROR(CheckMdtestTree(o));
  const MdtestItems layout =
      MdtestItemLayout(o.items, o.items_per_dir, static_cast<uint32_t>(o.branching),
                       static_cast<uint32_t>(o.depth), o.leaves_only);
  RETURN_IF_ERROR(ResolveSteps(&o));
  AddMdtestPhases(o, layout.items, &cmd.plan);
  cmd.plan.repetitions = static_cast<uint32_t>(o.reps);
  RETURN_IF_ERROR(PlaceTasks(cmd.controller.total_tasks, "--tasks", &cmd));
  ASSIGN_OR_RETURN(const MdtestPlacement placed, ApplyNeighborShift(o, &cmd));
  cmd.plan.text = PlanToToml(cmd.plan);
  FillMdtestInfo(o, layout.items, placed, cmd.plan.repetitions, &info);
  if (info_out != nullptr) *info_out = std::move(info);
  return cmd;
}

}  // namespace lockstep
