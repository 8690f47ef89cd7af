// The controller's phase kinds (controller/plan/phase_kind.h): one per wire
// kind, their keys, and their agreement with the agent's workloads.
#include "controller/plan/phase_kind.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "agent/workloads/workload.h"
#include "common/names.h"
#include "controller/plan/plan.h"
#include "controller/plan/plan_toml.h"
#include "controller/plan/sweep.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "controller/plan/kinds/command_plan.h"
#include "controller/plan/kinds/mdtest_plan.h"
#include "controller/plan/kinds/seeks_plan.h"
#include "controller/plan/kinds/small_files_plan.h"

namespace lockstep {
namespace {

using ::testing::HasSubstr;

TEST(PhaseKindTest, EveryWireKindHasExactlyOne) {
  const google::protobuf::EnumDescriptor* wire = v1::PhaseKind_descriptor();
  std::map<int, int> count;
  for (const PhaseKindDef* k : AllKinds()) ++count[k->wire()];
  for (int i = 0; i < wire->value_count(); ++i) {
    const int value = wire->value(i)->number();
    if (value == v1::PHASE_KIND_UNSPECIFIED) {
      EXPECT_EQ(count[value], 0) << "PHASE_KIND_UNSPECIFIED is no kind";
      continue;
    }
    EXPECT_EQ(count[value], 1) << wire->value(i)->name() << " needs exactly one PhaseKindDef "
                               << "in controller/plan/kinds/registry.cc";
  }
  EXPECT_EQ(AllKinds().size(), static_cast<size_t>(wire->value_count() - 1))
      << "a registered kind is no wire kind";
}

TEST(PhaseKindTest, NamesAreTheWireNames) {
  for (const PhaseKindDef* k : AllKinds()) {
    EXPECT_STREQ(k->name(), PhaseKindName(k->wire()));
    EXPECT_EQ(KindNamed(k->name()), k);
    EXPECT_EQ(&KindOf(k->wire()), k);
    ASSERT_TRUE(ParsePhaseKind(k->name()).has_value()) << k->name();
    EXPECT_EQ(*ParsePhaseKind(k->name()), k->wire());
  }
  EXPECT_EQ(KindNamed("bogus"), nullptr);
  EXPECT_EQ(KindNamesForMessage(),
            "write, read, rewrite, small_files, mdtest, find, command, seeks, train, datagen, "
            "checkpoint, net or backend");
}

TEST(PhaseKindTest, OwnKeysBelongToOneKindAndSweptKeysAreOwn) {
  std::map<std::string, std::string> owner;
  for (const PhaseKindDef* k : AllKinds()) {
    const std::vector<std::string> own = k->OwnKeys();
    for (const std::string& key : own) {
      auto [it, added] = owner.emplace(key, k->name());
      EXPECT_TRUE(added) << key << " is owned by " << it->second << " and " << k->name();
    }
    for (const SweptKey& s : k->SweptKeys()) {
      EXPECT_NE(std::find(own.begin(), own.end(), s.key), own.end()) << s.key;
      EXPECT_TRUE(IsSweepableKey(s.key)) << s.key;
    }
  }
}

// What the repetition removes is something the agent's workload made: the
// agent's CreatesFiles() (what a session without its controller removes)
// covers every phase the controller removes after, but for a read with
// remove_files (it removes what a write made).
TEST(PhaseKindTest, LeavesFilesAgreesWithTheAgentsCreatesFiles) {
  for (const PhaseKindDef* k : AllKinds()) {
    v1::PhaseSpec spec;
    spec.set_phase_id("t0/r0/p");
    spec.set_kind(k->wire());
    spec.set_tasks(1);
    spec.set_total_tasks(1);
    auto workload = MakeWorkload(spec);
    ASSERT_TRUE(workload.ok()) << k->name() << ": " << workload.status();
    PhasePlan p;
    p.kind = k->wire();
    if (k->LeavesFiles(p)) {
      EXPECT_TRUE((*workload)->CreatesFiles()) << k->name();
    }
    p.remove_files = true;
    if (k->LeavesFiles(p) && k->wire() != v1::READ) {
      EXPECT_TRUE((*workload)->CreatesFiles()) << k->name();
    }
  }
  PhasePlan read;
  read.kind = v1::READ;
  EXPECT_FALSE(KindOf(v1::READ).LeavesFiles(read));
  read.remove_files = true;
  EXPECT_TRUE(KindOf(v1::READ).LeavesFiles(read));
  // mdtest removes its own items in its remove phases, as mdtest does.
  PhasePlan md;
  md.kind = v1::MDTEST;
  EXPECT_FALSE(KindOf(v1::MDTEST).LeavesFiles(md));
}

TEST(PhaseKindTest, AKeyOfAnotherKindNamesTheKindItAppliesTo) {
  auto plan = ParsePlan(
      "[[agent]]\naddress = \"h:1\"\n[[phase]]\nname = \"w\"\nkind = \"write\"\n"
      "dir = \"/d\"\nmd_items = 4\n",
      "p.toml");
  ASSERT_FALSE(plan.ok());
  EXPECT_THAT(plan.status().message(),
              HasSubstr("'md_items': applies to mdtest phases, not to kind = \"write\""));
}

TEST(PhaseKindTest, PlanToTomlRoundTripsEveryKindsKeys) {
  auto plan = ParsePlan(
      "[[agent]]\naddress = \"h:1\"\n"
      "[[phase]]\nname = \"s\"\nkind = \"small_files\"\ndir = \"/d\"\nsmall_files = 7\n"
      "[[phase]]\nname = \"m\"\nkind = \"mdtest\"\ndir = \"/d\"\nmd_op = \"file_create\"\n"
      "md_items = 9\nmd_write_size = 16\n"
      "[[phase]]\nname = \"k\"\nkind = \"seeks\"\ndir = \"/d\"\nseeks = 5\nblock_size = \"64k\"\n",
      "p.toml");
  ASSERT_TRUE(plan.ok()) << plan.status();
  auto again = ParsePlan(PlanToToml(*plan), "again.toml");
  ASSERT_TRUE(again.ok()) << again.status() << "\n" << PlanToToml(*plan);
  ASSERT_EQ(again->phases.size(), 3u);
  EXPECT_EQ(again->phases[0].Own<SmallFilesPlan>().small_files, 7u);
  EXPECT_EQ(again->phases[1].Own<MdtestPlan>().md_op, v1::MD_FILE_CREATE);
  EXPECT_EQ(again->phases[1].Own<MdtestPlan>().md_items, 9u);
  EXPECT_EQ(again->phases[1].Own<MdtestPlan>().md_write_bytes, 16u);
  EXPECT_EQ(again->phases[2].Own<SeeksPlan>().seeks, 5u);
  EXPECT_EQ(again->phases[2].transfer_bytes, 8192u);  // the seeks default
  EXPECT_EQ(again->phases[2].Own<SeeksPlan>().seek_rewrite_pct, 10u);
}

// Every kind's own keys, each given, come back from the plan's text: each
// is written, and the spec made from the text is the one made from the
// plan. Before, a find phase lost find_newer_than, find_size and find_name
// (io500's plan.toml held an unfiltered find) and a command phase its argv.
TEST(PhaseKindTest, EveryKindsOwnKeysSurviveThePlansText) {
  const std::map<std::string, std::string> every_key = {
      {"small_files", "small_files = 7\nsmall_file_min_size = \"1k\"\n"
                      "small_file_max_size = \"64k\"\nsmall_files_per_dir = 50\n"},
      {"mdtest", "md_op = \"file_create\"\nmd_branching = 2\nmd_depth = 2\nmd_items = 9\n"
                 "md_unique_dir = true\nmd_write_size = 16\nmd_read_size = 16\n"
                 "md_leaf_only = true\nmd_neighbor_shift = 1\nmd_stonewall_seconds = 3\n"},
      {"find", "find_newer_than = \"w\"\nfind_size = 3901\nfind_name = \"*01*\"\n"},
      {"command", "argv = [\"/bin/true\"]\nenv = [\"A=1\"]\ntimeout_seconds = 30\n"
                  "tail_size = \"8k\"\n"},
      {"seeks", "seeks = 5\nseek_rewrite_pct = 20\n"},
      {"train", "format = \"records\"\nnum_files = 4\nsamples_per_file = 2\n"
                "record_size = \"64k\"\nrecord_size_stdev = \"1k\"\nfile_prefix = \"img\"\n"
                "epochs = 2\nbatch_size = 2\nread_threads = 2\nprefetch_batches = 3\n"
                "computation_time_seconds = 0.01\ncomputation_time_stdev_seconds = 0.001\n"
                "compute = \"spin\"\nfile_shuffle = \"seed\"\nsample_shuffle = \"seed\"\n"
                "shuffle_seed = 5\nau_threshold = 0.5\ntotal_training_steps = 3\n"},
      {"datagen", "format = \"records\"\nnum_files = 4\nsamples_per_file = 2\n"
                  "record_size = \"64k\"\nrecord_size_stdev = \"1k\"\nfile_prefix = \"img\"\n"
                  "dataset_memory_multiple = 2.5\n"},
      {"checkpoint", "checkpoint_op = \"write\"\nmodel = \"llama3-8b\"\nshard_size = \"1m\"\n"
                     "checkpoints = 2\n"},
      {"net", "streams = 2\nmessage_size = \"64k\"\nduration_seconds = 2\nping_count = 5\n"
              "ping_size = 64\ninterface = \"lo\"\n"},
      {"backend", "method = \"file\"\nsize = \"8m\"\n"}};
  for (const PhaseKindDef* k : AllKinds()) {
    if (k->OwnKeys().empty()) continue;
    const auto keys = every_key.find(k->name());
    if (keys == every_key.end()) {
      ADD_FAILURE() << "add kind " << k->name() << " to every_key, with each of its own keys";
      continue;
    }
    for (const std::string& key : k->OwnKeys()) {
      EXPECT_THAT(keys->second, HasSubstr(key + " = ")) << k->name() << ": give " << key;
    }
    auto plan = ParsePlan(absl::StrCat("[[agent]]\naddress = \"h:1\"\n[[agent]]\naddress = \"h:2\"\n"
                                       "[[phase]]\nname = \"w\"\nkind = \"write\"\ndir = \"/d\"\n"
                                       "[[phase]]\nname = \"p\"\nkind = \"", k->name(),
                                       "\"\ndir = \"/d\"\n", keys->second),
                          "p.toml");
    ASSERT_TRUE(plan.ok()) << k->name() << ": " << plan.status();
    const std::string text = PlanToToml(*plan);
    for (const std::string& key : k->OwnKeys()) {
      EXPECT_THAT(text, HasSubstr("\n" + key + " = ")) << k->name() << " did not write " << key;
    }
    auto again = ParsePlan(text, "again.toml");
    ASSERT_TRUE(again.ok()) << again.status() << "\n" << text;
    v1::PhaseSpec before, after;
    SetWorkloadFields(plan->phases[1], 7, &before);
    SetWorkloadFields(again->phases[1], 7, &after);
    EXPECT_EQ(before.DebugString(), after.DebugString()) << k->name() << "\n" << text;
  }
}

// A phase of each kind with only what the kind needs, for the shared I/O
// keys' tests below; a kind added without one here fails them.
const std::map<std::string, std::string>& MinimalPhases() {
  static const auto* phases = new std::map<std::string, std::string>{
      {"write", ""},
      {"read", ""},
      {"rewrite", ""},
      {"small_files", "small_files = 3\n"},
      {"mdtest", "md_op = \"file_read\"\nmd_items = 3\n"},
      {"find", ""},
      {"command", "argv = [\"/bin/true\"]\n"},
      {"seeks", "seeks = 5\n"},
      {"train", "format = \"records\"\nnum_files = 4\nsamples_per_file = 2\n"
                "record_size = \"64k\"\nbatch_size = 2\n"},
      {"datagen", "format = \"records\"\nnum_files = 4\nsamples_per_file = 2\n"
                  "record_size = \"64k\"\n"},
      {"checkpoint", "checkpoint_op = \"write\"\nshard_size = \"1m\"\n"},
      {"net", ""},
      {"backend", ""}};
  return *phases;
}

std::string PlanOfKind(const std::string& kind, const std::string& keys) {
  return "[[agent]]\naddress = \"h:1\"\n[[agent]]\naddress = \"h:2\"\n[[phase]]\nname = \"p\"\n"
         "kind = \"" + kind + "\"\ndir = \"/d\"\n" + MinimalPhases().at(kind) + keys;
}

// Each shared I/O key with a value that is not its default, and whether a
// phase holds it.
struct IoKeyCase {
  const char* key;
  uint32_t bit;
  const char* line;
  bool flag;  // a switch: "KEY = false" is accepted by every kind
  bool (*holds)(const PhasePlan& p);
};
const IoKeyCase kIoKeyCases[] = {
    {"transfer_size", kIoSizes, "transfer_size = \"64k\"\n", false,
     [](const PhasePlan& p) { return p.transfer_bytes == 65536; }},
    {"file_per_process", kIoFilePerProcess, "file_per_process = true\n", true,
     [](const PhasePlan& p) { return p.file_per_process; }},
    {"fsync", kIoFsync, "fsync = true\n", true, [](const PhasePlan& p) { return p.fsync; }},
    {"fsync_per_transfer", kIoFsyncPerTransfer, "fsync_per_transfer = true\n", true,
     [](const PhasePlan& p) { return p.fsync_per_transfer; }},
    {"direct", kIoDirect, "direct = true\n", true, [](const PhasePlan& p) { return p.direct; }},
    {"verify", kIoVerify, "verify = true\n", true, [](const PhasePlan& p) { return p.verify; }},
    {"reorder_tasks", kIoReorder, "reorder_tasks = true\n", true,
     [](const PhasePlan& p) { return p.reorder_tasks; }},
    {"stripe_count", kIoLayout, "stripe_count = 4\n", false,
     [](const PhasePlan& p) { return p.set_stripe && p.stripe_count == 4; }},
    {"checksums", kIoChecksums, "checksums = false\n", false,
     [](const PhasePlan& p) { return p.checksums == v1::CHECKSUMS_OFF; }},
};

TEST(PhaseKindTest, EveryKindHasAMinimalPhaseForTheseTests) {
  for (const PhaseKindDef* k : AllKinds()) {
    EXPECT_EQ(MinimalPhases().count(k->name()), 1u) << "add kind " << k->name() << " to MinimalPhases";
    if (MinimalPhases().count(k->name()) == 0) continue;
    auto plan = ParsePlan(PlanOfKind(k->name(), ""), "p.toml");
    EXPECT_TRUE(plan.ok()) << k->name() << ": " << plan.status();
  }
}

// A shared I/O key a kind does not read is refused, naming the kinds that
// do, never quietly ignored (a net phase's transfer_size, mdtest's direct);
// a switch set to false does nothing anywhere and is accepted.
TEST(PhaseKindTest, AnIoKeyTheKindDoesNotReadIsRefusedNamingTheKindsThatDo) {
  int refused = 0;
  for (const PhaseKindDef* k : AllKinds()) {
    if (MinimalPhases().count(k->name()) == 0) continue;
    for (const IoKeyCase& c : kIoKeyCases) {
      if ((k->IoKeys() & c.bit) != 0) continue;
      auto plan = ParsePlan(PlanOfKind(k->name(), c.line), "p.toml");
      ASSERT_FALSE(plan.ok()) << k->name() << " took " << c.key;
      const std::string message(plan.status().message());
      EXPECT_THAT(message, HasSubstr(absl::StrCat("key '", c.key, "': applies to ")));
      EXPECT_THAT(message, HasSubstr(absl::StrCat("not to kind = \"", k->name(), "\"")));
      EXPECT_THAT(message, HasSubstr("; drop it"));
      // " write, read and rewrite,": the kinds named before " phases, not to".
      const size_t from = message.find("applies to ") + 10;
      const std::string named = message.substr(from, message.find(" phases, not to") - from) + ",";
      for (const PhaseKindDef* other : AllKinds()) {
        const bool reads = (other->IoKeys() & c.bit) != 0;
        EXPECT_EQ(absl::StrContains(named, std::string(" ") + other->name() + " ") ||
                      absl::StrContains(named, std::string(" ") + other->name() + ","),
                  reads)
            << c.key << " of " << k->name() << ": " << message << " (" << other->name() << ")";
      }
      ++refused;
      if (!c.flag) continue;
      auto off = ParsePlan(PlanOfKind(k->name(), absl::StrCat(c.key, " = false\n")), "p.toml");
      EXPECT_TRUE(off.ok()) << k->name() << " " << c.key << " = false: " << off.status();
    }
  }
  EXPECT_GE(refused, 30);  // net and find alone refuse all nine
}

// Every shared I/O key a kind reads comes back from the plan's text
// (PlanToToml, which front ends and run.json's plan.toml are made of): the
// plan run is the plan recorded. Before, mdtest's fsync (-Y) and verify
// (-X) and small_files' fsync_per_transfer were lost there.
TEST(PhaseKindTest, AnIoKeyTheKindReadsSurvivesThePlansText) {
  // Refused by a rule of its own: seeks work on one shared file (bonnie++'s).
  const std::set<std::pair<std::string, std::string>> own_rules = {{"seeks", "file_per_process"}};
  int kept = 0;
  for (const PhaseKindDef* k : AllKinds()) {
    if (MinimalPhases().count(k->name()) == 0) continue;
    for (const IoKeyCase& c : kIoKeyCases) {
      if ((k->IoKeys() & c.bit) == 0 || own_rules.count({k->name(), c.key}) > 0) continue;
      auto plan = ParsePlan(PlanOfKind(k->name(), c.line), "p.toml");
      ASSERT_TRUE(plan.ok()) << k->name() << " " << c.key << ": " << plan.status();
      ASSERT_TRUE(c.holds(plan->phases[0])) << k->name() << " " << c.key;
      const std::string text = PlanToToml(*plan);
      auto again = ParsePlan(text, "again.toml");
      ASSERT_TRUE(again.ok()) << again.status() << "\n" << text;
      EXPECT_TRUE(c.holds(again->phases[0])) << k->name() << " lost " << c.key << ":\n" << text;
      ++kept;
    }
  }
  EXPECT_GE(kept, 25);
}

// The run's and a phase's cache barrier, a layout and client checksums come
// back from the plan's text too (before, PlanToToml wrote none of them: an
// io500 run with drop-caches = TRUE recorded a plan without its barrier).
TEST(PhaseKindTest, PlanToTomlKeepsTheCacheBarrierLayoutAndChecksums) {
  auto plan = ParsePlan(
      "[run]\ncache = \"all\"\ndrop_mode = 1\ncache_required = true\n"
      "[[agent]]\naddress = \"h:1\"\n"
      "[[phase]]\nname = \"w\"\nkind = \"write\"\ndir = \"/d\"\ncache = \"clients\"\n"
      "stripe_count = -1\nstripe_size = \"1m\"\nstripe_index = 2\nstripe_pool = \"flash\"\n"
      "checksums = false\n"
      "[[phase]]\nname = \"m\"\nkind = \"mdtest\"\ndir = \"/d\"\nmd_op = \"file_create\"\n"
      "md_items = 3\nobject_size = \"4m\"\nchecksums = true\n",
      "p.toml");
  ASSERT_TRUE(plan.ok()) << plan.status();
  const std::string text = PlanToToml(*plan);
  auto again = ParsePlan(text, "again.toml");
  ASSERT_TRUE(again.ok()) << again.status() << "\n" << text;
  EXPECT_EQ(again->cache, "all") << text;
  EXPECT_EQ(again->drop_mode, 1u);
  EXPECT_TRUE(again->cache_required);
  const PhasePlan& w = again->phases[0];
  EXPECT_EQ(w.cache, "clients");
  EXPECT_TRUE(w.set_stripe);
  EXPECT_EQ(w.stripe_count, -1);
  EXPECT_EQ(w.stripe_size_bytes, 1u << 20);
  EXPECT_EQ(w.stripe_index, 2);
  EXPECT_EQ(w.stripe_pool, "flash");
  EXPECT_EQ(w.checksums, v1::CHECKSUMS_OFF);
  const PhasePlan& m = again->phases[1];
  EXPECT_TRUE(m.set_stripe);
  EXPECT_EQ(m.object_size_bytes, 4u << 20);
  EXPECT_EQ(m.checksums, v1::CHECKSUMS_ON);
  EXPECT_TRUE(m.cache.empty());
  EXPECT_EQ(PlanToToml(*again), text);  // one text for one plan
}

// A command phase, and strings holding quotes, backslashes and a tab, come
// back from the plan's text (before, PlanToToml wrote no argv, env, timeout
// or tail, and wrote strings unescaped: a '"' in a dir broke the TOML).
TEST(PhaseKindTest, PlanToTomlKeepsACommandAndEscapesItsStrings) {
  const std::string dir = "/d/a \"quoted\" back\\slash\tand tab";
  auto plan = ParsePlan(
      "[[agent]]\naddress = \"h:1\"\n[[phase]]\nname = \"c\"\nkind = \"command\"\n"
      "dir = \"/d/a \\\"quoted\\\" back\\\\slash\\tand tab\"\n"
      "argv = [\"/usr/bin/tar\", \"xf\", \"a \\\"b\\\".tar\"]\nenv = [\"A=1\", \"B=x\\\\y\"]\n"
      "timeout_seconds = 30\ntail_size = \"8k\"\n",
      "p.toml");
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(plan->phases[0].dir, dir);
  const std::string text = PlanToToml(*plan);
  auto again = ParsePlan(text, "again.toml");
  ASSERT_TRUE(again.ok()) << again.status() << "\n" << text;
  const PhasePlan& c = again->phases[0];
  EXPECT_EQ(c.dir, dir);
  const CommandPlan& cp = c.Own<CommandPlan>();
  EXPECT_EQ(cp.command_argv, (std::vector<std::string>{"/usr/bin/tar", "xf", "a \"b\".tar"}));
  EXPECT_EQ(cp.command_env, (std::vector<std::string>{"A=1", "B=x\\y"}));
  EXPECT_EQ(cp.command_timeout_seconds, 30u);
  EXPECT_EQ(cp.command_tail_bytes, 8192u);
  EXPECT_EQ(TomlQuoted("a\x01" "b"), "\"a\\u0001b\"");
}

TEST(PhaseKindTest, SetWorkloadFieldsFillsOnlyTheKindsFields) {
  PhasePlan p;
  p.kind = v1::WRITE;
  p.Own<MdtestPlan>().md_items = 5;  // as no plan can say, but the spec must not carry it
  p.Own<SmallFilesPlan>().small_files = 3;
  v1::PhaseSpec spec;
  SetWorkloadFields(p, 1, &spec);
  EXPECT_EQ(spec.md_items(), 0u);
  EXPECT_EQ(spec.small_files(), 0u);
  p.kind = v1::MDTEST;
  SetWorkloadFields(p, 1, &spec);
  EXPECT_EQ(spec.md_items(), 5u);
  EXPECT_EQ(spec.small_files(), 0u);
}

}  // namespace
}  // namespace lockstep
