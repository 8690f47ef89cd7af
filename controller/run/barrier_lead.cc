#include "controller/run/barrier_lead.h"

#include <algorithm>

namespace lockstep {

absl::Duration BarrierLead::Next(absl::Duration max_rtt, absl::Duration prepare_round,
                                 size_t clients) const {
  absl::Duration lead;
  if (!deliveries_.empty()) {
    lead = kFloor + kSafety * *std::max_element(deliveries_.begin(), deliveries_.end());
  } else {
    const absl::Duration first = prepare_round > absl::ZeroDuration()
                                     ? prepare_round
                                     : absl::Microseconds(200) * static_cast<int64_t>(clients);
    lead = kFloor + kFirstSafety * first + 4 * max_rtt;
  }
  return std::clamp(lead, kMinLead, kMaxLead);
}

void BarrierLead::Observe(absl::Duration lead, absl::Duration min_margin) {
  if (++observed_ == 2) deliveries_.clear();  // the first phase's, cold
  deliveries_.push_back(std::max(lead - min_margin, absl::ZeroDuration()));
  while (deliveries_.size() > kWindow) deliveries_.pop_front();
}

}  // namespace lockstep
