// The controller's side of one phase kind, as agent/workloads/workload.h is
// the agent's: one PhaseKindDef per v1::PhaseKind, made by the table in
// controller/plan/kinds/registry.cc. A kind owns
//   - its plan keys: the [[phase]] keys only it takes, read and checked
//     (ReadKeys), swept (SweptKeys), written back as TOML (WriteToml);
//   - its part of the PhaseSpec (FillSpec), and whether its phases leave
//     files the repetition removes (LeavesFiles);
//   - the reduction of its tasks' results into the phase record (Reduce);
//   - its --smoke caps (CapForSmoke) and its --dry-run estimate (Estimate).
// What every kind shares (name, kind, dir, tasks, IOR's transfer shape and
// options, layout, stonewall_count_from) stays in phase_table.cc and
// phase_specs.cc; the keys only a kind takes are its struct, kept in the
// phase as PhasePlan::Own<T>() (controller/plan/kind_params.h). Adding a
// kind: its file controller/plan/kinds/KIND.cc (with KIND_plan.h for its
// keys' struct when it has keys), and its maker declared and listed in
// registry.cc (ARCHITECTURE.md, "Where to add").
#ifndef LOCKSTEP_CONTROLLER_PLAN_PHASE_KIND_H_
#define LOCKSTEP_CONTROLLER_PLAN_PHASE_KIND_H_

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "controller/plan/plan.h"
#include "controller/plan/table_reader.h"
#include "lockstep/v1/agent.pb.h"
#include "lockstep/v1/results.pb.h"

namespace lockstep {

struct SmokeOptions;  // controller/plan/plan_smoke.h

// A key a list may be given for (a sweep, controller/plan/sweep.h) and how
// its value moves from the phase as read for one test into another.
struct SweptKey {
  std::string key;
  std::function<void(const PhasePlan& from, PhasePlan* to)> copy;
};

// A client agent as the kinds see it before the first phase: its address
// and what it said at Attach.
struct ClientFacts {
  std::string address;
  const v1::HostFacts* facts = nullptr;
};

// A figure of one accepted repetition of a phase, as history, compare and
// gate read it (controller/results/ai_metrics.h: AiMetricDefs names them).
struct PhaseFigure {
  std::string metric;
  double value = 0;
  double threshold = 0;  // a pass criterion of the phase's (train's au_threshold); 0: none
  bool passed = true;    // whether the repetition met it (threshold > 0)
};

// What kinds chose from the clients' facts before the first phase
// (PhaseKindDef::FitToClients): counts by a key of the kind's (datagen's
// dataset "dir|prefix|format" -> its num_files), and a line for each choice.
struct ClientFit {
  std::map<std::string, uint64_t> counts;
  std::vector<std::string> notes;
};

// Which agents run a phase of a kind (PhaseKindDef::Takers).
enum class PhaseTakers {
  kClients,            // the client agents (every kind that does file I/O)
  kServers,            // the server agents (role oss/mds): backend
  kClientsAndServers,  // both, clients first: net
};

// An agent that takes part in a phase, as the kinds see it: its address
// ("host:port" of its control channel), what it said at Attach, and whether
// it is a server agent.
struct TakerFacts {
  std::string address;
  const v1::HostFacts* facts = nullptr;
  bool server = false;
};

// Lowers values for --smoke, noting each change ("phase w: md_items 1000 -> 200").
class SmokeCapper {
 public:
  virtual ~SmokeCapper() = default;
  virtual void Bytes(const char* key, uint64_t cap, uint64_t* value) = 0;
  virtual void Count(const char* key, uint64_t cap, uint64_t* value) = 0;
  virtual void Count(const char* key, uint32_t cap, uint32_t* value) = 0;
  virtual void Count(const char* key, double cap, double* value) = 0;
  // A change the caps cannot say: "phase P: KEY FROM -> TO".
  virtual void Note(const char* key, const std::string& from, const std::string& to) = 0;
  // A setting left out: "phase P: WHAT left out (WHY)".
  virtual void Dropped(const std::string& what, const std::string& why) = 0;
};

// What one phase of one test would move and make (the dry run's line).
struct PhaseEstimate {
  uint32_t tasks = 0;            // over all client agents (set by the caller)
  uint64_t bytes_per_task = 0;
  uint64_t ops_per_task = 0;     // metadata operations
  uint64_t files = 0;            // over all agents
  bool ops_rate_only = false;    // timed at the metadata rate alone (seeks)
  double timed_seconds = 0;      // runs for a set time (net): its duration, not from the rates
  double seconds = 0;            // set by the caller from the rates
  std::string note;
};

// `v` as a TOML basic string, quoted: '"' and '\\' escaped, control
// characters as \uXXXX (TOML allows none raw but tab).
std::string TomlQuoted(const std::string& v);

// Appends "key = value" lines of a [[phase]] table (PlanToToml).
class TomlLines {
 public:
  explicit TomlLines(std::string* out) : out_(out) {}
  void Bool(const char* key, bool v);           // only when true
  void BoolAlways(const char* key, bool v);     // false too
  void Uint(const char* key, uint64_t v);       // only when non-zero
  void UintAlways(const char* key, uint64_t v);  // 0 too
  void Int(const char* key, int64_t v);
  void Double(const char* key, double v);       // only when non-zero; exact
  void String(const char* key, const std::string& v);          // TomlQuoted
  void StringList(const char* key, const std::vector<std::string>& v);  // ["a", "b"]

 private:
  std::string* out_;
};

// The shared [[phase]] keys of IOR's transfers that only some kinds read
// (PhaseKindDef::IoKeys): one given to a kind that does not read it is
// refused, naming the kinds that do, never ignored.
enum IoKey : uint32_t {
  kIoSizes = 1u << 0,             // transfer_size; with IorBlocks(), block_size, segments, total_size
  kIoFilePerProcess = 1u << 1,    // file_per_process, file_names
  kIoFsync = 1u << 2,             // fsync
  kIoFsyncPerTransfer = 1u << 3,  // fsync_per_transfer
  kIoDirect = 1u << 4,            // direct
  kIoVerify = 1u << 5,            // verify
  kIoReorder = 1u << 6,           // reorder_tasks
  kIoLayout = 1u << 7,            // stripe_count, stripe_size, stripe_index, stripe_pool, object_size
  kIoChecksums = 1u << 8,         // checksums
  kIoAllKeys = (1u << 9) - 1,
};

class PhaseKindDef {
 public:
  virtual ~PhaseKindDef() = default;

  virtual v1::PhaseKind wire() const = 0;
  // The plan's kind = "..." and the name reports print (PhaseKindName).
  const char* name() const;

  // ---- plan keys ----------------------------------------------------------
  // Sets the kind's defaults of shared keys, before any key is read (seeks:
  // transfer_size 8 KiB, bonnie++'s chunk).
  virtual void SetDefaults(PhasePlan* /*p*/) const {}
  // The [[phase]] keys only this kind takes, in the order they are read.
  virtual std::vector<std::string> OwnKeys() const { return {}; }
  // Those of OwnKeys that may sweep, in the README's order.
  virtual std::vector<SweptKey> SweptKeys() const { return {}; }
  // Reads OwnKeys from `r` into *p. Called for every phase of a plan, after
  // the shared keys: when p->kind is another kind, an own key given is an
  // error (RefuseOwnKeys); otherwise the keys are read and checked against
  // each other and `plan` (the phases before this one). InvalidArgument
  // names the position, the phase, the key and the fix.
  virtual absl::Status ReadKeys(const TableReader& r, const Plan& /*plan*/, PhasePlan* p) const {
    return RefuseOwnKeys(r, *p);
  }
  // Whether IOR's transfer keys (file_per_process ... intra_barriers) apply.
  virtual bool IorTransfer() const { return false; }
  // Whether block_size, segments and total_size shape this kind's I/O, with
  // IOR's rules between them and transfer_size. false: transfer_size alone
  // is read (the kind's I/O chunk, block = transfer) and the others are
  // refused (the AI kinds, whose sizes are their own keys).
  virtual bool IorBlocks() const { return true; }
  // Which of the shared I/O keys this kind reads (IoKey bits). Its
  // WriteToml writes back each of them that the phase sets. Rules between a
  // key and one operation of the kind (fsync on a read, verify on a write)
  // are checked apart.
  virtual uint32_t IoKeys() const { return 0; }
  // What to give instead of shared I/O key `key`, which this kind does not
  // read, for its refusal ("" for nothing more than the kinds that read it).
  virtual std::string IoKeyHint(const std::string& /*key*/) const { return ""; }
  // Writes this kind's keys of `p` for PlanToToml, with the shared keep and
  // delay_seconds where the kind puts them (WriteKeepAndDelay); ParsePlan
  // of the text gives `p` back (tests/unit/phase_kind_test.cc holds every
  // kind's own keys to it).
  virtual void WriteToml(const PhasePlan& p, TomlLines* out) const { WriteKeepAndDelay(p, out); }

  // ---- a run --------------------------------------------------------------
  // Sets this kind's fields of `spec` from `p` (the test's values; the
  // shared fields, total_tasks among them, are set). A kind whose tasks
  // meet across agents sets sync_across_agents (BaseSpecOf clears it for
  // one agent).
  virtual void FillSpec(const PhasePlan& /*p*/, v1::PhaseSpec* /*spec*/) const {}
  // Whether the repetition removes files of this phase when it ends (or
  // fails), unless the phase keeps them (keep = true). The agent's
  // Workload::CreatesFiles() is a wider net (what a session removes when
  // its controller is gone): a kind whose phases remove their own files
  // (mdtest's remove and tree_remove, as mdtest does) says false here and
  // true there; tests/unit/phase_kind_test.cc holds the two together.
  virtual bool LeavesFiles(const PhasePlan& p) const = 0;
  // Fills pr->row (and extra_rows, md_items, md_rate, stonewall, command)
  // from all tasks of one phase, timestamps in one time base
  // (controller/record/phase_reduce.h has the reductions).
  virtual void Reduce(const std::vector<const v1::TaskResult*>& tasks, const v1::PhaseSpec& spec,
                      uint32_t rep, v1::PhaseRecord* pr) const = 0;

  // ---- what the run layer asks (controller/run names no kind) ------------
  // Which agents run the phase. With kClientsAndServers and no server
  // agents in the run, the clients alone.
  virtual PhaseTakers Takers() const { return PhaseTakers::kClients; }
  // Which server agents take part where Takers() has servers: by role (net
  // and backend: the OSS agents, the data path; not the MDS).
  virtual bool TakesServer(v1::Role /*role*/) const { return true; }
  // Why the agents that would run phase `p` cannot, as a whole (a net phase
  // with fewer than two, a backend phase with no server agent): one line
  // naming the phase, the hosts and the fix; "" when they can. Asked before
  // the first phase.
  virtual std::string RefuseTakers(const PhasePlan& /*p*/,
                                   const std::vector<TakerFacts>& /*takers*/) const {
    return "";
  }
  // Taker `index`'s copy of the phase's spec where agents differ in role
  // (net: how many streams it sends and receives; backend: one task per
  // OSD), before the ranks are set. Most kinds change nothing.
  virtual void AdaptForTaker(const std::vector<TakerFacts>& /*takers*/, size_t /*index*/,
                             v1::PhaseSpec* /*spec*/) const {}
  // The endpoints taker `index` connects to (StartRequest.peers), from the
  // takers' Prepare replies (`replies[i]` is taker i's), in the order its
  // tasks take them. Empty for kinds whose agents connect to none.
  virtual std::vector<v1::NetPeer> PeersOf(const std::vector<TakerFacts>& /*takers*/,
                                           const std::vector<const v1::PrepareReply*>& /*replies*/,
                                           size_t /*index*/,
                                           const v1::PhaseSpec& /*spec*/) const {
    return {};
  }
  // Why the agent with `facts`, named `who` ("agent ADDRESS (host H)"),
  // cannot run phase `p` of this kind: one line naming the phase, the agent
  // and the fix; "" when it can. Asked of every client before the first
  // phase and again at each Prepare. The command kind: its wire minor, its
  // account to run programs as, the program allowed.
  virtual std::string RefuseAgent(const PhasePlan& /*p*/, const std::string& /*who*/,
                                  const v1::HostFacts& /*facts*/) const {
    return "";
  }
  // One agent's copy of the phase's shared spec (a command's argv[0]
  // becomes that agent's program). Most kinds change nothing.
  virtual void AdaptForAgent(const v1::HostFacts& /*facts*/, v1::PhaseSpec* /*spec*/) const {}
  // The programs local agents (`lockstep run --local`) must allow for `p`,
  // added to *programs; InvalidArgument naming the phase when one is missing.
  virtual absl::Status LocalPrograms(const PhasePlan& /*p*/,
                                     std::set<std::string>* /*programs*/) const {
    return absl::OkStatus();
  }
  // Whether the agent makes the phase's directory itself (a command's,
  // owned by the account its program runs as): local agents get no root
  // made for it.
  virtual bool AgentMakesDir() const { return false; }
  // Whether a failed phase is still shown as a done one (PhaseDone) before
  // its failure: a command phase's hosts' times, status and stderr.
  virtual bool ShowsFailedPhase() const { return false; }
  // The transfer size a phase's agreed stonewall count is of, handed with
  // the count to a later phase's stonewall_count_from; 0 when the count is
  // of items, not transfers (mdtest).
  virtual uint64_t StonewallTransferBytes(const v1::PhaseSpec& spec) const {
    return spec.transfer_bytes();
  }
  // The earlier phase of the same repetition whose start instant `p`'s spec
  // carries (find_newer_than: find -newer), or ""; SetStartOf puts that
  // instant (controller clock; the run layer moves it to each agent's) in
  // the spec.
  virtual std::string StartInstantOf(const PhasePlan& /*p*/) const { return ""; }
  virtual void SetStartOf(int64_t /*start_unix_ns*/, v1::PhaseSpec* /*spec*/) const {}
  // Sizes phase `p` (as declared) to the clients, into *fit (datagen's
  // dataset_memory_multiple: enough files for that many times the client
  // hosts' memory). Every phase's FitToClients runs before any CheckOnClients.
  virtual void FitToClients(const PhasePlan& /*p*/, const std::vector<ClientFacts>& /*clients*/,
                            ClientFit* /*fit*/) const {}
  // What phase `p` (one test's values) needs of the clients that they lack
  // (a dataset larger than their free space): one line each into *refused,
  // naming the plan's file and line, the phase, the key, the agent and the fix.
  virtual void CheckOnClients(const PhasePlan& /*p*/, const std::vector<ClientFacts>& /*clients*/,
                              const ClientFit& /*fit*/, std::vector<std::string>* /*refused*/) const {}
  // The compiled spec with what FitToClients chose (datagen's and train's
  // num_files).
  virtual void ApplyFit(const ClientFit& /*fit*/, v1::PhaseSpec* /*spec*/) const {}
  // A validity criterion an ok phase missed, which fails the run after all
  // its phases ran (a train phase's AU below its au_threshold): "AU 41.20% is
  // below its au_threshold 90.00%"; "" when met or when the kind has none.
  virtual std::string MissedCriterion(const v1::PhaseRecord& /*pr*/) const { return ""; }
  // What to do about MissedCriterion, said once after the phases that missed it.
  virtual std::string CriterionFix() const { return ""; }
  // The figures an accepted repetition gives history, compare and gate, in a
  // fixed order (train: AU and samples/s; checkpoint: its bandwidths and
  // longest duration); none by default.
  virtual std::vector<PhaseFigure> Figures(const v1::PhaseRecord& /*pr*/) const { return {}; }

  // ---- report -------------------------------------------------------------
  // Whether IOR's report prints the phase's row as IOR's iteration line
  // (mdtest, find and command phases have their own lines).
  virtual bool IorReportRow() const { return true; }
  // The '#' lines (without "# ") IOR's report prints after that row: find's
  // and seeks' figures, each host's command status. `host_by_address`: the
  // run's agents' host names.
  virtual std::vector<std::string> ReportNotes(
      const v1::PhaseRecord& /*pr*/,
      const std::map<std::string, std::string>& /*host_by_address*/) const {
    return {};
  }

  // ---- smoke and dry run --------------------------------------------------
  // Lowers this kind's values to the smoke limits (after the shared caps).
  virtual void CapForSmoke(const SmokeOptions& /*o*/, SmokeCapper* /*c*/, PhasePlan* /*p*/) const {}
  // Sets e's bytes and ops per task, files and note for `p` in test `test`
  // on `clients` agents (e->tasks is set: over all of them).
  virtual void Estimate(const Plan& /*plan*/, const PhasePlan& /*p*/, uint32_t /*test*/,
                        uint32_t /*clients*/, PhaseEstimate* e) const {
    e->note = "duration not estimated";
  }

 protected:
  // An error for the first of OwnKeys given in `r` when p.kind is not this
  // kind: "applies to NAME phases, not to kind = \"...\"".
  absl::Status RefuseOwnKeys(const TableReader& r, const PhasePlan& p) const;
  // RefuseOwnKeys for one key, after it was read (so a wrong type is named first).
  absl::Status OnlyHere(const TableReader& r, const PhasePlan& p, const char* key) const;
  static void WriteKeepAndDelay(const PhasePlan& p, TomlLines* out);
  // transfer_size, total_size or block_size, segments, fsync,
  // fsync_per_transfer, direct, verify: the IOR shape a kind's file has.
  static void WriteIorShape(const PhasePlan& p, TomlLines* out);
};

// The kind of a wire value, or null for a value this controller does not
// know (PHASE_KIND_UNSPECIFIED, a record or plan of a newer version). Every
// other wire value has one (tests/unit/phase_kind_test.cc).
const PhaseKindDef* FindKind(v1::PhaseKind kind);
// FindKind's kind; for an unknown value an inert one, never another kind's
// rules: no files left, a Reduce that fails the phase naming the value, no
// IOR row and a report note that says so. Plans never get there
// (CompileTest refuses them, controller/plan/compile.h); records of a newer
// version may.
const PhaseKindDef& KindOf(v1::PhaseKind kind);
// KindOf(kind).ShowsFailedPhase(): for the replay of a stored run
// (record/run_observer.h ReplayRun), which cannot see the kinds.
bool ShowsFailedPhaseOf(v1::PhaseKind kind);
// The kind the plan names ("small_files"), or null.
const PhaseKindDef* KindNamed(std::string_view name);
// Every kind, in wire order.
const std::vector<const PhaseKindDef*>& AllKinds();
// "write, read, rewrite, ... or seeks": the names, for messages.
std::string KindNamesForMessage();
// The [[phase]] keys every kind reads, before each kind's own (OwnKeys); a
// few of them apply to some kinds only (an error says which when given).
const std::vector<std::string>& SharedPhaseKeys();
// A shared I/O key of the table `r` given to `kind`, which does not read it
// (PhaseKindDef::IoKeys): InvalidArgument naming the position, the key,
// the kinds that read it and the fix; never a key quietly ignored.
absl::Status RefuseIoKeysNotRead(const TableReader& r, const PhaseKindDef& kind);
// What a phase of `kind` may hold, for messages: 'kind = "mdtest" takes
// its own keys md_op, ... and the shared keys name, kind, dir, ...'.
std::string KeysOfKindForMessage(const PhaseKindDef& kind);

// The spec fields of IOR's finer options (random offsets, stonewall, -W,
// -d, -g, -m, -Z) and the kind's own (FillSpec).
void SetWorkloadFields(const PhasePlan& phase, uint64_t seed, v1::PhaseSpec* spec);
// KindOf(spec.kind()).Reduce(...).
void ReducePhase(const std::vector<const v1::TaskResult*>& tasks, const v1::PhaseSpec& spec,
                 uint32_t rep, v1::PhaseRecord* pr);

// The earlier phase of `plan` that `key` names by `value`; an Error naming
// the key, the value and the earlier phases otherwise (`what`: what it must be).
absl::StatusOr<const PhasePlan*> EarlierPhase(const TableReader& r, const Plan& plan,
                                              const char* key, const std::string& value,
                                              const char* what);

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_PLAN_PHASE_KIND_H_
