#include "controller/run/fs_checks.h"

#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/files.h"
#include "common/names.h"
#include "controller/plan/sweep.h"

namespace lockstep {
namespace {

// File systems whose agents decide at Prepare: they may have layouts.
bool MayHaveLayouts(const std::string& fs_type) {
  return fs_type.empty() || fs_type == "lustre" || fs_type == "ceph" || fs_type == "fuse" ||
         absl::StartsWith(fs_type, "0x");  // unknown to the agent's table
}

}  // namespace

std::string RootFsTypeOf(const std::string& dir, const v1::HostFacts& facts) {
  if (facts.roots_size() == 0) return "";
  if (dir.empty() || dir[0] != '/') return facts.roots(0).fs_type();
  const v1::RootFacts* best = nullptr;
  for (const v1::RootFacts& r : facts.roots()) {
    if (PathIsUnder(dir, r.path()) && (best == nullptr || r.path().size() > best->path().size())) {
      best = &r;
    }
  }
  return best == nullptr ? "" : best->fs_type();
}

RunError CheckFsSettings(const Plan& plan, const std::vector<AgentClient*>& clients) {
  std::vector<std::string> refused;
  std::set<std::string> said;  // one line per phase, agent and key
  for (const PhasePlan& declared : plan.phases) {
    for (uint32_t t = 0; t < plan.tests(); ++t) {
      const PhasePlan p = ResolvePhase(plan, declared, t);
      const bool crc = p.checksums != v1::CHECKSUMS_UNCHANGED;
      if (!p.set_stripe && !crc) continue;
      for (const AgentClient* c : clients) {
        const std::string fs = RootFsTypeOf(p.dir, c->facts);
        // TESTS ONLY: an agent with fake Lustre tools takes any directory.
        if (MayHaveLayouts(fs) || c->facts.extra().count(kTestLustreAnyFsFact) > 0) continue;
        const std::string key =
            p.set_stripe ? "stripe_count/stripe_size/stripe_index/stripe_pool/object_size"
                         : "checksums";
        if (!said.insert(p.name + "|" + c->address() + "|" + key).second) continue;
        const std::string where = !p.dir.empty() && p.dir[0] == '/'
                                      ? p.dir
                                      : c->facts.roots(0).path() + "/" + p.dir;
        refused.push_back(absl::StrFormat(
            "phase '%s': %s on agent %s (%s): the file system of %s there is %s, not Lustre or "
            "CephFS, which has no %s (on Lustre nodes the agent also needs --allow_lustre); drop "
            "the key or point dir at a Lustre or CephFS directory",
            p.name, key, c->address(), c->facts.hostname(), where, fs,
            p.set_stripe ? "per-directory striping" : "client data checksums to switch"));
      }
    }
  }
  if (refused.empty()) return {};
  return Fail(RunFailure::kBadPlan, absl::StrJoin(refused, "\n"));
}

}  // namespace lockstep
