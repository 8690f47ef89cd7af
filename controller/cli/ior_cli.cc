#include "controller/cli/ior_cli.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/names.h"
#include "common/net.h"
#include "common/sizes.h"
#include "common/status_macros.h"
#include "controller/cli/cli_common.h"
#include "controller/cli/command_specs.h"

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


absl::StatusOr<uint64_t> Size(const std::string& opt, const std::string& v) {
  auto s = ParseSize(v);
  if (!s.ok()) return CliBad(opt + " " + v, std::string(s.status().message()));
  if (*s == 0) return CliBad(opt + " " + v, "must be greater than zero");
  return *s;
}

}  // namespace

absl::Status CliBad(const std::string& option, const std::string& why) {
  return absl::InvalidArgumentError(absl::StrFormat("%s: %s", option, why));
}

absl::StatusOr<std::vector<ShortOption>> SplitShortOptions(const std::vector<std::string>& args,
                                                           size_t* i, std::string_view with_value,
                                                           absl::Span<const CliRefusal> refused,
                                                           std::string_view tool) {
  const std::string& a = args[*i];
  if (a.size() < 2 || a[0] != '-') {
    return CliBad(a, absl::StrFormat("unexpected argument; %s options start with '-'", tool));
  }
  std::vector<ShortOption> out;
  for (size_t j = 1; j < a.size(); ++j) {
    ShortOption o;
    o.letter = a[j];
    o.name = std::string("-") + o.letter;
    for (const CliRefusal& ref : refused) {
      if (ref.letter == o.letter) return CliBad(o.name, absl::StrFormat("refused: %s", ref.why));
    }
    if (with_value.find(o.letter) != std::string_view::npos) {
      o.has_value = true;
      if (j + 1 < a.size()) {
        o.value = a.substr(j + 1);
      } else if (*i + 1 < args.size()) {
        o.value = args[++*i];
      } else {
        return CliBad(o.name, "needs a value");
      }
      out.push_back(std::move(o));
      break;  // the value ended the word
    }
    out.push_back(std::move(o));
  }
  return out;
}

absl::StatusOr<uint64_t> CliUint(const std::string& opt, const std::string& v, uint64_t min,
                                 uint64_t max) {
  uint64_t n = 0;
  if (!absl::SimpleAtoi(v, &n) || v.empty() || v[0] == '-' || v[0] == '+') {
    return CliBad(opt + " " + v, "expected a whole number");
  }
  if (n < min || n > max) {
    return CliBad(opt + " " + v, absl::StrFormat("out of range; use %u to %u", min, max));
  }
  return n;
}

absl::StatusOr<bool> ParseControllerOption(const std::vector<std::string>& args, size_t* i,
                                           const CommandSpec& command, ControllerCli* c,
                                           const FileReader& read_file) {
  ASSIGN_OR_RETURN(std::optional<FlagValue> flag, ParseOneFlag(args, i, command));
  if (!flag) return false;
  const absl::string_view name = flag->spec->name;
  auto add_agent = [&](std::string addr, const std::string& where) -> absl::Status {
    addr = std::string(absl::StripAsciiWhitespace(addr));
    if (addr.empty()) return absl::OkStatus();
    auto hp = SplitHostPort(addr);
    if (!hp.ok() || hp->second == 0) {
      return CliBad(where, absl::StrFormat("\"%s\" is not HOST:PORT", addr));
    }
    if (std::find(c->agents.begin(), c->agents.end(), addr) != c->agents.end()) {
      return CliBad(where, absl::StrFormat("agent %s is listed twice", addr));
    }
    c->agents.push_back(addr);
    return absl::OkStatus();
  };
  if (name == "agents") {
    for (const std::string& part : flag->items) RETURN_IF_ERROR(add_agent(part, "--agents"));
  } else if (name == "hostfile") {
    const std::string& path = flag->text;
    auto text = read_file(path);
    if (!text.ok()) return CliBad("--hostfile " + path, std::string(text.status().message()));
    int line_no = 0;
    for (absl::string_view line : absl::StrSplit(*text, '\n')) {
      ++line_no;
      std::string l(line.substr(0, line.find('#')));
      RETURN_IF_ERROR(add_agent(l, absl::StrFormat("--hostfile %s:%d", path, line_no)));
    }
  } else if (name == "local") {
    c->local_agents = static_cast<int>(flag->u);
  } else if (name == "tasks-per-agent") {
    c->tasks_per_agent = static_cast<uint32_t>(flag->u);
  } else if (name == "out") {
    c->out_dir = flag->text;
  } else if (name == "tls_dir") {
    c->tls_dir = flag->text;
  } else if (name == "insecure") {
    c->insecure = flag->b;
  } else if (name == "tasks") {
    c->total_tasks = static_cast<uint32_t>(flag->u);
  } else {
    return absl::InternalError(absl::StrFormat("--%s is in the table of %s but not handled",
                                               name, command.FullName()));
  }
  return true;
}

absl::Status PlaceTasks(uint32_t total_tasks, const std::string& total_opt, CliCommand* cmd) {
  ControllerCli& c = cmd->controller;
  if (!c.agents.empty() && c.local_agents > 0) {
    return CliBad("--local", "cannot be combined with --agents or --hostfile");
  }
  for (const std::string& a : c.agents) cmd->plan.agents.push_back({a, v1::CLIENT});
  // As `mpirun -np N` on one node: one local agent with all the tasks.
  if (c.agents.empty() && c.local_agents == 0) c.local_agents = 1;
  const uint32_t agents = c.agents.empty() ? static_cast<uint32_t>(c.local_agents)
                                           : static_cast<uint32_t>(c.agents.size());
  uint32_t tpa = c.tasks_per_agent == 0 ? 1 : c.tasks_per_agent;
  if (total_tasks > 0) {
    if (total_tasks % agents != 0) {
      return CliBad(absl::StrFormat("%s %u", total_opt, total_tasks),
                 absl::StrFormat("%u tasks cannot be spread evenly over %u agents; use a "
                                 "multiple of %u or change the agents",
                                 total_tasks, agents, agents));
    }
    if (c.tasks_per_agent != 0 && c.tasks_per_agent * agents != total_tasks) {
      return CliBad(absl::StrFormat("%s %u", total_opt, total_tasks),
                 absl::StrFormat("disagrees with --tasks-per-agent %u on %u agents (%u tasks)",
                                 c.tasks_per_agent, agents, c.tasks_per_agent * agents));
    }
    tpa = total_tasks / agents;
    if (tpa > kMaxTasksPerAgent) {
      return CliBad(absl::StrFormat("%s %u", total_opt, total_tasks),
                 absl::StrFormat("%u tasks per agent is above the limit %u", tpa,
                                 kMaxTasksPerAgent));
    }
  }
  for (PhasePlan& p : cmd->plan.phases) p.tasks_per_agent = {tpa};
  cmd->notes.push_back(absl::StrFormat("%u agent%s (%s) x %u task%s = %u tasks", agents,
                                       agents == 1 ? "" : "s",
                                       c.agents.empty() ? "local" : absl::StrJoin(c.agents, ","),
                                       tpa, tpa == 1 ? "" : "s", agents * tpa));
  return absl::OkStatus();
}

void SplitOutputPath(const std::string& path, std::string* dir, std::string* file) {
  // Built by construction: GCC 12 at -O3 falsely warns (-Wrestrict) when a
  // short literal is assigned here (GCC bug 105329).
  const size_t slash = path.find_last_of('/');
  *dir = slash == std::string::npos ? std::string(1, '.')
         : slash == 0               ? std::string(1, '/')
                                    : path.substr(0, slash);
  *file = slash == std::string::npos ? path : path.substr(slash + 1);
}

absl::StatusOr<CliCommand> ParseIorCommandLine(const std::vector<std::string>& args,
                                               const FileReader& read_file) {
  CliCommand cmd;
  Plan& plan = cmd.plan;
  plan.name = "ior";
  plan.source = "ior command line";
  bool F = false, w = false, r = false, W = false, R = false, e = false, Y = false, C = false,
       z = false, k = false, g = false, direct = false, wear_out = false, Q_given = false,
       m = false;
  int random_reorder = 0;  // IOR -Z, counted as IOR counts flags
  int64_t random_seed = 0;  // IOR -X
  uint64_t block = 1 << 20, xfer = 256 << 10, segments = 1, reps = 1, total_tasks = 0;
  uint64_t stonewall = 0, delay = 0, task_offset = 1;
  std::vector<std::string> ior_words = {"ior"};  // IOR's own argv, for its "Command line"
  std::string output = "testFile";
  std::string api = "POSIX";

  auto set_o = [&](const std::string& kv) -> absl::Status {
    for (absl::string_view item : absl::StrSplit(kv, ',')) {
      std::string it(item);
      size_t eq = it.find('=');
      if (eq == std::string::npos) return CliBad("-O " + kv, "expected key=value");
      std::string key = it.substr(0, eq), val = it.substr(eq + 1);
      const std::string opt = "-O " + it;
      if (key == "summaryFormat") {
        std::string v = absl::AsciiStrToUpper(val);
        if (v == "JSON") {
          cmd.summary_format = SummaryFormat::kJson;
        } else if (v == "CSV") {
          cmd.summary_format = SummaryFormat::kCsv;
        } else if (v == "DEFAULT" || v == "TEXT") {
          cmd.summary_format = SummaryFormat::kText;
        } else {
          return CliBad(opt, "summaryFormat is JSON, CSV or default");
        }
      } else if (key == "summaryFile") {
        if (val.empty()) return CliBad(opt, "needs a file name");
        cmd.summary_file = val;
      } else if (key == "stoneWallingWearOut") {
        ASSIGN_OR_RETURN(uint64_t n, CliUint(opt, val, 0, 1));
        wear_out = n == 1;
      } else if (key == "lustreStripeCount") {
        if (val != "0") {
          return CliBad(opt, "only 0 (the file system's default striping) is accepted; set "
                          "striping on the directory with lfs setstripe");
        }
        cmd.notes.push_back("-O lustreStripeCount=0: the file system's default striping");
      } else {
        return CliBad(opt, absl::StrFormat("unknown -O key '%s'; known: summaryFormat, summaryFile, "
                                        "stoneWallingWearOut, lustreStripeCount",
                                        key));
      }
    }
    return absl::OkStatus();
  };

  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    const size_t first = i;
    ASSIGN_OR_RETURN(bool own, ParseControllerOption(args, &i, IorCommandSpec(), &cmd.controller,
                                                     read_file));
    if (own) continue;
    if (a == "--posix.odirect") {
      direct = true;
      ior_words.push_back(a);
      continue;
    }
    if (a.rfind("--", 0) == 0) {
      static constexpr absl::string_view kIorLongOptions[] = {"--posix.odirect"};
      return UnknownFlagError(a, IorCommandSpec(), kIorLongOptions);
    }
    ASSIGN_OR_RETURN(std::vector<ShortOption> options,
                     SplitShortOptions(args, &i, kIorValues, kIorRefused, "IOR"));
    for (size_t w = first; w <= i; ++w) ior_words.push_back(args[w]);  // with a separate value
    for (const ShortOption& so : options) {
      const char o = so.letter;
      const std::string& opt = so.name;
      if (so.has_value) {
        const std::string& v = so.value;
        switch (o) {
          case 'a':
            if (v != "POSIX") {
              return CliBad(opt + " " + v, "only the POSIX API is supported (lockstep's agents use "
                                        "open/pwrite/pread)");
            }
            api = v;
            break;
          case 'b': { ASSIGN_OR_RETURN(block, Size(opt, v)); break; }
          case 't': { ASSIGN_OR_RETURN(xfer, Size(opt, v)); break; }
          case 's': { ASSIGN_OR_RETURN(segments, CliUint(opt, v, 1, UINT32_MAX)); break; }
          case 'i': { ASSIGN_OR_RETURN(reps, CliUint(opt, v, 1, 10000)); break; }
          case 'N': { ASSIGN_OR_RETURN(total_tasks, CliUint(opt, v, 1, 1u << 24)); break; }
          case 'D': { ASSIGN_OR_RETURN(stonewall, CliUint(opt, v, 0, 86400 * 7)); break; }
          case 'd': { ASSIGN_OR_RETURN(delay, CliUint(opt, v, 0, 86400)); break; }
          case 'G': { ASSIGN_OR_RETURN(plan.seed, CliUint(opt, v, 0, UINT64_MAX >> 1)); break; }
          case 'A': {
            int32_t n = 0;
            if (!absl::SimpleAtoi(v, &n)) return CliBad(opt + " " + v, "expected a whole number");
            cmd.reference_number = n;
            break;
          }
          case 'Q': {
            ASSIGN_OR_RETURN(task_offset, CliUint(opt, v, 1, 1u << 20));
            Q_given = true;
            break;
          }
          case 'X':
            if (!absl::SimpleAtoi(v, &random_seed) || random_seed < INT32_MIN ||
                random_seed > INT32_MAX) {
              return CliBad(opt + " " + v, "expected a whole number (negative: -X plus the "
                                          "repetition)");
            }
            break;
          case 'o':
            if (v.empty() || v.back() == '/') {
              return CliBad(opt + " " + v, "needs a file path, not a directory");
            }
            output = v;
            break;
          case 'O': RETURN_IF_ERROR(set_o(v)); break;
        }
        continue;
      }
      switch (o) {
        case 'F': F = true; break;
        case 'w': w = true; break;
        case 'r': r = true; break;
        case 'W': W = true; break;
        case 'R': R = true; break;
        case 'e': e = true; break;
        case 'Y': Y = true; break;
        case 'C': C = true; break;
        case 'z': z = true; break;
        case 'k': k = true; break;
        case 'g': g = true; break;
        case 'B': direct = true; break;  // IOR's useO_DIRECT, as --posix.odirect
        case 'v': cmd.verbose = true; break;
        case 'm': m = true; break;
        case 'Z': ++random_reorder; break;
        case 'q': break;  // quit on error: lockstep always stops a phase at its first error
        default:
          return CliBad(opt, "unknown IOR option");
      }
    }
  }
  // Consistency, each error naming the options at fault.
  if (xfer % 8 != 0) return CliBad(absl::StrFormat("-t %u", xfer), "must be a multiple of 8 bytes");
  if (block % xfer != 0) {
    return CliBad(absl::StrFormat("-b %u", block),
               absl::StrFormat("block size must be a multiple of the transfer size -t %u", xfer));
  }
  if (z && block == xfer && segments == 1) {
    return CliBad("-z", absl::StrFormat("random offsets with -b equal to -t (%s) and one segment: "
                                     "each task has a single transfer, nothing to shuffle",
                                     HumanBytes(block)));
  }
  if (wear_out && stonewall == 0) {
    return CliBad("-O stoneWallingWearOut=1", "needs -D SECONDS (wear-out follows the stonewall)");
  }
  if (direct && xfer % 4096 != 0) {
    return CliBad("-B/--posix.odirect",
                  absl::StrFormat("O_DIRECT needs -t a multiple of 4096, got %u", xfer));
  }
  if (W && !w) return CliBad("-W", "checks what the write phase wrote; add -w");
  if (random_reorder > 1) {
    return CliBad("-Z", "given twice: IOR then shuffles all tasks' files with one seed; that "
                       "mode is not implemented (give -Z once)");
  }
  if (random_reorder && C) {
    return CliBad("-Z", "with -C: IOR refuses both constant and random task reordering; choose "
                       "one");
  }
  if (random_reorder && z && !F) {
    return CliBad("-Z", "with -z on a shared file: IOR refuses random offsets with random task "
                       "reordering on a single shared file; add -F or drop one");
  }
  if (!w && !r && !W && !R) w = r = true;  // IOR's default
  if (R) r = true;

  std::string dir, file;
  SplitOutputPath(output, &dir, &file);
  if (file.empty()) return CliBad("-o " + output, "needs a file name");
  PhasePlan base;
  base.dir = dir;
  base.file_name = file;
  base.file_per_process = F;
  base.transfer_bytes = xfer;
  base.block_bytes = block;
  base.segments = segments;
  base.direct = direct;
  base.keep = k;
  base.random_offsets = z;
  base.stonewall_seconds = static_cast<uint32_t>(stonewall);
  base.stonewall_wear_out = wear_out;
  base.delay_seconds = static_cast<uint32_t>(delay);
  base.intra_barriers = g;
  base.multi_file = m;
  if (w) {
    PhasePlan p = base;
    p.name = "write";
    p.kind = v1::WRITE;
    p.fsync = e;
    p.fsync_per_transfer = Y;
    p.verify_after_write = W;
    plan.phases.push_back(p);
  }
  if (r) {
    PhasePlan p = base;
    p.name = "read";
    p.kind = v1::READ;
    p.verify = R;
    p.reorder_tasks = C;
    p.reorder_random = random_reorder > 0;
    p.reorder_random_seed = static_cast<int32_t>(random_seed);
    p.reorder_node_offset = static_cast<uint32_t>(task_offset);
    // IOR removes what a read-only test read unless -k.
    p.remove_files = !w && !k;
    plan.phases.push_back(p);
  } else if (C) {
    return CliBad("-C", "reorders the tasks of the read phase; add -r");
  } else if (random_reorder) {
    return CliBad("-Z", "reorders the tasks of the read phase; add -r");
  }
  if (Q_given && random_reorder && task_offset != 1) {
    return CliBad(absl::StrFormat("-Q %u", task_offset),
                  "with -Z only IOR's default task offset 1 is implemented; drop -Q");
  }
  if (Q_given && !C && !random_reorder) {
    return CliBad("-Q", "is the task offset of -C and -Z; add -C or -Z");
  }
  plan.repetitions = static_cast<uint32_t>(reps);
  RETURN_IF_ERROR(PlaceTasks(static_cast<uint32_t>(total_tasks), "-N", &cmd));
  const size_t agents =
      cmd.controller.agents.empty() ? cmd.controller.local_agents : cmd.controller.agents.size();
  if (C && agents < 2) {
    cmd.notes.push_back("-C with one agent: every task reads its own node's data, as IOR on one "
                        "node; use two or more agents to defeat the client cache");
  }
  if (g && agents > 1) {
    return CliBad("-g", absl::StrFormat("intra-phase barriers span one agent's tasks only, and "
                                     "there are %u agents; use --local 1 or one --agents entry",
                                     agents));
  }
  if (wear_out && agents > 1) {
    cmd.notes.push_back(
        "-O stoneWallingWearOut=1: wear-out evens out the tasks of each agent (the most pairs "
        "of that agent's tasks), not across agents");
  }
  plan.text = PlanToToml(plan);
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
      u("block_size", p.block_bytes);
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
    }
  }
  return s;
}

}  // namespace lockstep
