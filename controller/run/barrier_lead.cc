#include "controller/run/barrier_lead.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace lockstep {
namespace {

std::string Ms(absl::Duration d) {
  return absl::StrFormat("%.1f ms", absl::ToDoubleMilliseconds(d));
}

}  // namespace

LeadPlan BarrierLead::Plan(absl::Duration max_rtt, absl::Duration prepare_round,
                           size_t clients) const {
  LeadPlan plan;
  if (!deliveries_.empty()) {
    absl::Duration delivery;
    size_t of_clients = 0;
    for (const Delivery& d : deliveries_) {
      // The dispatch is per agent: more clients than observed take longer.
      const double scale =
          d.clients > 0 && clients > d.clients ? static_cast<double>(clients) / d.clients : 1.0;
      if (d.duration * scale > delivery) {
        delivery = d.duration * scale;
        of_clients = d.clients;
      }
    }
    plan.needed = kFloor + kSafety * delivery;
    plan.basis = absl::StrFormat("%s + %.2g x delivery %s (observed with %u clients, %u now)",
                                 Ms(kFloor), kSafety, Ms(delivery), of_clients, clients);
  } else {
    const bool known = prepare_round > absl::ZeroDuration();
    const absl::Duration first =
        known ? prepare_round : absl::Microseconds(200) * static_cast<int64_t>(clients);
    plan.needed = kFloor + kFirstSafety * first + 4 * max_rtt;
    plan.basis = absl::StrFormat("%s + %.2g x %s %s + 4 x RTT %s (no delivery observed yet)",
                                 Ms(kFloor), kFirstSafety,
                                 known ? "Prepare round" : "0.2 ms per client", Ms(first),
                                 Ms(max_rtt));
  }
  if (settle_ > absl::ZeroDuration()) {
    plan.needed += settle_;
    absl::StrAppend(&plan.basis, absl::StrFormat(" + settle %s (tasks left their wait %s late)",
                                                 Ms(settle_), Ms(settle_from_)));
  }
  plan.needed = std::max(plan.needed, kMinLead);
  plan.capped = plan.needed > kMaxLead;
  plan.lead = std::min(plan.needed, kMaxLead);
  if (plan.capped) {
    plan.note = absl::StrFormat(
        "warning: the start instant needs a lead of about %.1f s to reach %u clients (%s); it is "
        "capped at %.0f s, so the Starts will likely arrive after the instant, by about %.1f s",
        absl::ToDoubleSeconds(plan.needed), clients, plan.basis, absl::ToDoubleSeconds(kMaxLead),
        absl::ToDoubleSeconds(plan.needed - plan.lead));
  } else if (plan.lead > kLongLead) {
    plan.note = absl::StrFormat(
        "start lead %.1f s: reaching %u clients takes that long on this controller (%s)",
        absl::ToDoubleSeconds(plan.lead), clients, plan.basis);
  }
  return plan;
}

void BarrierLead::Observe(absl::Duration lead, absl::Duration min_margin, size_t clients) {
  if (++observed_ == 2) deliveries_.clear();  // the first phase's, cold
  deliveries_.push_back({std::max(lead - min_margin, absl::ZeroDuration()), clients});
  while (deliveries_.size() > kWindow) deliveries_.pop_front();
}

void BarrierLead::ObserveRelease(absl::Duration latest_release_late) {
  if (latest_release_late <= kReleaseTolerance) return;
  settle_ = std::min(settle_ + 2 * latest_release_late, kMaxSettle);
  settle_from_ = latest_release_late;
}

absl::Duration BarrierLead::FirstTransferAfter() const {
  if (opens_.empty()) return absl::ZeroDuration();
  const absl::Duration longest = *std::max_element(opens_.begin(), opens_.end());
  return std::min(kOpenSafety * longest, kMaxFirstTransferAfter);
}

void BarrierLead::ObserveOpens(absl::Duration longest_open) {
  if (longest_open <= absl::ZeroDuration()) return;
  opens_.push_back(longest_open);
  while (opens_.size() > kWindow) opens_.pop_front();
}

std::string LateStartWarning(const std::string& phase_id, const StartDelivery& d) {
  if (d.late.empty()) return "";
  constexpr size_t kNamed = 5;
  std::string names;
  for (size_t i = 0; i < std::min(d.late.size(), kNamed); ++i) {
    absl::StrAppend(&names, i == 0 ? "" : ", ", d.late[i]);
  }
  if (d.late.size() > kNamed) {
    absl::StrAppend(&names, absl::StrFormat(", ... (%u more)", d.late.size() - kNamed));
  }
  std::string when;
  if (d.acknowledged == 0) {
    when = "none has acknowledged yet, so the delivery rate is not known";
  } else {
    // At the rate the acknowledged clients had theirs, the rest need this long.
    const double per_client_s =
        absl::ToDoubleSeconds(d.since_first_sent) / static_cast<double>(d.acknowledged);
    const absl::Duration rest =
        absl::Seconds(per_client_s * static_cast<double>(d.late.size()));
    const absl::Duration whole = absl::Seconds(per_client_s * static_cast<double>(d.clients));
    when = absl::StrFormat(
        "at the rate the others had theirs (%u in %s) the last will have it about %s after the "
        "instant; a lead of about %s would be needed",
        d.acknowledged, Ms(d.since_first_sent), Ms(rest - d.before_instant),
        Ms(whole * BarrierLead::kSafety));
  }
  return absl::StrFormat(
      "warning: phase %s: %u of %u clients had not acknowledged their Start %s before the "
      "instant (%s; lead %s: %s); %s. The phase goes on: those clients start late and the "
      "start skew says by how much; the next phase's lead grows to the delivery observed",
      phase_id, d.late.size(), d.clients, Ms(d.before_instant), names, Ms(d.lead), d.lead_basis,
      when);
}

}  // namespace lockstep
