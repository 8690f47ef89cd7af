// kind = "backend": each server agent's storage without the network (issue
// 42). method = "file": tasks_per_agent scratch files per server in `dir`
// (on the server's device, below its roots), each written then read with
// O_DIRECT, `size` bytes in blocks of `block_size`; method = "osd_bench":
// each OSD the server agents serve runs its own bench (`ceph tell osd.N
// bench SIZE BLOCK`, through its admin socket), one task per OSD. All servers
// start at one instant; method = "obdfilter": each OST a Lustre OSS agent
// serves, surveyed as lustre-iokit's obdfilter-survey does it through lctl
// (echo client, one object, test_brw write then read). Rows: "backend_write"
// and, but for osd_bench, "backend_read".
#include <algorithm>
#include <map>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/limits.h"
#include "common/sizes.h"
#include "common/status_macros.h"
#include "controller/plan/kinds/layers_plan.h"
#include "controller/plan/kinds/registry.h"
#include "controller/plan/plan_smoke.h"
#include "controller/record/phase_reduce.h"

namespace lockstep::kinds {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;

uint32_t OsdsOf(const v1::HostFacts& facts) {
  uint32_t n = 0;
  for (const v1::DaemonFacts& d : facts.daemons()) n += absl::StartsWith(d.name(), "osd.") ? 1 : 0;
  return n;
}

// The OSTs a Lustre OSS agent serves (HostFacts.extra["lustre_osts"], from
// `lctl dl` when it started); 0 when it said none.
uint32_t OstsOf(const v1::HostFacts& facts) {
  auto it = facts.extra().find("lustre_osts");
  uint32_t n = 0;
  return it != facts.extra().end() && absl::SimpleAtoi(it->second, &n) ? n : 0;
}

// One task per target of the method: the OSDs or the OSTs the agent serves.
uint32_t TargetsOf(const std::string& method, const v1::HostFacts& facts) {
  return method == "osd_bench" ? OsdsOf(facts) : OstsOf(facts);
}

v1::IterationRow RowOf(const std::vector<const v1::TaskResult*>& tasks, const char* access,
                       uint32_t rep, uint64_t block_bytes, uint64_t bytes,
                       int64_t (v1::TaskResult::*start)() const,
                       int64_t (v1::TaskResult::*stop)() const) {
  v1::IterationRow row;
  row.set_access(access);
  row.set_iter(rep);
  const double secs = Window(tasks, start, stop);
  row.set_bytes(bytes);
  row.set_expected_bytes(bytes);
  row.set_xfer_kib(static_cast<double>(block_bytes) / 1024);
  row.set_wrrd_s(secs);
  row.set_total_s(secs);
  if (secs > 0) {
    row.set_bw_mib(static_cast<double>(bytes) / kMiB / secs);
    if (block_bytes > 0) row.set_iops(static_cast<double>(bytes / block_bytes) / secs);
  }
  return row;
}

class BackendKind : public PhaseKindDef {
 public:
  v1::PhaseKind wire() const override { return v1::BACKEND; }

  std::vector<std::string> OwnKeys() const override { return {"method", "size"}; }

  absl::Status ReadKeys(const TableReader& r, const Plan&, PhasePlan* p) const override {
    BackendPlan other_kind;
    BackendPlan& b = p->kind == wire() ? p->Own<BackendPlan>() : other_kind;
    RETURN_IF_ERROR(r.OneOf("method", {"file", "osd_bench", "obdfilter"}, &b.method));
    RETURN_IF_ERROR(r.Size("size", &b.bytes));
    RETURN_IF_ERROR(RefuseOwnKeys(r, *p));
    if (p->kind != wire()) return absl::OkStatus();
    b.block_bytes = p->transfer_bytes;
    if (b.block_bytes % kDirectIoAlignBytes != 0 || b.block_bytes > kMaxBackendBlockBytes) {
      return r.Error(r.Get("transfer_size") ? *r.Get("transfer_size") : *r.Get("kind"),
                     "transfer_size",
                     absl::StrFormat("%s: a backend block must be a multiple of 4 KiB up to 64 "
                                     "MiB (O_DIRECT, and the OSD's osd_bench_max_block_size)",
                                     HumanBytes(b.block_bytes)));
    }
    if (b.bytes % b.block_bytes != 0) {
      return r.Error(r.Get("size") ? *r.Get("size") : *r.Get("kind"), "size",
                     absl::StrFormat("%s is not a multiple of transfer_size %s; make it one",
                                     HumanBytes(b.bytes), HumanBytes(b.block_bytes)));
    }
    return absl::OkStatus();
  }

  // The block is transfer_size (4 MiB by default, `ceph tell osd.N bench`'s).
  // dir: "." (the server agent's first root) unless given; osd_bench needs none.
  void SetDefaults(PhasePlan* p) const override {
    p->transfer_bytes = 4ull << 20;
    p->dir.assign(1, '.');  // (assign: GCC 12 warns, -Wrestrict, on = ".")
  }
  bool IorBlocks() const override { return false; }
  // transfer_size: its block; the scratch directory's file system judges a layout.
  uint32_t IoKeys() const override { return kIoSizes | kIoLayout | kIoChecksums; }

  void WriteToml(const PhasePlan& p, TomlLines* out) const override {
    const BackendPlan& b = p.Own<BackendPlan>();
    WriteKeepAndDelay(p, out);
    out->String("method", b.method);
    out->UintAlways("size", b.bytes);
    out->UintAlways("transfer_size", p.transfer_bytes);
  }

  void FillSpec(const PhasePlan& p, v1::PhaseSpec* s) const override {
    const BackendPlan& b = p.Own<BackendPlan>();
    v1::BackendSpec* spec = s->mutable_backend();
    spec->set_method(b.method);
    spec->set_bytes(b.bytes);
    spec->set_block_bytes(b.block_bytes);
  }

  // The scratch files go with their tasks (agent/workloads/backend.h).
  bool LeavesFiles(const PhasePlan&) const override { return false; }

  PhaseTakers Takers() const override { return PhaseTakers::kServers; }
  bool TakesServer(v1::Role role) const override { return role == v1::OSS; }

  std::string RefuseTakers(const PhasePlan& p, const std::vector<TakerFacts>& takers) const override {
    const BackendPlan& b = p.Own<BackendPlan>();
    if (takers.empty()) {
      return absl::StrFormat(
          "phase %s: a backend phase runs on the OSS server agents (role oss) and the run has "
          "none; start lockstep-agent on the servers with role = \"oss\" and list them in the "
          "plan's agents",
          p.name);
    }
    if (b.method == "file") return "";
    std::vector<std::string> without;
    for (const TakerFacts& t : takers) {
      if (TargetsOf(b.method, *t.facts) == 0) {
        without.push_back(absl::StrFormat("%s (host %s)", t.address, t.facts->hostname()));
      }
    }
    if (without.empty()) return "";
    const bool osd = b.method == "osd_bench";
    return absl::StrFormat(
        "phase %s: method = \"%s\" %s, and %s serve%s none (its file system has no %s to "
        "measure); %s, or use method = \"file\" with a dir on the server's device",
        p.name, b.method,
        osd ? "benches the OSDs each server agent serves"
            : "surveys the OSTs each server agent serves (obdfilter-survey through lctl)",
        absl::StrJoin(without, ", "), without.size() == 1 ? "s" : "", osd ? "OSD" : "OST",
        osd ? "list the OSDs in the agent config's [ceph] daemons"
            : "start the OSS agents with --allow_lustre where `lctl dl` lists their OSTs");
  }

  std::string RefuseAgent(const PhasePlan& p, const std::string& who,
                          const v1::HostFacts& facts) const override {
    return RefuseBeforeLayers("backend", p.name, who, facts);
  }

  void AdaptForTaker(const std::vector<TakerFacts>& takers, size_t index,
                     v1::PhaseSpec* spec) const override {
    if (spec->backend().method() != "file") {
      spec->set_tasks(std::max<uint32_t>(TargetsOf(spec->backend().method(), *takers[index].facts), 1));
    }
  }

  void Reduce(const std::vector<const v1::TaskResult*>& tasks, const v1::PhaseSpec& spec,
              uint32_t rep, v1::PhaseRecord* pr) const override {
    uint64_t written = 0, read = 0;
    for (const v1::TaskResult* t : tasks) {
      written += t->backend().write_bytes();
      read += t->backend().read_bytes();
    }
    const uint64_t block = spec.backend().block_bytes();
    *pr->mutable_row() = RowOf(tasks, "backend_write", rep, block, written,
                               &v1::TaskResult::rdwr_start_unix_ns,
                               &v1::TaskResult::rdwr_stop_unix_ns);
    if (spec.backend().method() == "osd_bench") {
      // The OSDs started at one instant and each timed its own writes; the
      // call around them adds the bench's clean-up (its objects removed)
      // and the socket: the aggregate is over the longest OSD's own time.
      int64_t longest_ns = 0;
      for (const v1::TaskResult* t : tasks) longest_ns = std::max(longest_ns, t->backend().write_ns());
      v1::IterationRow& row = *pr->mutable_row();
      if (longest_ns > 0) {
        const double secs = static_cast<double>(longest_ns) / 1e9;
        row.set_wrrd_s(secs);
        row.set_bw_mib(static_cast<double>(written) / kMiB / secs);
        row.set_iops(block > 0 ? static_cast<double>(written / block) / secs : 0);
      }
      return;
    }
    *pr->add_extra_rows() = RowOf(tasks, "backend_read", rep, block, read,
                                  &v1::TaskResult::readback_start_unix_ns,
                                  &v1::TaskResult::readback_stop_unix_ns);
  }

  // Each target's own figure (the OSD's as it timed itself).
  std::vector<std::string> ReportNotes(
      const v1::PhaseRecord& pr,
      const std::map<std::string, std::string>& host_by_address) const override {
    std::vector<std::string> out;
    for (const v1::AgentPhaseRecord& a : pr.agents()) {
      auto host = host_by_address.find(a.address());
      const std::string who =
          host == host_by_address.end() || host->second.empty() ? a.address() : host->second;
      for (const v1::TaskResult& t : a.tasks()) {
        const v1::BackendResult& b = t.backend();
        if (b.write_ns() <= 0) continue;
        std::string line = absl::StrFormat(
            "backend: %s %s: write %.2f MiB/s (%s, %.0f IOPS)", who, b.target(),
            static_cast<double>(b.write_bytes()) / kMiB / (static_cast<double>(b.write_ns()) / 1e9),
            HumanBytes(b.write_bytes()), b.write_iops());
        if (b.read_ns() > 0) {
          absl::StrAppendFormat(&line, ", read %.2f MiB/s",
                                static_cast<double>(b.read_bytes()) / kMiB /
                                    (static_cast<double>(b.read_ns()) / 1e9));
        }
        out.push_back(std::move(line));
      }
    }
    return out;
  }

  void CapForSmoke(const SmokeOptions& o, SmokeCapper* c, PhasePlan* p) const override {
    BackendPlan& b = p->Own<BackendPlan>();
    c->Bytes("size", std::max<uint64_t>(o.max_bytes / b.block_bytes, 1) * b.block_bytes,
             &b.bytes);
  }

  void Estimate(const Plan&, const PhasePlan& p, uint32_t, uint32_t,
                PhaseEstimate* e) const override {
    const BackendPlan& b = p.Own<BackendPlan>();
    e->bytes_per_task = b.method == "file" ? 2 * b.bytes : b.bytes;
    e->note = absl::StrFormat("%s on each OSS agent, not the clients: the tasks and bytes are "
                              "as many per OSS agent",
                              b.method);
  }
};

}  // namespace

std::unique_ptr<PhaseKindDef> MakeBackendKind() { return std::make_unique<BackendKind>(); }

}  // namespace lockstep::kinds
