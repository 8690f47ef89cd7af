// kind = "find" (IO500's find): files under `dir` modified after the start
// instant of the earlier phase `find_newer_than` ("" = any), of exactly
// find_size bytes when given, whose name matches find_name ("" = any).
#include "absl/strings/str_format.h"
#include "common/sizes.h"
#include "common/status_macros.h"
#include "controller/plan/kinds/registry.h"
#include "controller/record/phase_reduce.h"
#include "controller/plan/kinds/find_plan.h"

namespace lockstep::kinds {
namespace {

// find_size: bytes as find -size Nc ("3901", "3901c", 3901, "4k"); 0 allowed.
absl::Status ReadFindSize(const TableReader& r, FindPlan* fp) {
  const toml::node* n = r.Get("find_size");
  if (n == nullptr) return absl::OkStatus();
  fp->find_match_size = true;
  if (n->is_integer()) return r.UintNode(*n, "find_size", 0, UINT64_MAX >> 1, &fp->find_size_bytes);
  if (!n->is_string()) {
    return r.Error(*n, "find_size", absl::StrFormat("expected a size such as \"3901\" (bytes, "
                                                    "find -size 3901c), got %s",
                                                    TableReader::TypeName(*n)));
  }
  std::string text = n->as_string()->get();
  if (!text.empty() && text.back() == 'c') text.pop_back();  // find's unit for bytes
  if (text == "0") {
    fp->find_size_bytes = 0;
    return absl::OkStatus();
  }
  auto parsed = ParseSize(text);
  if (!parsed.ok()) return r.Error(*n, "find_size", std::string(parsed.status().message()));
  fp->find_size_bytes = *parsed;
  return absl::OkStatus();
}

class FindKind : public PhaseKindDef {
 public:
  v1::PhaseKind wire() const override { return v1::FIND; }
  // No shared I/O key: it reads names and attributes; a layout or checksum
  // setting would only change the directory it searches.
  uint32_t IoKeys() const override { return 0; }

  std::vector<std::string> OwnKeys() const override {
    return {"find_newer_than", "find_size", "find_name"};
  }

  absl::Status ReadKeys(const TableReader& r, const Plan& plan, PhasePlan* p) const override {
    FindPlan other_kind;  // another kind's phase: read to check, not kept
    FindPlan& fp = p->kind == wire() ? p->Own<FindPlan>() : other_kind;
    RETURN_IF_ERROR(r.String("find_newer_than", &fp.find_newer_than));
    RETURN_IF_ERROR(ReadFindSize(r, &fp));
    RETURN_IF_ERROR(r.String("find_name", &fp.find_name_glob));
    RETURN_IF_ERROR(RefuseOwnKeys(r, *p));
    if (r.Get("find_newer_than")) {
      RETURN_IF_ERROR(EarlierPhase(r, plan, "find_newer_than", fp.find_newer_than,
                                   "the phase whose start the files must be newer than")
                          .status());
    }
    if (fp.find_name_glob.find('/') != std::string::npos) {
      return r.Error(*r.Get("find_name"), "find_name",
                     absl::StrFormat("\"%s\" has a '/': the pattern is matched against base "
                                     "names (find -name), so it never matches; drop the "
                                     "directories",
                                     fp.find_name_glob));
    }
    return absl::OkStatus();
  }

  void WriteToml(const PhasePlan& p, TomlLines* out) const override {
    const FindPlan& fp = p.Own<FindPlan>();
    WriteKeepAndDelay(p, out);
    if (!fp.find_newer_than.empty()) out->String("find_newer_than", fp.find_newer_than);
    if (fp.find_match_size) out->UintAlways("find_size", fp.find_size_bytes);
    if (!fp.find_name_glob.empty()) out->String("find_name", fp.find_name_glob);
  }

  // find_newer_unix_ns: the run sets it from the named phase's start
  // (controller/run/phase_specs.h SetEarlierStart, from StartInstantOf).
  void FillSpec(const PhasePlan& p, v1::PhaseSpec* s) const override {
    const FindPlan& fp = p.Own<FindPlan>();
    s->set_find_size_bytes(fp.find_size_bytes);
    s->set_find_match_size(fp.find_match_size);
    s->set_find_name_glob(fp.find_name_glob);
  }

  bool LeavesFiles(const PhasePlan&) const override { return false; }

  // -newer: the files written since that phase's start.
  std::string StartInstantOf(const PhasePlan& p) const override {
    return p.Own<FindPlan>().find_newer_than;
  }
  void SetStartOf(int64_t start_unix_ns, v1::PhaseSpec* spec) const override {
    spec->set_find_newer_unix_ns(start_unix_ns);
  }

  void Reduce(const std::vector<const v1::TaskResult*>& tasks, const v1::PhaseSpec&,
              uint32_t rep, v1::PhaseRecord* pr) const override {
    ReduceFind(tasks, rep, pr);
  }

  bool IorReportRow() const override { return false; }

  // IO500's figures: total-files, found, and the rate it scores in kIOPS.
  std::vector<std::string> ReportNotes(
      const v1::PhaseRecord& p, const std::map<std::string, std::string>&) const override {
    return {absl::StrFormat("find: %u files scanned, %u found, %.3f s, %.6f kIOPS", p.md_items(),
                            FindMatched(p), p.row().total_s(), p.md_rate() / 1e3)};
  }

  void Estimate(const Plan&, const PhasePlan&, uint32_t, uint32_t,
                PhaseEstimate* e) const override {
    e->note = "walks the tree; counts what it finds";
  }
};

}  // namespace

std::unique_ptr<PhaseKindDef> MakeFindKind() { return std::make_unique<FindKind>(); }

}  // namespace lockstep::kinds
