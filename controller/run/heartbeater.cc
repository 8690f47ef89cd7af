#include "controller/run/heartbeater.h"

#include <algorithm>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/clock.h"
#include "common/errors.h"

namespace lockstep {

Heartbeater::Heartbeater(std::vector<AgentClient*> agents, absl::Duration lease,
                         uint32_t stall_ms)
    : agents_(std::move(agents)),
      lease_(lease),
      stall_ms_(stall_ms),
      last_answer_mono_ns_(agents_.size(), MonotonicNs()),
      lost_(agents_.size()),
      stalled_(agents_.size()),
      thread_([this] { Loop(); }) {}

Heartbeater::~Heartbeater() {
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
  }
  thread_.join();
}

std::optional<AgentTrouble> Heartbeater::Lost() {
  absl::MutexLock lock(&mu_);
  for (size_t i = 0; i < lost_.size(); ++i) {
    if (!lost_[i].reason.empty() && !forgotten_.count(i)) return lost_[i];
  }
  return std::nullopt;
}

std::optional<AgentTrouble> Heartbeater::Stalled() {
  absl::MutexLock lock(&mu_);
  for (size_t i = 0; i < stalled_.size(); ++i) {
    if (!stalled_[i].empty() && !forgotten_.count(i)) return AgentTrouble{i, stalled_[i]};
  }
  return std::nullopt;
}

void Heartbeater::Forget(size_t index) {
  absl::MutexLock lock(&mu_);
  forgotten_.insert(index);
  if (lost_[index].reason.empty()) lost_[index] = {index, "left out of the run"};
}

void Heartbeater::Loop() {
  const absl::Duration period =
      absl::Milliseconds(std::max<int64_t>(absl::ToInt64Milliseconds(lease_) / 3, 20));
  for (;;) {
    {
      absl::MutexLock lock(&mu_);
      mu_.AwaitWithTimeout(absl::Condition(&stop_), period);
      if (stop_) return;
    }
    Round(period);
  }
}

void Heartbeater::Round(absl::Duration period) {
  std::vector<AgentClient*> targets;
  std::vector<size_t> which;
  std::vector<v1::HeartbeatRequest> requests;
  {
    absl::MutexLock lock(&mu_);
    for (size_t i = 0; i < agents_.size(); ++i) {
      if (!lost_[i].reason.empty()) continue;
      targets.push_back(agents_[i]);
      which.push_back(i);
      requests.emplace_back().set_session_id(agents_[i]->session_id);
      requests.back().set_stall_ms(stall_ms_);
    }
  }
  if (targets.empty()) return;
  // A round waits for its slowest answer: with a deadline of the lease, one
  // hung agent would space the rounds lease + period apart and let every
  // other agent's lease expire. The period keeps rounds ≤ 2 periods apart.
  auto replies = FanOut<v1::HeartbeatRequest, v1::HeartbeatReply>(targets, requests, period,
                                                                  LOCKSTEP_ASYNC(Heartbeat));
  const int64_t now_mono_ns = MonotonicNs();
  absl::MutexLock lock(&mu_);
  for (size_t k = 0; k < targets.size(); ++k) {
    const size_t i = which[k];
    const absl::Status& status = replies[k].status();
    const absl::Duration silent = absl::Nanoseconds(now_mono_ns - last_answer_mono_ns_[i]);
    if (replies[k].ok()) {
      last_answer_mono_ns_[i] = now_mono_ns;
      if (replies[k]->stalled_size() > 0 && stalled_[i].empty()) {
        stalled_[i] = absl::StrJoin(replies[k]->stalled(), "; ");
      }
    } else if (absl::IsFailedPrecondition(status)) {
      lost_[i] = {i,
                  std::string(status.message()) +
                      " (the agent dropped our session: restarted, or its lease expired)",
                  KindOf(status)};
    } else if (silent > lease_) {
      lost_[i] = {i,
                  absl::StrFormat("no heartbeat answer for %d ms (lease %d ms): %s",
                                  absl::ToInt64Milliseconds(silent),
                                  absl::ToInt64Milliseconds(lease_),
                                  status.message()),
                  KindOf(status)};
    }
  }
}

}  // namespace lockstep
