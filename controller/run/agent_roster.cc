#include "controller/run/agent_roster.h"

#include <utility>

namespace lockstep {

void AgentRoster::Add(std::unique_ptr<AgentClient> agent) {
  agents_.push_back(Entry{std::move(agent)});
}

size_t AgentRoster::IndexOf(const AgentClient* agent) const {
  for (size_t i = 0; i < agents_.size(); ++i) {
    if (agents_[i].client.get() == agent) return i;
  }
  return agents_.size();  // not ours: callers break the REQUIRES
}

std::vector<AgentClient*> AgentRoster::all() const {
  std::vector<AgentClient*> out;
  for (const Entry& e : agents_) out.push_back(e.client.get());
  return out;
}

std::vector<AgentClient*> AgentRoster::InRun(bool clients) const {
  std::vector<AgentClient*> out;
  for (const Entry& e : agents_) {
    if (!e.dropped && (e.client->role() == v1::CLIENT) == clients) out.push_back(e.client.get());
  }
  return out;
}

std::vector<AgentClient*> AgentRoster::clients() const {
  std::vector<AgentClient*> out = InRun(/*clients=*/true);
  if (client_limit_ > 0 && out.size() > client_limit_) out.resize(client_limit_);
  return out;
}

std::vector<AgentClient*> AgentRoster::servers() const { return InRun(/*clients=*/false); }

std::vector<AgentClient*> AgentRoster::NotLost(const std::vector<AgentClient*>& agents) const {
  std::vector<AgentClient*> out;
  for (AgentClient* a : agents) {
    if (!IsLost(a)) out.push_back(a);
  }
  return out;
}

const ClockEstimate& AgentRoster::clock(const AgentClient* agent) const { return Of(agent).clock; }

bool AgentRoster::MarkLost(AgentClient* agent, const std::string& reason, bool restarted) {
  Entry& e = agents_[IndexOf(agent)];
  if (e.lost) return false;
  e.lost = true;
  e.restarted = restarted;
  e.lost_reason = reason;
  return true;
}

std::vector<size_t> AgentRoster::DropLost() {
  std::vector<size_t> dropped;
  for (size_t i = 0; i < agents_.size(); ++i) {
    if (agents_[i].lost && !agents_[i].dropped) {
      agents_[i].dropped = true;
      dropped.push_back(i);
    }
  }
  return dropped;
}

}  // namespace lockstep
