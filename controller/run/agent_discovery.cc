#include "controller/run/agent_discovery.h"

#include <algorithm>
#include <set>
#include <thread>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"

namespace lockstep {
namespace {

std::string Nodes(const std::vector<std::string>& nodes) {
  constexpr size_t kShown = 20;
  if (nodes.size() <= kShown) return absl::StrJoin(nodes, ", ");
  return absl::StrCat(absl::StrJoin(nodes.begin(), nodes.begin() + kShown, ", "),
                      absl::StrFormat(" and %d more", nodes.size() - kShown));
}

}  // namespace

absl::StatusOr<std::vector<Announcement>> AwaitAnnouncements(const AnnounceWait& wait) {
  const std::set<std::string> wanted(wait.nodes.begin(), wait.nodes.end());
  const size_t expect = wait.expect > 0 ? wait.expect : std::max<size_t>(wanted.size(), 1);
  const absl::Time deadline = absl::Now() + wait.timeout;
  std::vector<Announcement> found;
  for (;;) {
    auto read = ReadAnnouncements(wait.dir);
    if (!read.ok()) return read.status();
    found = *std::move(read);
    for (const Announcement& a : found) {
      if (!wanted.empty() && wanted.count(a.node) == 0) {
        return absl::FailedPreconditionError(absl::StrFormat(
            "%s announces node %s (%s), which is not one of the expected nodes (%s): an agent "
            "of another job or a stale file; remove it, or use a directory of this job's own",
            a.file, a.node, a.address, Nodes(wait.nodes)));
      }
    }
    std::vector<std::string> missing;
    for (const std::string& n : wanted) {
      if (std::none_of(found.begin(), found.end(),
                       [&](const Announcement& a) { return a.node == n; })) {
        missing.push_back(n);
      }
    }
    if (found.size() >= expect && missing.empty()) break;
    if (wait.interrupted != nullptr && wait.interrupted->load()) {
      return absl::CancelledError("interrupted while waiting for agents to announce");
    }
    if (absl::Now() >= deadline) {
      std::vector<std::string> seen;
      for (const Announcement& a : found) seen.push_back(a.node);
      return absl::DeadlineExceededError(absl::StrFormat(
          "%d of %d agents announced in %s within %s%s%s: check that lockstep-agent started on "
          "%s (its log says why not), or wait longer (%s)",
          found.size(), expect, wait.dir, absl::FormatDuration(wait.timeout),
          missing.empty() ? "" : absl::StrCat("; never announced: ", Nodes(missing)),
          seen.empty() ? "" : absl::StrCat("; announced: ", Nodes(seen)),
          missing.empty() ? "the missing nodes" : "those nodes", wait.wait_flag));
    }
    std::this_thread::sleep_for(absl::ToChronoMilliseconds(wait.poll));
  }
  return found;
}

std::vector<AgentPlan> AgentsOf(const std::vector<Announcement>& announced) {
  std::vector<AgentPlan> out;
  for (const Announcement& a : announced) out.push_back({a.address, a.role});
  return out;
}

}  // namespace lockstep
