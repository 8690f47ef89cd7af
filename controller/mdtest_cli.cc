#include "controller/mdtest_cli.h"

#include "absl/strings/str_format.h"
#include "common/names.h"
#include "common/sizes.h"
#include "common/status_macros.h"
#include "controller/cli_common.h"
#include "controller/command_specs.h"

namespace lockstep {
namespace {


constexpr const char* kMdValues = "nbzweidIa";

constexpr CliRefusal kMdRefused[] = {
    {'B', "no barriers (-B): lockstep always separates sub-phases with its start barrier"},
    {'c', "collective creates (-c) are not implemented"},
    {'k', "mknod (-k) is not implemented"},
    {'N', "neighbour stride (-N) is not implemented: each task stats and reads its own items"},
    {'R', "random stat order (-R) is not implemented"},
    {'S', "shared file (-S) is not implemented"},
    {'s', "-s (stride) is not implemented"},
    {'t', "-t (unique dir overhead) is not implemented"},
    {'x', "stonewall status file (-x) is not implemented"},
    {'W', "stonewall (-W) is not implemented for mdtest"},
    {'y', "sync after each write (-y) is not implemented"},
    {'Y', "sync (-Y) is not implemented"},
    {'p', "pre-iteration delay (-p) is not implemented"},
    {'P', "printing time and rate (-P) is not implemented: the SUMMARY shows rates"},
    {'l', "-l is not implemented"},
    {'f', "-f (first task count) is not implemented; use --tasks"},
    {'G', "-G is not implemented"},
    {'X', "-X (verify read) is not implemented"},
};

}  // namespace

absl::StatusOr<CliCommand> ParseMdtestCommandLine(const std::vector<std::string>& args,
                                                  const FileReader& read_file) {
  CliCommand cmd;
  Plan& plan = cmd.plan;
  plan.name = "mdtest";
  plan.source = "mdtest command line";
  uint64_t items = 0, items_per_dir = 0, branching = 1, depth = 0, write_bytes = 0,
           read_bytes = 0, reps = 1;
  bool unique = false, files_only = false, dirs_only = false, create = false, stat = false,
       read = false, remove = false, leaves_only = false;
  std::string dir = ".";
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    ASSIGN_OR_RETURN(bool own, ParseControllerOption(args, &i, MdtestCommandSpec(),
                                                     &cmd.controller, read_file));
    if (own) continue;
    if (a.rfind("--", 0) == 0) return UnknownFlagError(a, MdtestCommandSpec());
    ASSIGN_OR_RETURN(std::vector<ShortOption> options,
                     SplitShortOptions(args, &i, kMdValues, kMdRefused, "mdtest"));
    for (const ShortOption& so : options) {
      const char o = so.letter;
      const std::string& opt = so.name;
      if (so.has_value) {
        const std::string& v = so.value;
        switch (o) {
          case 'n': { ASSIGN_OR_RETURN(items, CliUint(opt, v, 1, uint64_t{1} << 40)); break; }
          case 'I': { ASSIGN_OR_RETURN(items_per_dir, CliUint(opt, v, 1, uint64_t{1} << 32)); break; }
          case 'b': { ASSIGN_OR_RETURN(branching, CliUint(opt, v, 1, 1'000'000)); break; }
          case 'z': { ASSIGN_OR_RETURN(depth, CliUint(opt, v, 0, 64)); break; }
          case 'i': { ASSIGN_OR_RETURN(reps, CliUint(opt, v, 1, 10000)); break; }
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
            dir = v;
            while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
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
        case 'L': leaves_only = true; break;
        case 'v': break;
        default: return CliBad(opt, "unknown mdtest option");
      }
    }
  }
  if (leaves_only) return CliBad("-L", "refused: items in leaf directories only is not implemented");
  // Tree size (mdtest): (b^(z+1)-1)/(b-1) directories.
  double dirs = 0, level = 1;
  for (uint64_t d = 0; d <= depth; ++d, level *= static_cast<double>(branching)) dirs += level;
  if (dirs > 1e7) {
    return CliBad(absl::StrFormat("-b %u -z %u", branching, depth),
               absl::StrFormat("a tree of %.0f directories; the limit is 10 million", dirs));
  }
  if (items_per_dir > 0) {
    if (items > 0) return CliBad("-I", "give the number of items (-n) or items per directory (-I), not both");
    items = items_per_dir * static_cast<uint64_t>(dirs);
  }
  if (items == 0) return CliBad("-n", "the number of items per task is missing (-n N or -I N)");
  if (read_bytes > write_bytes) {
    return CliBad(absl::StrFormat("-e %u", read_bytes),
               absl::StrFormat("reads more than each file holds (-w %u)", write_bytes));
  }
  if (!create && !stat && !read && !remove) create = stat = read = remove = true;
  if (!files_only && !dirs_only) files_only = dirs_only = true;

  PhasePlan base;
  base.kind = v1::MDTEST;
  base.dir = dir;
  base.file_name = "lockstep";
  base.md_branching = static_cast<uint32_t>(branching);
  base.md_depth = static_cast<uint32_t>(depth);
  base.md_items = items;
  base.md_unique_dir = unique;
  base.md_write_bytes = write_bytes;
  base.md_read_bytes = read_bytes;
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
  plan.text = PlanToToml(plan);
  return cmd;
}

}  // namespace lockstep
