#include "controller/run/heartbeater.h"

#include <algorithm>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/clock.h"
#include "common/errors.h"
#include "common/names.h"
#include "common/wire_version.h"

namespace lockstep {
namespace {

absl::Duration PeriodOf(absl::Duration lease) {
  return absl::Milliseconds(std::max<int64_t>(absl::ToInt64Milliseconds(lease) / 3, 20));
}

}  // namespace

struct Heartbeater::Beat {
  grpc::ClientContext ctx;
  int64_t sent_mono_ns = 0;
  v1::HeartbeatRequest request;
  v1::HeartbeatReply reply;
};

Heartbeater::Heartbeater(std::vector<AgentClient*> agents, absl::Duration lease,
                         uint32_t stall_ms)
    : agents_(std::move(agents)),
      lease_(lease),
      period_(PeriodOf(lease)),
      stall_ms_(stall_ms),
      warn_stall_ms_(std::min<uint32_t>(stall_ms, kStallWarningMs)),
      last_answer_mono_ns_(agents_.size(), MonotonicNs()),
      next_send_mono_ns_(agents_.size()),
      confirmed_sent_mono_ns_(agents_.size(), INT64_MIN),
      last_error_(agents_.size()),
      beats_(agents_.size()),
      lost_(agents_.size()),
      stalled_(agents_.size()),
      stalled_since_mono_ns_(agents_.size(), 0),
      daemons_down_(agents_.size()) {
  for (size_t i = 0; i < agents_.size(); ++i) index_of_[agents_[i]] = i;
  // Staggered over the first period: no burst of every agent's call at once.
  const int64_t now_mono_ns = MonotonicNs();
  const int64_t period_ns = absl::ToInt64Nanoseconds(period_);
  for (size_t i = 0; i < agents_.size(); ++i) {
    next_send_mono_ns_[i] =
        now_mono_ns + static_cast<int64_t>(period_ns * static_cast<double>(i) / agents_.size());
  }
  thread_ = std::thread([this] { Loop(); });
}

Heartbeater::~Heartbeater() {
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
  }
  thread_.join();
  absl::MutexLock lock(&mu_);
  for (const auto& beat : beats_) {
    if (beat) beat->ctx.TryCancel();
  }
  mu_.Await(absl::Condition(
      +[](int* in_flight) { return *in_flight == 0; }, &in_flight_));
  finished_.clear();
}

std::optional<AgentTrouble> Heartbeater::Lost() {
  absl::MutexLock lock(&mu_);
  for (size_t i = 0; i < lost_.size(); ++i) {
    if (!lost_[i].reason.empty() && !forgotten_.count(i)) return lost_[i];
  }
  return std::nullopt;
}

std::vector<std::string> Heartbeater::TakeNotices() {
  absl::MutexLock lock(&mu_);
  std::vector<std::string> out;
  out.swap(notices_);
  return out;
}

void Heartbeater::NoteStalls(size_t i, const v1::HeartbeatReply& reply) {
  const std::string& who = agents_[i]->address();
  if (reply.stalled_size() == 0) {
    if (stalled_since_mono_ns_[i] != 0 && stalled_[i].empty()) {
      notices_.push_back(absl::StrFormat("agent %s: I/O is moving again", who));
    }
    stalled_since_mono_ns_[i] = 0;
    return;
  }
  const int64_t now_mono_ns = MonotonicNs();
  if (stalled_since_mono_ns_[i] == 0) {
    stalled_since_mono_ns_[i] = now_mono_ns;
    if (warn_stall_ms_ < stall_ms_) {
      notices_.push_back(absl::StrFormat(
          "warning: agent %s: I/O stalled (the file system does not answer): %s; the phase "
          "fails if it lasts io_stall_timeout_ms = %u",
          who, absl::StrJoin(reply.stalled(), "; "), stall_ms_));
    }
  }
  // Reported from warn_stall_ms_ on: stalled_ms_ once that lasted the rest.
  const int64_t rest_ns = int64_t{stall_ms_ - warn_stall_ms_} * 1'000'000;
  if (stalled_[i].empty() && now_mono_ns - stalled_since_mono_ns_[i] >= rest_ns) {
    stalled_[i] = absl::StrJoin(reply.stalled(), "; ");
  }
}

void Heartbeater::NoteDaemons(size_t i, const v1::HeartbeatReply& reply) {
  std::string now = absl::StrJoin(reply.daemons_down(), "; ");
  if (now == daemons_down_[i]) return;
  const std::string& who = agents_[i]->address();
  notices_.push_back(now.empty()
                         ? absl::StrFormat("agent %s: its file-system daemons run again", who)
                         : absl::StrFormat("warning: %s agent %s: %s", RoleName(agents_[i]->role()),
                                           who, now));
  daemons_down_[i] = std::move(now);
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
  if (lost_[index].reason.empty()) {
    lost_[index] = {index, "left out of the run"};
    lost_count_.fetch_add(1);
  }
}

std::string Heartbeater::LostReason(const AgentClient* agent) {
  if (lost_count_.load() == 0) return "";
  auto it = index_of_.find(agent);
  if (it == index_of_.end()) return "";
  absl::MutexLock lock(&mu_);
  return lost_[it->second].reason;
}

CallWatch Heartbeater::WatchCalls(const std::atomic<bool>* interrupted) {
  return CallWatch{[this](const AgentClient* agent) { return LostReason(agent); }, interrupted,
                   [this](const AgentClient* agent, int64_t sent_mono_ns) {
                     Renewed(agent, sent_mono_ns);
                   },
                   [this](const AgentClient* agent, int64_t sent_mono_ns) {
                     Sending(agent, sent_mono_ns);
                   }};
}

void Heartbeater::Sending(const AgentClient* agent, int64_t sent_mono_ns) {
  auto it = index_of_.find(agent);
  if (it == index_of_.end()) return;
  const size_t i = it->second;
  if (agents_[i]->facts.wire_minor() < kRenewingCallsWireMinor) return;
  absl::MutexLock lock(&mu_);
  if (!lost_[i].reason.empty()) return;
  // The lease runs at least until confirmed + lease = confirmed + 3 periods.
  // Held back to sent + period <= confirmed + 2 periods, the heartbeat still
  // has a period to reach the agent if this call never does.
  const int64_t period_ns = absl::ToInt64Nanoseconds(period_);
  if (confirmed_sent_mono_ns_[i] == INT64_MIN ||
      sent_mono_ns > confirmed_sent_mono_ns_[i] + period_ns) {
    return;
  }
  next_send_mono_ns_[i] = std::max(next_send_mono_ns_[i], sent_mono_ns + period_ns);
}

void Heartbeater::Renewed(const AgentClient* agent, int64_t sent_mono_ns) {
  auto it = index_of_.find(agent);
  if (it == index_of_.end()) return;
  const size_t i = it->second;
  absl::MutexLock lock(&mu_);
  if (!lost_[i].reason.empty()) return;
  last_answer_mono_ns_[i] = std::max(last_answer_mono_ns_[i], MonotonicNs());
  last_error_[i].clear();
  if (agents_[i]->facts.wire_minor() >= kRenewingCallsWireMinor) {
    confirmed_sent_mono_ns_[i] = std::max(confirmed_sent_mono_ns_[i], sent_mono_ns);
    next_send_mono_ns_[i] =
        std::max(next_send_mono_ns_[i], sent_mono_ns + absl::ToInt64Nanoseconds(period_));
  }
}

void Heartbeater::Loop() {
  const absl::Duration tick = std::min(period_, absl::Milliseconds(50));
  for (;;) {
    {
      absl::MutexLock lock(&mu_);
      mu_.AwaitWithTimeout(absl::Condition(&stop_), tick);
      if (stop_) return;
    }
    Tick();
  }
}

void Heartbeater::Tick() {
  std::vector<std::pair<size_t, Beat*>> due;
  std::vector<std::unique_ptr<Beat>> finished;
  {
    absl::MutexLock lock(&mu_);
    finished.swap(finished_);
    const int64_t now_mono_ns = MonotonicNs();
    for (size_t i = 0; i < agents_.size(); ++i) {
      if (!lost_[i].reason.empty()) continue;
      const absl::Duration silent = absl::Nanoseconds(now_mono_ns - last_answer_mono_ns_[i]);
      if (silent > lease_) {
        lost_[i] = {i, absl::StrFormat("no heartbeat answer for %d ms (lease %d ms)%s",
                                       absl::ToInt64Milliseconds(silent),
                                       absl::ToInt64Milliseconds(lease_),
                                       last_error_[i].empty() ? "" : ": " + last_error_[i])};
        lost_count_.fetch_add(1);
        if (beats_[i]) beats_[i]->ctx.TryCancel();
        continue;
      }
      if (beats_[i] || now_mono_ns < next_send_mono_ns_[i]) continue;
      next_send_mono_ns_[i] = now_mono_ns + absl::ToInt64Nanoseconds(period_);
      beats_[i] = std::make_unique<Beat>();
      Beat* beat = beats_[i].get();
      beat->sent_mono_ns = now_mono_ns;
      beat->ctx.set_deadline(std::chrono::system_clock::now() +
                             absl::ToChronoMilliseconds(period_));
      beat->request.set_session_id(agents_[i]->session_id);
      beat->request.set_stall_ms(warn_stall_ms_);
      ++in_flight_;
      due.emplace_back(i, beat);
    }
  }
  // Started outside the lock: an answer's callback takes it.
  for (auto [i, beat] : due) {
    agents_[i]->stub()->async()->Heartbeat(
        &beat->ctx, &beat->request, &beat->reply, [this, i = i](grpc::Status s) {
          absl::MutexLock lock(&mu_);
          Answered(i, s.ok() ? absl::OkStatus() : FromGrpcStatus(s, agents_[i]->address()),
                   beats_[i]->sent_mono_ns, beats_[i]->reply);
          // Not destroyed in its own callback: the next tick does.
          finished_.push_back(std::move(beats_[i]));
          --in_flight_;
        });
  }
}

void Heartbeater::Answered(size_t i, const absl::Status& status, int64_t sent_mono_ns,
                           const v1::HeartbeatReply& reply) {
  if (!lost_[i].reason.empty()) return;
  if (status.ok()) {
    last_answer_mono_ns_[i] = MonotonicNs();
    confirmed_sent_mono_ns_[i] = std::max(confirmed_sent_mono_ns_[i], sent_mono_ns);
    last_error_[i].clear();
    NoteStalls(i, reply);
    NoteDaemons(i, reply);
  } else if (absl::IsFailedPrecondition(status)) {
    lost_[i] = {i,
                std::string(status.message()) +
                    " (the agent dropped our session: restarted, or its lease expired)",
                KindOf(status)};
    lost_count_.fetch_add(1);
  } else {
    last_error_[i] = std::string(status.message());
  }
}

}  // namespace lockstep
