// The agent's configuration file (`lockstep-agent --config FILE`, TOML).
// Command-line flags given explicitly override it.
//
//   listen = "0.0.0.0:7070"
//   role = "client"                  # client | oss | mds
//   roots = ["/lustre/scratch/lockstep"]
//   insecure = false                 # plaintext; loopback listen addresses only
//   allow_commands = ["/usr/bin/tar", "/usr/bin/make"]  # COMMAND phases; absolute paths
//   command_user = "nobody"          # default: nobody as root, else the agent's own account
//   state_dir = "/var/lib/lockstep"  # the session ledger; "" = none (DefaultStateDir)
//   [tls]
//   ca = "/etc/lockstep/ca.pem"
//   cert = "/etc/lockstep/agent.pem"
//   key = "/etc/lockstep/agent.key"
//   allow = ["controller"]           # controller certificate names; ["*"] = any from the CA
//   [permissions]
//   drop_caches = true
//   lustre = false                   # lfs setstripe, lctl set_param
//   [lustre]
//   lfs = "lfs"                      # a name on PATH or an absolute path
//   lctl = "lctl"
//   [ceph]                           # server agents of a CephFS cluster
//   daemons = ["osd.0", "osd.1"]     # what this host serves (perf counters, cache drop)
//   admin_socket = "/var/run/ceph/$cluster-$name.asok"   # Ceph's admin_socket option
//   cluster = "ceph"
//   [limits]
//   max_tasks = 4096
//   max_bytes_per_phase = "0"        # 0 = no limit; sizes as in plans
//   default_lease_ms = 5000
//   [telemetry]
//   interval_ms = 1000
//   devices = ["sda"]
//   ifaces = ["eth0"]
#ifndef LOCKSTEP_AGENT_CONFIG_H_
#define LOCKSTEP_AGENT_CONFIG_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "agent/agent_core.h"

namespace lockstep {

struct AgentConfig {
  std::string listen = "0.0.0.0:7070";
  bool insecure = false;
  std::string tls_ca, tls_cert, tls_key;
  std::vector<std::string> tls_allow = {"controller"};
  // --announce DIR, --node NAME, --advertise HOST (flags only): where and as
  // what the agent announces itself (common/announce.h); empty: no file.
  std::string announce_dir, node, advertise;
  // --once: exit when the first controller session ends.
  bool once = false;
  // --local_parent PID, --local_dir DIR (flags only; `lockstep run --local`
  // sets them): exit when the parent dies, remove DIR on exit.
  int local_parent_pid = 0;
  std::string local_dir;
  AgentOptions options;
};

// Where an agent keeps its session ledger (agent/session_ledger.h) unless
// told: /var/lib/lockstep as root, else $HOME/.local/state/lockstep ("" with
// no HOME).
std::string DefaultStateDir();

// Parses `text` (named `source` in errors: "file:line:column: key: why").
absl::StatusOr<AgentConfig> ParseAgentConfig(const std::string& text, const std::string& source);
absl::StatusOr<AgentConfig> LoadAgentConfig(const std::string& path);

}  // namespace lockstep

#endif  // LOCKSTEP_AGENT_CONFIG_H_
