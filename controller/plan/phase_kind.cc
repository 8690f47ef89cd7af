#include "controller/plan/phase_kind.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/names.h"
#include "controller/plan/kinds/registry.h"

namespace lockstep {

void TomlLines::Bool(const char* key, bool v) {
  if (v) absl::StrAppendFormat(out_, "%s = true\n", key);
}

void TomlLines::BoolAlways(const char* key, bool v) {
  absl::StrAppendFormat(out_, "%s = %s\n", key, v ? "true" : "false");
}

void TomlLines::Uint(const char* key, uint64_t v) {
  if (v) UintAlways(key, v);
}

void TomlLines::UintAlways(const char* key, uint64_t v) {
  absl::StrAppendFormat(out_, "%s = %u\n", key, v);
}

void TomlLines::Int(const char* key, int64_t v) { absl::StrAppendFormat(out_, "%s = %d\n", key, v); }

void TomlLines::Double(const char* key, double v) {
  if (v == 0) return;
  std::string text = absl::StrFormat("%.17g", v);
  if (text.find_first_of(".eEn") == std::string::npos) text += ".0";  // TOML: 1.0, not 1
  absl::StrAppendFormat(out_, "%s = %s\n", key, text);
}

std::string TomlQuoted(const std::string& v) {
  std::string out = "\"";
  for (const char c : v) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if ((u < 0x20 && c != '\t') || u == 0x7f) {
      absl::StrAppendFormat(&out, "\\u%04X", u);
    } else {
      out += c;
    }
  }
  return out + "\"";
}

void TomlLines::String(const char* key, const std::string& v) {
  absl::StrAppend(out_, key, " = ", TomlQuoted(v), "\n");
}

void TomlLines::StringList(const char* key, const std::vector<std::string>& v) {
  std::vector<std::string> quoted;
  for (const std::string& s : v) quoted.push_back(TomlQuoted(s));
  absl::StrAppend(out_, key, " = [", absl::StrJoin(quoted, ", "), "]\n");
}

const char* PhaseKindDef::name() const { return PhaseKindName(wire()); }

absl::Status PhaseKindDef::OnlyHere(const TableReader& r, const PhasePlan& p,
                                    const char* key) const {
  if (r.Get(key) == nullptr || p.kind == wire()) return absl::OkStatus();
  return r.Error(*r.Get(key), key,
                 absl::StrFormat("applies to %s phases, not to kind = \"%s\"; %s", name(),
                                 PhaseKindName(p.kind), KeysOfKindForMessage(KindOf(p.kind))));
}

absl::Status PhaseKindDef::RefuseOwnKeys(const TableReader& r, const PhasePlan& p) const {
  for (const std::string& key : OwnKeys()) {
    if (absl::Status s = OnlyHere(r, p, key.c_str()); !s.ok()) return s;
  }
  return absl::OkStatus();
}

void PhaseKindDef::WriteKeepAndDelay(const PhasePlan& p, TomlLines* out) {
  out->Bool("keep", p.keep);
  out->Uint("delay_seconds", p.delay_seconds);
}

void PhaseKindDef::WriteIorShape(const PhasePlan& p, TomlLines* out) {
  out->Uint("transfer_size", p.transfer_bytes);
  if (p.total_bytes > 0) {
    out->Uint("total_size", p.total_bytes);
  } else {
    out->Uint("block_size", p.block_bytes);
  }
  out->Uint("segments", p.segments);
  out->Bool("fsync", p.fsync);
  out->Bool("fsync_per_transfer", p.fsync_per_transfer);
  out->Bool("direct", p.direct);
  out->Bool("verify", p.verify);
}

const std::vector<const PhaseKindDef*>& AllKinds() { return kinds::Registry(); }

namespace {

// KindOf's answer for a wire value no kind has.
class UnknownKind final : public PhaseKindDef {
 public:
  v1::PhaseKind wire() const override { return v1::PHASE_KIND_UNSPECIFIED; }
  bool LeavesFiles(const PhasePlan& /*p*/) const override { return false; }
  void Reduce(const std::vector<const v1::TaskResult*>& /*tasks*/, const v1::PhaseSpec& spec,
              uint32_t /*rep*/, v1::PhaseRecord* pr) const override {
    pr->set_ok(false);
    pr->set_error(Unknown(spec.kind()));
  }
  bool IorReportRow() const override { return false; }
  std::vector<std::string> ReportNotes(
      const v1::PhaseRecord& pr,
      const std::map<std::string, std::string>& /*host_by_address*/) const override {
    return {absl::StrCat(Unknown(pr.kind()), ": its figures are not shown")};
  }

 private:
  static std::string Unknown(v1::PhaseKind kind) {
    return absl::StrFormat(
        "phase kind %d is not known to this lockstep (a record of a newer version?)",
        static_cast<int>(kind));
  }
};

}  // namespace

const PhaseKindDef* FindKind(v1::PhaseKind kind) {
  for (const PhaseKindDef* k : AllKinds()) {
    if (k->wire() == kind) return k;
  }
  return nullptr;
}

const PhaseKindDef& KindOf(v1::PhaseKind kind) {
  static const UnknownKind* unknown = new UnknownKind;
  const PhaseKindDef* k = FindKind(kind);
  return k != nullptr ? *k : *unknown;
}

bool ShowsFailedPhaseOf(v1::PhaseKind kind) { return KindOf(kind).ShowsFailedPhase(); }

const PhaseKindDef* KindNamed(std::string_view name) {
  for (const PhaseKindDef* k : AllKinds()) {
    if (name == k->name()) return k;
  }
  return nullptr;
}

namespace {

// The shared I/O keys and who reads them (PhaseKindDef::IoKeys). `blocks`:
// read only by a kind with IOR's blocks (IorBlocks) too; `flag`: a switch,
// whose false does nothing anywhere and is accepted everywhere (a plan that
// says fsync = false on every phase stays valid).
struct IoKeyRow {
  const char* key;
  uint32_t bit;
  bool blocks = false;
  bool flag = false;
};
constexpr IoKeyRow kIoKeyRows[] = {
    {"transfer_size", kIoSizes},
    {"block_size", kIoSizes, /*blocks=*/true},
    {"segments", kIoSizes, /*blocks=*/true},
    {"total_size", kIoSizes, /*blocks=*/true},
    {"file_per_process", kIoFilePerProcess, false, /*flag=*/true},
    {"file_names", kIoFilePerProcess},
    {"fsync", kIoFsync, false, /*flag=*/true},
    {"fsync_per_transfer", kIoFsyncPerTransfer, false, /*flag=*/true},
    {"direct", kIoDirect, false, /*flag=*/true},
    {"verify", kIoVerify, false, /*flag=*/true},
    {"reorder_tasks", kIoReorder, false, /*flag=*/true},
    {"stripe_count", kIoLayout},
    {"stripe_size", kIoLayout},
    {"stripe_index", kIoLayout},
    {"stripe_pool", kIoLayout},
    {"object_size", kIoLayout},
    {"checksums", kIoChecksums}};  // false turns them off: not a no-op

// false, or a sweep of falses only.
bool OnlyFalse(const toml::node& n) {
  if (const toml::array* a = n.as_array()) {
    for (const toml::node& e : *a) {
      if (!OnlyFalse(e)) return false;
    }
    return true;
  }
  return n.is_boolean() && !n.as_boolean()->get();
}

}  // namespace

absl::Status RefuseIoKeysNotRead(const TableReader& r, const PhaseKindDef& kind) {
  for (const IoKeyRow& row : kIoKeyRows) {
    const toml::node* given = r.Get(row.key);
    if (given == nullptr || (kind.IoKeys() & row.bit) != 0) continue;
    if (row.flag && OnlyFalse(*given)) continue;
    std::vector<std::string> readers;
    for (const PhaseKindDef* k : AllKinds()) {
      if ((k->IoKeys() & row.bit) != 0 && (!row.blocks || k->IorBlocks())) {
        readers.push_back(k->name());
      }
    }
    std::string kinds = readers.empty() ? "no" : readers.back();
    if (readers.size() > 1) {
      readers.pop_back();
      kinds = absl::StrCat(absl::StrJoin(readers, ", "), " and ", kinds);
    }
    const std::string hint = kind.IoKeyHint(row.key);
    return r.Error(*given, row.key,
                   absl::StrFormat("applies to %s phases, not to kind = \"%s\"%s; drop it", kinds,
                                   kind.name(), hint.empty() ? "" : " (" + hint + ")"));
  }
  return absl::OkStatus();
}

const std::vector<std::string>& SharedPhaseKeys() {
  static const auto* keys = new std::vector<std::string>{
      "name", "kind", "dir", "file_name", "file_names", "file_per_process", "tasks_per_agent",
      "transfer_size", "block_size", "segments", "repetitions", "fsync", "fsync_per_transfer",
      "direct", "keep", "verify", "reorder_tasks", "reorder_node_offset", "remove_files",
      "cache", "stripe_count", "stripe_size", "stripe_index", "stripe_pool", "object_size",
      "checksums", "random_offsets", "random_blocks", "stonewall_seconds", "stonewall_wear_out",
      "verify_after_write", "delay_seconds", "intra_barriers", "reorder_random",
      "reorder_random_seed", "multi_file", "stonewall_count_from", "total_size"};
  return *keys;
}

std::string KeysOfKindForMessage(const PhaseKindDef& kind) {
  const std::vector<std::string> own = kind.OwnKeys();
  return absl::StrFormat("kind = \"%s\" takes %sthe shared keys %s (some of them apply to some "
                         "kinds only)",
                         kind.name(),
                         own.empty() ? ""
                                     : absl::StrCat("its own keys ", absl::StrJoin(own, ", "),
                                                    " and "),
                         absl::StrJoin(SharedPhaseKeys(), ", "));
}

std::string KindNamesForMessage() {
  std::vector<std::string> names;
  for (const PhaseKindDef* k : AllKinds()) names.push_back(k->name());
  const std::string last = names.back();
  names.pop_back();
  return absl::StrCat(absl::StrJoin(names, ", "), " or ", last);
}

void SetWorkloadFields(const PhasePlan& phase, uint64_t seed, v1::PhaseSpec* s) {
  s->set_random_offsets(phase.random_offsets);
  s->set_random_blocks(phase.random_blocks);
  s->set_random_seed(seed);
  s->set_stonewall_seconds(phase.stonewall_seconds);
  s->set_stonewall_wear_out(phase.stonewall_wear_out);
  s->set_verify_after_write(phase.verify_after_write);
  s->set_delay_seconds(phase.delay_seconds);
  s->set_intra_barriers(phase.intra_barriers);
  s->set_multi_file(phase.multi_file);
  s->set_reorder_random(phase.reorder_random);
  s->set_reorder_random_seed(phase.reorder_random_seed);
  KindOf(phase.kind).FillSpec(phase, s);
}

void ReducePhase(const std::vector<const v1::TaskResult*>& tasks, const v1::PhaseSpec& spec,
                 uint32_t rep, v1::PhaseRecord* pr) {
  KindOf(spec.kind()).Reduce(tasks, spec, rep, pr);
}

absl::StatusOr<const PhasePlan*> EarlierPhase(const TableReader& r, const Plan& plan,
                                              const char* key, const std::string& value,
                                              const char* what) {
  std::vector<std::string> names;
  for (const PhasePlan& q : plan.phases) {
    if (q.name == value) return &q;
    names.push_back("'" + q.name + "'");
  }
  return r.Error(*r.Get(key), key,
                 absl::StrFormat("\"%s\" is not an earlier phase of this plan; name %s (earlier "
                                 "phases: %s)",
                                 value, what, names.empty() ? "none" : absl::StrJoin(names, ", ")));
}

}  // namespace lockstep
