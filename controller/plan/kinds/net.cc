// kind = "net": the network between agents at one instant (issue 42), as
// lnet_selftest's brw test or iperf3 measures it. With server agents in the
// run, every client agent streams to every server agent (client -> servers,
// the direction of a write; each server reads what it is sent); without,
// each client streams to the next (a ring, client i -> client i+1). Keys:
// streams (per pair), message_size, duration_seconds, ping_count, ping_size
// and interface (the data network's interface on every agent; "" = the
// address the controller reaches each agent at). No files: dir is not needed.
#include <algorithm>
#include <map>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/limits.h"
#include "common/net.h"
#include "common/sizes.h"
#include "common/status_macros.h"
#include "common/wire_version.h"
#include "controller/plan/kinds/layers_plan.h"
#include "controller/plan/kinds/key_table.h"
#include "controller/plan/kinds/registry.h"
#include "controller/plan/plan_smoke.h"
#include "controller/record/ior_math.h"
#include "controller/record/phase_reduce.h"

namespace lockstep {

std::string RefuseBeforeLayers(const char* kind, const std::string& phase, const std::string& who,
                               const v1::HostFacts& facts) {
  if (facts.wire_minor() >= kLayersWireMinor) return "";
  return absl::StrFormat("phase %s: %s (lockstep %s, wire protocol 1.%u) cannot run %s phases; "
                         "upgrade it to wire protocol 1.%u or later",
                         phase, who, facts.agent_version(), facts.wire_minor(), kind,
                         kLayersWireMinor);
}

}  // namespace lockstep

namespace lockstep::kinds {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;

size_t ServerCount(const std::vector<TakerFacts>& takers) {
  return static_cast<size_t>(
      std::count_if(takers.begin(), takers.end(), [](const TakerFacts& t) { return t.server; }));
}

std::string HostOf(const std::string& address) {
  auto split = SplitHostPort(address);
  return split.ok() ? split->first : address;
}

// The per-pair figures of a net phase: one line per (sender agent, peer).
std::vector<std::string> PairLines(const v1::PhaseRecord& pr,
                                   const std::map<std::string, std::string>& host_by_address) {
  auto name = [&](const std::string& address) {
    auto it = host_by_address.find(address);
    return it == host_by_address.end() || it->second.empty() ? address : it->second;
  };
  struct Pair {
    uint64_t bytes = 0, retransmits = 0;
    int64_t start = INT64_MAX, stop = INT64_MIN;
    uint32_t streams = 0, rtt_us = 0;
  };
  std::map<std::pair<std::string, std::string>, Pair> pairs;
  for (const v1::AgentPhaseRecord& a : pr.agents()) {
    for (const v1::TaskResult& t : a.tasks()) {
      if (!t.has_net() || t.net().receiver()) continue;
      Pair& p = pairs[{a.address(), t.net().peer()}];
      p.bytes += t.bytes();
      p.retransmits += t.net().retransmits();
      p.start = std::min(p.start, t.rdwr_start_unix_ns());
      p.stop = std::max(p.stop, t.rdwr_stop_unix_ns());
      p.rtt_us = std::max(p.rtt_us, t.net().rtt_us());
      ++p.streams;
    }
  }
  std::vector<std::string> out;
  for (const auto& [who, p] : pairs) {
    const double secs = p.stop > p.start ? static_cast<double>(p.stop - p.start) / 1e9 : 0;
    out.push_back(absl::StrFormat(
        "net: %s -> %s: %.2f MiB/s (%s in %.3f s, %u stream%s, %u retransmits, srtt %u us)",
        name(who.first), name(who.second), secs > 0 ? static_cast<double>(p.bytes) / kMiB / secs : 0,
        HumanBytes(p.bytes), secs, p.streams, p.streams == 1 ? "" : "s", p.retransmits, p.rtt_us));
  }
  return out;
}

class NetKind : public PhaseKindDef {
 public:
  v1::PhaseKind wire() const override { return v1::NET; }
  // No shared I/O key: its data goes between agents, not through a file
  // system (its sizes are its own keys).
  uint32_t IoKeys() const override { return 0; }
  std::string IoKeyHint(const std::string& key) const override {
    return key == "transfer_size" ? "a net phase's size per send is message_size" : "";
  }

  // No files: the agents hold their first root (agent/workloads/net.h).
  // (assign: GCC 12 warns, -Wrestrict, on = ".")
  void SetDefaults(PhasePlan* p) const override { p->dir.assign(1, '.'); }

  std::vector<std::string> OwnKeys() const override {
    std::vector<std::string> keys = keys_.Keys();
    keys.push_back("interface");
    return keys;
  }

  absl::Status ReadKeys(const TableReader& r, const Plan&, PhasePlan* p) const override {
    NetPlan other_kind;
    NetPlan& n = p->kind == wire() ? p->Own<NetPlan>() : other_kind;
    RETURN_IF_ERROR(keys_.Read(r, &n));
    RETURN_IF_ERROR(r.String("interface", &n.interface));
    RETURN_IF_ERROR(RefuseOwnKeys(r, *p));
    if (p->kind != wire()) return absl::OkStatus();
    if (n.message_bytes < 4096 || n.message_bytes > kMaxNetMessageBytes) {
      return r.Error(*r.Get("message_size"), "message_size",
                     absl::StrFormat("%s is outside 4 KiB..64 MiB; 1 MiB is lnet_selftest's and "
                                     "a good default",
                                     HumanBytes(n.message_bytes)));
    }
    if (n.ping_bytes > kMaxNetPingBytes) {
      return r.Error(*r.Get("ping_size"), "ping_size",
                     absl::StrFormat("%s is over 1 MiB; a ping is a small message (64 bytes)",
                                     HumanBytes(n.ping_bytes)));
    }
    if (n.interface.find('/') != std::string::npos || n.interface.size() > 15) {
      return r.Error(*r.Get("interface"), "interface",
                     absl::StrFormat("\"%s\" is not an interface name (such as \"eth0\" or "
                                     "\"ib0\")",
                                     n.interface));
    }
    return absl::OkStatus();
  }

  void WriteToml(const PhasePlan& p, TomlLines* out) const override {
    const NetPlan& n = p.Own<NetPlan>();
    WriteKeepAndDelay(p, out);
    keys_.Write(n, out);
    if (!n.interface.empty()) out->String("interface", n.interface);
  }

  // The token is the run's to make, per phase (controller/run/phase_attempt).
  void FillSpec(const PhasePlan& p, v1::PhaseSpec* s) const override {
    const NetPlan& n = p.Own<NetPlan>();
    v1::NetSpec* net = s->mutable_net();
    net->set_streams_per_peer(n.streams);
    net->set_message_bytes(n.message_bytes);
    net->set_duration_ms(uint64_t{n.duration_seconds} * 1000);
    net->set_ping_count(n.ping_count);
    net->set_ping_bytes(static_cast<uint32_t>(n.ping_bytes));
    net->set_interface(n.interface);
    s->set_file_name("net");
  }

  bool LeavesFiles(const PhasePlan&) const override { return false; }

  PhaseTakers Takers() const override { return PhaseTakers::kClientsAndServers; }
  bool TakesServer(v1::Role role) const override { return role == v1::OSS; }

  std::string RefuseTakers(const PhasePlan& p, const std::vector<TakerFacts>& takers) const override {
    if (takers.size() >= 2) return "";
    return absl::StrFormat(
        "phase %s: a net phase measures between two agents at least, and the run has %s; add a "
        "server agent (role = \"oss\" in its config) or a second client agent",
        p.name, takers.empty() ? "none" : "only " + takers[0].address);
  }

  // An interface the agent's host did not report (HostFacts.nics: those up,
  // loopback left out) is refused before the run; the agent checks again at
  // Prepare (an older agent reports no NICs).
  std::string RefuseAgent(const PhasePlan& p, const std::string& who,
                          const v1::HostFacts& facts) const override {
    std::string old = RefuseBeforeLayers("net", p.name, who, facts);
    const std::string& want = p.Own<NetPlan>().interface;
    if (!old.empty() || want.empty() || want == "lo" || facts.nics_size() == 0) return old;
    std::vector<std::string> names;
    for (const v1::NicFacts& n : facts.nics()) {
      if (n.name() == want) return "";
      names.push_back(n.name());
    }
    return absl::StrFormat("phase %s: %s has no interface %s that is up; its interfaces: %s (fix "
                           "the phase's interface key)",
                           p.name, who, want, absl::StrJoin(names, ", "));
  }

  void AdaptForTaker(const std::vector<TakerFacts>& takers, size_t index,
                     v1::PhaseSpec* spec) const override {
    v1::NetSpec* net = spec->mutable_net();
    const uint32_t streams = net->streams_per_peer();
    const size_t servers = ServerCount(takers);
    const size_t clients = takers.size() - servers;
    if (servers == 0) {  // a ring: to the next client, from the one before
      net->set_send_peers(1);
      net->set_receive_streams(streams);
    } else if (!takers[index].server) {
      net->set_send_peers(static_cast<uint32_t>(servers));
      net->set_receive_streams(0);
    } else {
      net->set_send_peers(0);
      net->set_receive_streams(static_cast<uint32_t>(clients) * streams);
    }
    spec->set_tasks(net->send_peers() * streams + net->receive_streams());
  }

  std::vector<v1::NetPeer> PeersOf(const std::vector<TakerFacts>& takers,
                                   const std::vector<const v1::PrepareReply*>& replies,
                                   size_t index, const v1::PhaseSpec&) const override {
    auto peer = [&](size_t j) {
      v1::NetPeer p;
      p.set_host(replies[j]->net_address().empty() ? HostOf(takers[j].address)
                                                   : replies[j]->net_address());
      p.set_port(replies[j]->net_port());
      p.set_agent(takers[j].address);
      return p;
    };
    std::vector<v1::NetPeer> out;
    if (ServerCount(takers) == 0) {
      out.push_back(peer((index + 1) % takers.size()));
    } else if (!takers[index].server) {
      for (size_t j = 0; j < takers.size(); ++j) {
        if (takers[j].server) out.push_back(peer(j));
      }
    }
    return out;
  }

  // Row "net": the bytes every sending stream moved over the window from
  // the first stream's first byte to the last one's count acknowledged.
  void Reduce(const std::vector<const v1::TaskResult*>& tasks, const v1::PhaseSpec& spec,
              uint32_t rep, v1::PhaseRecord* pr) const override {
    std::vector<const v1::TaskResult*> senders;
    for (const v1::TaskResult* t : tasks) {
      if (!t->net().receiver()) senders.push_back(t);
    }
    v1::IterationRow& row = *pr->mutable_row();
    row.set_access("net");
    row.set_iter(rep);
    const double secs =
        Window(senders, &v1::TaskResult::rdwr_start_unix_ns, &v1::TaskResult::rdwr_stop_unix_ns);
    uint64_t bytes = 0, ops = 0;
    for (const v1::TaskResult* t : senders) {
      bytes += t->bytes();
      ops += t->ops();
    }
    row.set_bytes(bytes);
    row.set_expected_bytes(bytes);
    row.set_xfer_kib(static_cast<double>(spec.net().message_bytes()) / 1024);
    row.set_block_kib(row.xfer_kib());
    row.set_wrrd_s(secs);
    row.set_total_s(secs);
    if (secs > 0) {
      row.set_bw_mib(static_cast<double>(bytes) / kMiB / secs);
      row.set_iops(static_cast<double>(ops) / secs);
    }
  }

  bool IorReportRow() const override { return true; }

  std::vector<std::string> ReportNotes(
      const v1::PhaseRecord& pr,
      const std::map<std::string, std::string>& host_by_address) const override {
    std::vector<std::string> out = PairLines(pr, host_by_address);
    uint64_t retransmits = 0;
    for (const v1::AgentPhaseRecord& a : pr.agents()) {
      for (const v1::TaskResult& t : a.tasks()) retransmits += t.net().retransmits();
    }
    const v1::LatencySummary& l = pr.latency();
    out.push_back(absl::StrFormat(
        "net: %.2f MiB/s in all, %u retransmits; round trips (%u): p50 %.1f us, p99 %.1f us, "
        "max %.1f us",
        pr.row().bw_mib(), retransmits, l.ops(), l.p50_us(), l.p99_us(), l.max_us()));
    return out;
  }

  void CapForSmoke(const SmokeOptions&, SmokeCapper* c, PhasePlan* p) const override {
    c->Count("duration_seconds", uint32_t{2}, &p->Own<NetPlan>().duration_seconds);
    c->Count("ping_count", uint32_t{10}, &p->Own<NetPlan>().ping_count);
  }

  void Estimate(const Plan&, const PhasePlan& p, uint32_t, uint32_t,
                PhaseEstimate* e) const override {
    const NetPlan& n = p.Own<NetPlan>();
    e->timed_seconds = n.duration_seconds;
    e->note = absl::StrFormat("%u stream(s) per client and OSS pair for %u s", n.streams,
                              n.duration_seconds);
  }

 private:
  // Every key but interface (a name); FillSpec puts them in NetSpec, in its
  // units. Written back at any value: a net phase's defaults are not 0.
  using P = NetPlan;
  static constexpr KeyOptions kAlways{.write_zero = true};
  const KeyTable<P> keys_ =
      KeyTable<P>()
          .Uint32("streams", &P::streams, 1, kMaxNetStreamsPerPeer, nullptr, kAlways)
          .Size("message_size", &P::message_bytes, nullptr, kAlways)
          .Uint32("duration_seconds", &P::duration_seconds, 1, kMaxNetDurationMs / 1000, nullptr,
                  kAlways)
          .Uint32("ping_count", &P::ping_count, 0, 100000, nullptr, kAlways)
          .Size("ping_size", &P::ping_bytes, nullptr, kAlways);
};

}  // namespace

std::unique_ptr<PhaseKindDef> MakeNetKind() { return std::make_unique<NetKind>(); }

}  // namespace lockstep::kinds
