#include "controller/io500/io500_plan.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "controller/plan/kinds/find_plan.h"
#include "controller/plan/kinds/mdtest_plan.h"

namespace lockstep {
namespace {

constexpr uint64_t kHardTransferBytes = 47008;  // IO500's ior-hard -t and -b
constexpr uint64_t kHardFileBytes = 3901;       // mdtest-hard -w/-e, find -size
constexpr uint64_t kRndTransferBytes = 4096;    // ior-rnd4K-easy-read -t=4096 -b=4096
constexpr uint64_t kRndSegments = 10000000;     // ior-rnd4K-easy-read -s=10000000

// The write phase whose files `phase` works on ("" for a write, find and
// timestamp).
absl::string_view WriterOf(absl::string_view phase) {
  if (phase == "ior-easy-read" || phase == "ior-rnd4K-easy-read") return "ior-easy-write";
  if (phase == "ior-hard-read") return "ior-hard-write";
  if (phase == "mdtest-easy-stat" || phase == "mdtest-easy-delete") return "mdtest-easy-write";
  if (phase == "mdtest-hard-stat" || phase == "mdtest-hard-read" ||
      phase == "mdtest-hard-delete") {
    return "mdtest-hard-write";
  }
  return "";
}

bool Runs(const Io500Config& c, absl::string_view phase) {
  return Io500SkipReason(c, phase).empty();
}

std::string Sub(const Io500Setup& s, const char* sub) { return s.datadir + "/" + sub; }

PhasePlan Base(const std::string& name, v1::PhaseKind kind, const Io500Setup& s) {
  PhasePlan p;
  p.name = name;
  p.kind = kind;
  p.tasks_per_agent = {s.tasks_per_agent};
  return p;
}

PhasePlan IorPhase(const Io500Config& c, const Io500Setup& s, absl::string_view phase) {
  const bool easy = absl::StrContains(phase, "easy");
  const bool write = absl::EndsWith(phase, "-write");
  PhasePlan p = Base(std::string(phase), write ? v1::WRITE : v1::READ, s);
  p.dir = Sub(s, easy ? "ior-easy" : "ior-hard");
  p.file_name = easy ? "ior_file_easy" : "file";
  p.file_per_process = easy && c.ior_easy_file_per_proc;
  p.transfer_bytes = easy ? c.ior_easy_transfer_bytes : kHardTransferBytes;
  p.block_bytes = easy ? c.ior_easy_block_bytes : kHardTransferBytes;
  p.segments = easy ? 1 : c.ior_hard_segments;
  p.intra_barriers = true;  // -g
  // IOR's -k keeps the files for the later phases; Lockstep removes the
  // files of a repetition only after its last phase, so keep = false
  // removes them there, as IO500's cleanup does.
  if (write) {
    p.fsync = true;  // -e
    p.stonewall_seconds = s.stonewall_seconds;
    p.stonewall_wear_out = true;
    return p;
  }
  if (phase == "ior-rnd4K-easy-read") {
    // IO500: -z -z -t=4096 -b=4096 -s=10000000 -D S, wear-out, -C -Q 2
    // with a file per process; its own stonewall, no status file.
    p.transfer_bytes = p.block_bytes = kRndTransferBytes;
    p.segments = kRndSegments;
    p.random_blocks = true;
    p.stonewall_seconds = s.stonewall_seconds;
    p.stonewall_wear_out = true;
    if (p.file_per_process && s.client_agents != 1) {
      p.reorder_tasks = true;
      p.reorder_node_offset = 2;
    }
    return p;
  }
  p.stonewall_count_from = std::string(WriterOf(phase));
  p.verify = true;  // -R
  if (s.client_agents != 1) {
    p.reorder_tasks = true;  // -C -Q 1
    p.reorder_node_offset = 1;
  }
  return p;
}

// The mdtest base of easy (-u -L) or hard (-t, shared directory, 3901 bytes).
PhasePlan MdtestBase(const Io500Config& c, const Io500Setup& s, bool easy) {
  PhasePlan p = Base("", v1::MDTEST, s);
  p.dir = Sub(s, easy ? "mdtest-easy" : "mdtest-hard");
  p.file_name = "mdtest";
  p.Own<MdtestPlan>().md_items = easy ? c.mdtest_easy_items : c.mdtest_hard_items;
  p.Own<MdtestPlan>().md_unique_dir = easy;
  p.Own<MdtestPlan>().md_leaf_only = easy;
  if (!easy)
    p.Own<MdtestPlan>().md_write_bytes = p.Own<MdtestPlan>().md_read_bytes = kHardFileBytes;
  // -N 1: mdtest shifts by the tasks of a node when there are several nodes.
  p.Own<MdtestPlan>().md_neighbor_shift = s.client_agents == 1 ? 1 : s.tasks_per_agent;
  p.keep = true;  // the tree removal removes what the others made
  return p;
}

void AddMdtest(const Io500Config& c, const Io500Setup& s, absl::string_view phase, Plan* plan) {
  const bool easy = absl::StrContains(phase, "easy");
  const PhasePlan base = MdtestBase(c, s, easy);
  auto add = [&](const std::string& name, v1::MdtestOp op) {
    PhasePlan p = base;
    p.name = name;
    p.Own<MdtestPlan>().md_op = op;
    plan->phases.push_back(p);
    return &plan->phases.back();
  };
  const std::string name(phase);
  if (absl::EndsWith(phase, "-write")) {
    add(name + "-tree", v1::MD_TREE_CREATE);
    PhasePlan* create = add(name, v1::MD_FILE_CREATE);
    create->Own<MdtestPlan>().md_stonewall_seconds = s.stonewall_seconds;  // -W
    create->fsync = true;                                // -Y
    return;
  }
  const std::string writer(WriterOf(phase));
  if (absl::EndsWith(phase, "-stat")) {
    add(name, v1::MD_FILE_STAT)->stonewall_count_from = writer;
  } else if (absl::EndsWith(phase, "-read")) {
    PhasePlan* read = add(name, v1::MD_FILE_READ);
    read->stonewall_count_from = writer;
    read->verify = true;  // -X
  } else {
    add(name, v1::MD_FILE_REMOVE)->stonewall_count_from = writer;
    add(name + "-tree", v1::MD_TREE_REMOVE);
  }
}

void AddFind(const Io500Config& c, const Io500Setup& s, Plan* plan) {
  PhasePlan p = Base("find", v1::FIND, s);
  p.dir = s.datadir;
  // IO500's timestampfile is made just before ior-hard-write: files newer
  // than that phase's start instant.
  if (Runs(c, "timestamp")) {
    for (const char* next : {"ior-hard-write", "mdtest-hard-write"}) {
      if (Runs(c, next)) {
        p.Own<FindPlan>().find_newer_than = next;
        break;
      }
    }
  }
  p.Own<FindPlan>().find_size_bytes = kHardFileBytes;
  p.Own<FindPlan>().find_match_size = true;
  p.Own<FindPlan>().find_name_glob = "*01*";
  p.keep = true;
  plan->phases.push_back(p);
}

// IO500's mdtest_{easy,hard}_add_params, the phase's own words and
// mdtest_add_generic_params, in their order (src/phase_mdtest_*.c): what
// real mdtest runs for the phase, with Lockstep's seed for -G and the
// stonewall file (-x) by which a later mdtest takes the write's count.
std::string MdtestExe(const Io500Config& c, const Io500Setup& s, absl::string_view phase) {
  const bool easy = absl::StrContains(phase, "easy");
  const char* sub = easy ? "mdtest-easy" : "mdtest-hard";
  std::string e = absl::StrFormat("./mdtest --dataPacketType=timestamp -n %u",
                                  easy ? c.mdtest_easy_items : c.mdtest_hard_items);
  const int32_t seed = Io500PhaseSeed(sub, s.timestamp);
  e += easy ? absl::StrFormat(" -u -L -F -P -G %d -N 1", seed)
            : absl::StrFormat(" -t -w 3901 -e 3901 -P -G=%d -N 1 -F", seed);
  e += absl::StrFormat(" -d %s -x %s/%s.stonewall", Sub(s, sub), s.resultdir, sub);
  if (absl::EndsWith(phase, "-write")) {
    e += absl::StrFormat(" -C -Y -W %u", s.stonewall_seconds);
  } else if (absl::EndsWith(phase, "-stat")) {
    e += " -T";
  } else if (absl::EndsWith(phase, "-read")) {
    e += " -E -X";
  } else {
    e += " -r";
  }
  return e + absl::StrFormat(" --saveRankPerformanceDetails=%s/%s.csv -a POSIX", s.resultdir,
                             phase);
}

// IO500's ior_{easy,hard}_add_params and the phase's own words, in their
// order (src/phase_ior_*.c), with IO500's -G of the group, its stonewall
// status file (the write's count for a later read) and its per-rank CSV.
std::string IorExe(const Io500Config& c, const Io500Setup& s, absl::string_view phase) {
  const bool easy = absl::StrContains(phase, "easy");
  const std::string csv =
      absl::StrFormat(" -O saveRankPerformanceDetailsCSV=%s/%s.csv", s.resultdir, phase);
  std::string e;
  if (easy) {
    e = absl::StrFormat("./ior --dataPacketType=timestamp -g -G %d -k -e -o %s/ior_file_easy",
                        Io500PhaseSeed("ior-easy", s.timestamp), Sub(s, "ior-easy"));
    if (phase != "ior-rnd4K-easy-read") {
      e += absl::StrFormat(" -C -Q 1 -O stoneWallingStatusFile=%s/ior-easy.stonewall -t %s -b %s",
                           s.resultdir, c.ior_easy_transfer, c.ior_easy_block);
    }
    if (c.ior_easy_file_per_proc) e += " -F";
  } else {
    e = absl::StrFormat("./ior --dataPacketType=timestamp -C -Q 1 -g -G=%d -k -e -o %s/file -O "
                        "stoneWallingStatusFile=%s/ior-hard.stonewall -t 47008 -b 47008 -s %u",
                        Io500PhaseSeed("ior-hard", s.timestamp), Sub(s, "ior-hard"),
                        s.resultdir, c.ior_hard_segments);
  }
  if (phase == "ior-rnd4K-easy-read") {
    return e + absl::StrFormat(" -r -D %u -z -z -a POSIX%s -t=4096 -b=4096 -s=%u -O "
                               "stoneWallingWearOut=1%s",
                               s.stonewall_seconds, csv, kRndSegments,
                               c.ior_easy_file_per_proc ? " -C -Q 2" : "");
  }
  if (phase == "ior-easy-write") {
    return e + absl::StrFormat(" -w -D %u -O stoneWallingWearOut=1 -a POSIX%s",
                               s.stonewall_seconds, csv);
  }
  if (phase == "ior-hard-write") {
    return e + absl::StrFormat(" -w -D %u -a POSIX%s -O stoneWallingWearOut=1",
                               s.stonewall_seconds, csv);
  }
  return e + " -r -R -a POSIX" + csv;
}

}  // namespace

int32_t Io500PhaseSeed(absl::string_view group, absl::string_view timestamp) {
  uint32_t hash = 0;
  for (absl::string_view part : {group, timestamp}) {
    for (char c : part) hash = ((hash << 2) | (hash >> 30)) + static_cast<uint32_t>(c);
  }
  if (hash == 0 || hash == 0xffffffffu) return 4711;
  return static_cast<int32_t>(hash);
}

std::string Io500SkipReason(const Io500Config& config, absl::string_view phase) {
  if (!config.PhaseEnabled(phase)) return "run = FALSE in the configuration";
  const absl::string_view writer = WriterOf(phase);
  if (!writer.empty() && !config.PhaseEnabled(writer)) {
    return absl::StrFormat("it needs what %s writes, which does not run (run = FALSE)", writer);
  }
  return "";
}

std::vector<const PhasePlan*> Io500PlanPhases(const Plan& plan, absl::string_view phase) {
  std::vector<const PhasePlan*> out;
  for (const PhasePlan& p : plan.phases) {
    if (p.name == phase || p.name == absl::StrCat(phase, "-tree")) out.push_back(&p);
  }
  return out;
}

Plan BuildIo500Plan(const Io500Config& config, const Io500Setup& setup,
                    std::vector<std::string>* notes) {
  Plan plan;
  plan.name = "io500";
  plan.source = config.source;
  plan.seed = setup.seed;
  // IO500 drops the caches on the clients before every phase; Lockstep's
  // "all" adds its OSS/MDS agents when there are any.
  plan.cache = config.drop_caches ? "all" : "none";
  for (const char* phase : kIo500Phases) {
    const absl::string_view name = phase;
    if (!Runs(config, name) || name == "timestamp") continue;
    if (absl::StartsWith(name, "ior-")) {
      plan.phases.push_back(IorPhase(config, setup, name));
    } else if (absl::StartsWith(name, "mdtest-")) {
      AddMdtest(config, setup, name, &plan);
    } else {
      AddFind(config, setup, &plan);
    }
  }
  if (notes != nullptr) {
    if (setup.client_agents == 1) {
      notes->push_back("one agent: the reads cannot read another node's data (IOR -C -Q 1 "
                       "needs two or more); each task reads its own");
    }
    for (const std::string& n : config.notes) notes->push_back(n);
  }
  return plan;
}

std::string Io500ExeLine(const Io500Config& config, const Io500Setup& setup,
                         absl::string_view phase) {
  if (phase == "timestamp") return "";
  if (phase == "find") {
    // phase_find.c's argv, joined by spaces as u_flatten_argv does (no
    // quotes), with its default queue length (steal-next and hashing off).
    return absl::StrFormat("./pfind %s -newer %s/timestampfile -size 3901c -name *01* -C -q 10000",
                           setup.datadir, setup.resultdir);
  }
  if (absl::StartsWith(phase, "ior-")) return IorExe(config, setup, phase);
  return MdtestExe(config, setup, phase);
}

}  // namespace lockstep
