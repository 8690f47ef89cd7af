#include "controller/run/fs_checks.h"

#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/files.h"
#include "common/root_facts.h"
#include "controller/plan/sweep.h"

namespace lockstep {
namespace {

// The layout keys `p` sets, as the plan wrote them ("stripe_count = 4,
// stripe_size = 1048576"): what a refusal names.
std::string LayoutKeysOf(const PhasePlan& p) {
  std::vector<std::string> keys;
  if (p.stripe_count != 0) keys.push_back(absl::StrFormat("stripe_count = %d", p.stripe_count));
  if (p.stripe_size_bytes != 0) {
    keys.push_back(absl::StrFormat("stripe_size = %u", p.stripe_size_bytes));
  }
  if (p.stripe_index != -1) keys.push_back(absl::StrFormat("stripe_index = %d", p.stripe_index));
  if (!p.stripe_pool.empty()) keys.push_back(absl::StrFormat("stripe_pool = \"%s\"", p.stripe_pool));
  if (p.object_size_bytes != 0) {
    keys.push_back(absl::StrFormat("object_size = %u", p.object_size_bytes));
  }
  return keys.empty() ? "a layout key" : absl::StrJoin(keys, ", ");
}

}  // namespace

RunError CheckFsSettings(const ResolvedPlan& resolved, const std::vector<AgentClient*>& clients) {
  std::vector<std::string> refused;
  std::set<std::string> said;  // one line per phase, agent and key
  const size_t phases = resolved.tests.empty() ? 0 : resolved.tests.front().size();
  for (size_t i = 0; i < phases; ++i) {
    for (const std::vector<PhasePlan>& test : resolved.tests) {
      const PhasePlan& p = test[i];
      const bool crc = p.checksums != v1::CHECKSUMS_UNCHANGED;
      if (!p.set_stripe && !crc) continue;
      for (const AgentClient* c : clients) {
        const v1::RootFacts* root = RootOf(p.dir, c->facts);
        if (root == nullptr) continue;  // not below a root: Prepare says so
        const v1::FsCapabilities can = CapabilitiesOf(*root);
        const std::string where =
            !p.dir.empty() && p.dir[0] == '/' ? p.dir : root->path() + "/" + p.dir;
        // `setting`: "KEY = VALUE", as the plan wrote it.
        auto refuse = [&](const std::string& setting, const char* which, const char* fix) {
          if (!said.insert(p.name + "|" + c->address() + "|" + setting).second) return;
          refused.push_back(absl::StrFormat(
              "phase '%s' on agent %s (%s): %s: the file system of %s there is %s, which "
              "%s; drop the key or point dir at a file system that has %s",
              p.name, c->address(), c->facts.hostname(), setting, where, FsNameOf(*root),
              which, fix));
        };
        if (p.set_stripe && !can.layouts()) {
          refuse(LayoutKeysOf(p), "takes no per-directory layout",
                 "one (Lustre, CephFS; on Lustre nodes the agent also needs --allow_lustre)");
        }
        if (crc && !can.checksums()) {
          refuse(p.checksums == v1::CHECKSUMS_ON ? "checksums = true" : "checksums = false",
                 "has no client data checksums to switch at run time",
                 "them (Lustre, with --allow_lustre on its nodes; CephFS reads its data CRCs, "
                 "ms_crc_data, only when a client mounts: remount the clients and compare two "
                 "runs)");
        }
      }
    }
  }
  if (refused.empty()) return {};
  return Fail(RunFailure::kBadPlan, absl::StrJoin(refused, "\n"));
}

}  // namespace lockstep
