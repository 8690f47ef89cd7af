#include "controller/cli/mdtest_cli.h"

#include "absl/strings/str_format.h"
#include "common/mdtest_layout.h"
#include "common/names.h"
#include "common/sizes.h"
#include "common/status_macros.h"
#include "controller/cli/cli_common.h"
#include "controller/cli/command_specs.h"

namespace lockstep {
namespace {

constexpr const char* kMdValues = "nbzweidIaN";

constexpr CliRefusal kMdRefused[] = {
    {'B', "no barriers (-B): lockstep always separates sub-phases with its start barrier"},
    {'c', "collective creates (-c) are not implemented"},
    {'k', "mknod (-k) is not implemented"},
    {'R', "random stat order (-R) is not implemented"},
    {'S', "shared file (-S) is not implemented"},
    {'s', "-s (stride between task counts) is not implemented; run once per task count"},
    {'x', "stonewall status file (-x) is not implemented"},
    {'W', "stonewall (-W) is not implemented for mdtest"},
    {'y', "sync after each write (-y) is not implemented"},
    {'Y', "sync (-Y) is not implemented"},
    {'p', "pre-iteration delay (-p) is not implemented"},
    {'l', "-l (last task count) is not implemented; run once per task count with --tasks"},
    {'f', "-f (first task count) is not implemented; use --tasks"},
    {'G', "-G (data offset of the written pattern) is not implemented: lockstep writes its own "
          "pattern"},
    {'X', "-X (verify read) is not implemented"},
    {'g', "-g (Lustre global directory layout) is not implemented"},
    {'v', "verbose output (-v) is not reproduced: mdtest prints its V-1.. lines, lockstep does "
          "not"},
    {'V', "verbose output (-V) is not reproduced"},
};

}  // namespace

absl::StatusOr<CliCommand> ParseMdtestCommandLine(const std::vector<std::string>& args,
                                                  const FileReader& read_file,
                                                  MdtestCommandInfo* info_out) {
  CliCommand cmd;
  Plan& plan = cmd.plan;
  plan.name = "mdtest";
  plan.source = "mdtest command line";
  MdtestCommandInfo info;
  uint64_t items = 0, items_per_dir = 0, branching = 1, depth = 0, write_bytes = 0,
          read_bytes = 0, reps = 1, shift = 0;
  bool unique = false, files_only = false, dirs_only = false, create = false, stat = false,
       read = false, remove = false, rename = false, leaves_only = false, rate_and_time = false,
       time_only = false;
  std::string dir = "./out";  // mdtest's default -d
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    ASSIGN_OR_RETURN(bool own, ParseControllerOption(args, &i, MdtestCommandSpec(),
                                                     &cmd.controller, read_file));
    if (own) continue;
    if (a.rfind("--", 0) == 0) return UnknownFlagError(a, MdtestCommandSpec());
    const size_t first = i;
    ASSIGN_OR_RETURN(std::vector<ShortOption> options,
                     SplitShortOptions(args, &i, kMdValues, kMdRefused, "mdtest"));
    for (size_t j = first; j <= i; ++j) info.args.push_back(args[j]);
    for (const ShortOption& so : options) {
      const char o = so.letter;
      const std::string& opt = so.name;
      if (so.has_value) {
        const std::string& v = so.value;
        switch (o) {
          case 'n': { ASSIGN_OR_RETURN(items, CliUint(opt, v, 0, uint64_t{1} << 40)); break; }
          case 'I': { ASSIGN_OR_RETURN(items_per_dir, CliUint(opt, v, 0, uint64_t{1} << 32)); break; }
          case 'b': { ASSIGN_OR_RETURN(branching, CliUint(opt, v, 1, 1'000'000)); break; }
          case 'z': { ASSIGN_OR_RETURN(depth, CliUint(opt, v, 0, 64)); break; }
          case 'i': { ASSIGN_OR_RETURN(reps, CliUint(opt, v, 1, 10000)); break; }
          case 'N': { ASSIGN_OR_RETURN(shift, CliUint(opt, v, 0, 1u << 24)); break; }
          case 'w':
          case 'e': {
            auto sz = ParseSize(v);
            if (!sz.ok()) return CliBad(opt + " " + v, std::string(sz.status().message()));
            if (*sz > (64u << 20)) return CliBad(opt + " " + v, "at most 64 MiB per file");
            (o == 'w' ? write_bytes : read_bytes) = *sz;
            break;
          }
          case 'd':
            if (v.empty()) return CliBad(opt, "needs a directory");
            if (v.find('@') != std::string::npos) {
              return CliBad(opt + " " + v, "several directories (dir1@dir2) are not implemented");
            }
            dir = v;
            break;
          case 'a':
            if (v != "POSIX") return CliBad(opt + " " + v, "only the POSIX API is supported");
            break;
        }
        continue;
      }
      switch (o) {
        case 'u': unique = true; break;
        case 'F': files_only = true; break;
        case 'D': dirs_only = true; break;
        case 'C': create = true; break;
        case 'T': stat = true; break;
        case 'E': read = true; break;
        case 'r': remove = true; break;
        case 'U': rename = true; break;
        case 'L': leaves_only = true; break;
        case 'P': rate_and_time = true; break;
        case 'Z': time_only = true; break;
        // -t: mdtest 4.1 then starts a step's clock before its barrier for
        // the unique directory instead of after it. Lockstep has no such
        // barrier inside a step (the start instant comes after its barrier),
        // so both clocks start at the same point: nothing differs.
        case 't': break;
        default: return CliBad(opt, "unknown mdtest option");
      }
    }
  }
  // Tree size (mdtest): (b^(z+1)-1)/(b-1) directories.
  const uint64_t dirs = MdtestTreeDirs(static_cast<uint32_t>(branching), static_cast<uint32_t>(depth));
  if (dirs > 10'000'000) {
    return CliBad(absl::StrFormat("-b %u -z %u", branching, depth),
                  absl::StrFormat("a tree of %u directories; the limit is 10 million", dirs));
  }
  if (items_per_dir > 0 && items > 0) {
    return CliBad("-I", unique ? "give the number of items (-n) or items per directory (-I), not "
                                 "both (mdtest refuses both with -u)"
                               : "with -n: mdtest's directory loops (-n / -I test directories) "
                                 "are not implemented; give -n or -I");
  }
  const MdtestItems layout =
      MdtestItemLayout(items, items_per_dir, static_cast<uint32_t>(branching),
                       static_cast<uint32_t>(depth), leaves_only);
  // mdtest's defaults: no step named means all, with the rename step.
  if (!create && !stat && !read && !remove && !rename) create = stat = read = remove = rename = true;
  if (!files_only && !dirs_only) files_only = dirs_only = true;
  if (create && read && read_bytes > write_bytes) {
    return CliBad(absl::StrFormat("-e %u", read_bytes),
                  absl::StrFormat("reads more than each file holds (-w %u); mdtest refuses it too",
                                  write_bytes));
  }

  PhasePlan base;
  base.kind = v1::MDTEST;
  base.dir = dir;
  base.file_name = "mdtest";
  base.md_branching = static_cast<uint32_t>(branching);
  base.md_depth = static_cast<uint32_t>(depth);
  base.md_items = layout.items;
  base.md_unique_dir = unique;
  base.md_write_bytes = write_bytes;
  base.md_read_bytes = read_bytes;
  base.md_leaf_only = leaves_only;
  base.keep = true;  // the tree_remove sub-phase removes what the others made
  auto add = [&](v1::MdtestOp op) {
    PhasePlan p = base;
    p.md_op = op;
    p.name = MdtestOpName(op);
    plan.phases.push_back(p);
  };
  if (create) add(v1::MD_TREE_CREATE);
  if (dirs_only) {
    if (create) add(v1::MD_DIR_CREATE);
    if (stat) add(v1::MD_DIR_STAT);
    if (rename && layout.items > 1) add(v1::MD_DIR_RENAME);  // mdtest: only with 2+ items
    if (remove) add(v1::MD_DIR_REMOVE);
  }
  if (files_only) {
    if (create) add(v1::MD_FILE_CREATE);
    if (stat) add(v1::MD_FILE_STAT);
    if (read) add(v1::MD_FILE_READ);
    if (remove) add(v1::MD_FILE_REMOVE);
  }
  if (remove) add(v1::MD_TREE_REMOVE);
  plan.repetitions = static_cast<uint32_t>(reps);
  RETURN_IF_ERROR(PlaceTasks(cmd.controller.total_tasks, "--tasks", &cmd));
  const uint32_t agents = cmd.controller.agents.empty()
                              ? static_cast<uint32_t>(cmd.controller.local_agents)
                              : static_cast<uint32_t>(cmd.controller.agents.size());
  const uint32_t tpa = plan.phases.empty() ? 1 : plan.phases.front().tasks_per_agent.front();
  const uint32_t tasks = agents * tpa;
  // mdtest shifts by the tasks of a node when ranks fill nodes in blocks and
  // there are several nodes; here a node is a client agent.
  const uint64_t applied = agents > 1 ? shift * tpa : shift;
  if (applied > (1u << 24)) return CliBad(absl::StrFormat("-N %u", shift), "too large");
  if (unique && depth > 0 && applied % tasks != 0) {
    return CliBad(absl::StrFormat("-N %u", shift),
                  "with -u and a tree deeper than 0 (-z): mdtest 4.1 then looks for each item in "
                  "directories named after its own rank inside another rank's tree, which do not "
                  "exist; use -z 0, or -N without -u");
  }
  for (PhasePlan& p : plan.phases) p.md_neighbor_shift = static_cast<uint32_t>(applied);
  plan.text = PlanToToml(plan);

  info.path = dir;
  info.tasks = tasks;
  info.nodes = agents;
  info.tasks_per_node = tpa;
  info.read_warning = read && read_bytes == 0;
  info.shift = static_cast<uint32_t>(applied);
  info.files = files_only;
  info.dirs = dirs_only;
  info.items = layout.items;
  info.iterations = plan.repetitions;
  info.print_rate = rate_and_time || !time_only;
  info.print_time = rate_and_time || time_only;
  if (info_out != nullptr) *info_out = std::move(info);
  return cmd;
}

}  // namespace lockstep
