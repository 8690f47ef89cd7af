// The agents of one run and what the run knows of each: its client (address,
// role, session, host facts), its clock estimate, and whether it was lost
// (and then whether it restarted: it still answers but forgot our session),
// and whether the run went on without it. One set with queries, in place of
// a container per view.
//
// Indexes follow the plan's order and never change (run.json's agents, the
// Heartbeater's reports). Client ranks follow the order of clients(), which
// shrinks when lost agents are dropped (on_agent_loss = "continue").
//
// Owns: the AgentClients; pointers to them stay valid for its life.
// Thread: the coordinator's only. (The Heartbeater holds the pointers of
// all() and reports by index.)
#ifndef LOCKSTEP_CONTROLLER_RUN_AGENT_ROSTER_H_
#define LOCKSTEP_CONTROLLER_RUN_AGENT_ROSTER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "controller/run/agent_client.h"
#include "controller/run/clock_sync.h"

namespace lockstep {

class AgentRoster {
 public:
  // Adds an agent at the next index.
  void Add(std::unique_ptr<AgentClient> agent);

  size_t size() const { return agents_.size(); }
  AgentClient* at(size_t index) const { return agents_[index].client.get(); }
  // REQUIRES: `agent` is one of ours.
  size_t IndexOf(const AgentClient* agent) const;

  // Every agent in index order, lost and dropped ones too.
  std::vector<AgentClient*> all() const;
  // The role-client agents still in the run, in rank order; an agent lost
  // during a phase stays until DropLost.
  std::vector<AgentClient*> clients() const;
  // Only the first `n` of those take part from now on (the plan's
  // client_agents sweep); 0: all of them.
  void LimitClients(size_t n) { client_limit_ = n; }
  // How many client agents are still in the run, whatever the limit.
  size_t available_clients() const { return InRun(/*clients=*/true).size(); }
  // The OSS and MDS agents still in the run.
  std::vector<AgentClient*> servers() const;
  // `agents` less the lost ones.
  std::vector<AgentClient*> NotLost(const std::vector<AgentClient*>& agents) const;

  const ClockEstimate& clock(const AgentClient* agent) const;
  const ClockEstimate& clock(size_t index) const { return agents_[index].clock; }
  void set_clock(size_t index, const ClockEstimate& clock) { agents_[index].clock = clock; }

  // Marks `agent` lost for `reason`; `restarted`: it still answers, but no
  // longer knows our session. False if it was lost already (the first
  // reason stays).
  bool MarkLost(AgentClient* agent, const std::string& reason, bool restarted);
  bool IsLost(const AgentClient* agent) const { return Of(agent).lost; }
  bool IsRestarted(const AgentClient* agent) const { return Of(agent).restarted; }
  const std::string& lost_reason(size_t index) const { return agents_[index].lost_reason; }

  // Takes every lost agent out of clients() and servers(); returns the
  // indexes taken out by this call.
  std::vector<size_t> DropLost();

 private:
  struct Entry {
    std::unique_ptr<AgentClient> client;
    ClockEstimate clock;
    bool lost = false;
    bool restarted = false;  // lost, and answers without our session
    bool dropped = false;    // the run goes on without it
    std::string lost_reason;
  };
  const Entry& Of(const AgentClient* agent) const { return agents_[IndexOf(agent)]; }
  std::vector<AgentClient*> InRun(bool clients) const;

  std::vector<Entry> agents_;
  size_t client_limit_ = 0;
};

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_RUN_AGENT_ROSTER_H_
