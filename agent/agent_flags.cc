#include "agent/agent_flags.h"

#include <array>
#include <cstdlib>
#include <limits>

#include "absl/strings/str_format.h"
#include "absl/time/time.h"
#include "common/names.h"
#include "common/net.h"
#include "common/status_macros.h"

namespace lockstep {
namespace {

constexpr uint64_t kUint32Max = std::numeric_limits<uint32_t>::max();

constexpr std::array<FlagSpec, 36> kAgentFlags = {{
    {.name = "config", .value_name = "FILE",
     .help = "agent configuration file (TOML, see deploy/agent.toml.example); it sets what the "
             "flags set plus limits (max_tasks, max_bytes_per_phase); flags given explicitly "
             "override it"},
    {.name = "listen", .value_name = "HOST:PORT", .default_value = "0.0.0.0:7070",
     .help = "address to listen on; PORT 0 picks a free port. Prints \"listening on HOST:PORT\" "
             "once bound"},
    {.name = "root", .kind = FlagKind::kList, .value_name = "DIR",
     .help = "a directory below which the agent may create files; a plan directory that "
             "resolves outside every root is refused."},
    {.name = "role", .value_name = "client|oss|mds", .default_value = "client",
     .help = "client nodes run tasks; oss and mds nodes join cache barriers and report "
             "telemetry"},
    {.name = "insecure", .kind = FlagKind::kBool,
     .help = "plaintext gRPC instead of mutual TLS; allowed only on a loopback --listen "
             "address"},
    {.name = "tls_ca", .value_name = "FILE",
     .help = "CA certificate (PEM) that controllers' certificates must chain to"},
    {.name = "tls_cert", .value_name = "FILE", .help = "this agent's certificate (PEM)"},
    {.name = "tls_key", .value_name = "FILE",
     .help = "this agent's private key (PEM, mode 0600)"},
    {.name = "tls_dir", .value_name = "DIR",
     .help = "a directory made by `lockstep certs init/issue`: uses DIR/ca.pem and this node's "
             "DIR/agent-NODE.pem and DIR/agent-NODE.key (NODE as for --node), so that one "
             "command line serves every node of a Slurm job; --tls_ca/--tls_cert/--tls_key "
             "override it"},
    {.name = "tls_allow", .kind = FlagKind::kList, .value_name = "NAME",
     .default_value = "controller",
     .help = "names (certificate CN or SAN) of the controllers allowed to drive this agent; "
             "\"*\": any certificate from the CA."},
    {.name = "allow_drop_caches", .kind = FlagKind::kBool, .default_value = "true",
     .help = "let controllers sync and drop this host's page cache (needs root)"},
    {.name = "allow_system_roots", .kind = FlagKind::kBool,
     .help = "let a --root be a system directory (/, /etc, /usr, /var/lib, ...); refused "
             "otherwise (config [permissions] system_roots)"},
    {.name = "allow_lustre", .kind = FlagKind::kBool,
     .help = "let controllers run lfs setstripe/getstripe and lctl set_param (client "
             "checksums, lock LRU)"},
    {.name = "lfs", .value_name = "PATH", .default_value = "lfs",
     .help = "the lfs program (with --allow_lustre): a name looked up on PATH or an absolute "
             "path, e.g. /usr/bin/lfs"},
    {.name = "lctl", .value_name = "PATH", .default_value = "lctl",
     .help = "the lctl program (with --allow_lustre): a name looked up on PATH or an absolute "
             "path, e.g. /usr/sbin/lctl"},
    {.name = "allow_command", .kind = FlagKind::kList, .value_name = "PATH",
     .help = "a program (absolute path) that command phases may run, once per program; "
             "nothing else runs, and never through a shell (config: allow_commands)",
     .separator = '\0'},
    {.name = "command_user", .value_name = "USER",
     .help = "the account command phases run as (default: nobody when the agent runs as root, "
             "else the agent's own account; root only when named here)"},
    {.name = "devices", .kind = FlagKind::kList, .value_name = "DEV",
     .help = "block devices whose throughput telemetry reports, e.g. sda,nvme0n1 (default: "
             "every whole disk)."},
    {.name = "ifaces", .kind = FlagKind::kList, .value_name = "IFACE",
     .help = "network interfaces telemetry reports (default: all)."},
    {.name = "telemetry_interval_ms", .kind = FlagKind::kUint, .value_name = "MS",
     .default_value = "1000", .help = "telemetry sampling interval", .min = 50,
     .max = 3600000},
    {.name = "telemetry_processes", .kind = FlagKind::kBool, .default_value = "true",
     .help = "per-process CPU in telemetry: reads /proc/PID/stat of every process at each "
             "sample (tens of ms with hundreds of multi-threaded processes); =false where many "
             "agents share one host, each of which would scan every process"},
    {.name = "default_lease_ms", .kind = FlagKind::kUint, .value_name = "MS",
     .default_value = "5000",
     .help = "lease when a controller asks for none: a controller silent this long loses the "
             "agent, which aborts the phase and removes the run's files",
     .min = 200, .max = 3600000},
    {.name = "announce", .value_name = "DIR",
     .help = "once listening, write DIR/NODE.agent (node, HOST:PORT, role) for `lockstep run "
             "--agents-from DIR`; removed at exit. DIR must be private (not group- or "
             "world-writable): whoever can write there can announce an agent of their own"},
    {.name = "node", .value_name = "NAME",
     .help = "node name to announce (default: $SLURMD_NODENAME, else the host name)"},
    {.name = "advertise", .value_name = "HOST",
     .help = "host name or address to announce (default: the --listen host, or the host name "
             "when listening on a wildcard address); the controller dials it, so the agent's "
             "certificate must name it"},
    {.name = "state_dir", .value_name = "DIR",
     .help = "where the agent records the files its session would leave behind, and at "
             "start-up removes those an earlier agent killed mid-run left in its roots "
             "(default: /var/lib/lockstep as root, else $HOME/.local/state/lockstep; \"\" "
             "for none)"},
    {.name = "once", .kind = FlagKind::kBool,
     .help = "exit (status 0) when the first controller session ends: the controller "
             "detached or its lease expired. For batch jobs, where the agent lives for one run"},
    {.name = "test_delay_per_transfer_us", .kind = FlagKind::kUint, .value_name = "US",
     .default_value = "0",
     .help = "TESTS ONLY: make every transfer this much slower, as on a slower device",
     .max = kUint32Max},
    {.name = "local_parent", .kind = FlagKind::kUint, .value_name = "PID",
     .default_value = "0",
     .help = "set by `lockstep run --local`: exit when process PID, this agent's parent, "
             "dies (a parent-death signal: SIGTERM), even by SIGKILL",
     .hidden = true},
    {.name = "local_dir", .value_name = "DIR",
     .help = "set by `lockstep run --local`: the controller's temporary directory "
             "(/tmp/lockstep-local-*), removed when this agent exits",
     .hidden = true},
    {.name = "test_delay_calls", .kind = FlagKind::kList, .value_name = "CALL,...",
     .help = "TESTS ONLY: calls (prepare, cache, start, cleanup) that wait --test_delay_call_ms "
             "first, as on a hung file system (heartbeats are still answered)"},
    {.name = "test_delay_call_ms", .kind = FlagKind::kUint, .value_name = "MS",
     .default_value = "0", .help = "TESTS ONLY: how long --test_delay_calls wait",
     .max = kUint32Max},
    {.name = "test_lustre_any_fs", .kind = FlagKind::kBool,
     .help = "TESTS ONLY: let lfs setstripe/getstripe run on directories that are not on "
             "Lustre (with fake lfs/lctl programs)"},
    {.name = "version", .kind = FlagKind::kBool,
     .help = "print the release, the wire protocol version and the build's commit, then exit"},
    {.name = "start_spin", .kind = FlagKind::kString, .value_name = "auto|never",
     .default_value = "auto",
     .help = "how tasks wait for a phase's start instant where the host's tasks fit its cores: "
             "auto spins the last 500 us (at SCHED_FIFO where permitted), never sleeps to the "
             "instant with a 1 ns timer slack (for hosts whose cores other work needs)"},
    {.name = "help-man", .kind = FlagKind::kBool,
     .help = "print the man page lockstep-agent.8 (roff)", .hidden = true},
}};

constexpr CommandSpec kAgent = {
    .program = "lockstep-agent",
    .synopsis =
        "--listen HOST:PORT --root DIR [--root DIR ...] [--role client|oss|mds]\n"
        "(--tls_ca CA.pem --tls_cert AGENT.pem --tls_key AGENT.key [--tls_allow NAME] | "
        "--insecure) [flags]\n"
        "--config /etc/lockstep/agent.toml [flags]",
    .summary = "the Lockstep agent on a client, OSS or MDS node",
    .description =
        "Serves one Lockstep controller at a time over gRPC with mutual TLS: prepares "
        "phases, drops caches, starts every task at the controller's start instant, reports "
        "timers, latency histograms and telemetry. It creates files only below its --root "
        "directories. It stays in the foreground; SIGINT or SIGTERM stops it.\n\n"
        "If its controller goes silent for a lease, it aborts the phase, removes the files "
        "the run wrote, restores any Lustre setting it changed and returns to idle. Another "
        "controller meanwhile gets \"busy: run R from C since T\".",
    .flags = kAgentFlags,
};

constexpr const CommandSpec* kAgentCommands[] = {&kAgent};

constexpr ManSection kAgentSections[] = {
    {.title = "Exit status",
     .text = "  0  stopped by SIGINT or SIGTERM\n"
             "  1  cannot listen on the address\n"
             "  2  bad flags or configuration (roots, TLS files, --insecure off loopback)"},
    {.title = "Files",
     .text = "/etc/lockstep/agent.toml (with deploy/lockstep-agent.service, a systemd unit)."},
    {.title = "See also", .text = "lockstep(1)"},
};

constexpr ProgramSpec kAgentProgram = {
    .name = "lockstep-agent",
    .man_section = 8,
    .summary = "the Lockstep agent on a client, OSS or MDS node",
    .commands = kAgentCommands,
    .sections = kAgentSections,
};

}  // namespace

const CommandSpec& AgentCommandSpec() { return kAgent; }

std::string AgentNodeName(const std::string& node_flag) {
  if (!node_flag.empty()) return node_flag;
  const char* slurm = std::getenv("SLURMD_NODENAME");
  if (slurm != nullptr && *slurm != '\0') return slurm;
  return LocalHostName();
}
const ProgramSpec& AgentProgram() { return kAgentProgram; }

absl::StatusOr<AgentConfig> AgentConfigFromFlags(const ParsedFlags& f) {
  AgentConfig config;
  const std::string& config_path = f.GetString("config");
  if (!config_path.empty()) {
    ASSIGN_OR_RETURN(config, LoadAgentConfig(config_path));
  }
  // Without a config file every flag applies, given or not.
  const bool no_config = config_path.empty();
  auto use = [&](const char* name) { return no_config || f.Has(name); };
  AgentOptions& o = config.options;
  if (use("role")) {
    const std::string& role = f.GetString("role");
    auto parsed = ParseRole(role);
    if (!parsed) {
      return absl::InvalidArgumentError(
          absl::StrFormat("--role %s is not one of client, oss, mds", role));
    }
    o.role = *parsed;
  }
  if (f.Has("root")) o.roots = f.GetList("root");
  if (use("default_lease_ms")) o.default_lease_ms = static_cast<uint32_t>(f.GetUint("default_lease_ms"));
  if (use("allow_drop_caches")) o.allow_drop_caches = f.GetBool("allow_drop_caches");
  if (use("allow_lustre")) o.allow_lustre = f.GetBool("allow_lustre");
  if (use("allow_system_roots")) o.allow_system_roots = f.GetBool("allow_system_roots");
  if (use("lfs")) o.lustre_options.lfs = f.GetString("lfs");
  if (use("lctl")) o.lustre_options.lctl = f.GetString("lctl");
  for (const std::string* tool : {&o.lustre_options.lfs, &o.lustre_options.lctl}) {
    if (tool->empty() || (tool->find('/') != std::string::npos && (*tool)[0] != '/')) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "--lfs/--lctl \"%s\": give a program name looked up on PATH (lfs) or an absolute "
          "path (/usr/bin/lfs)",
          *tool));
    }
  }
  if (f.GetBool("test_lustre_any_fs")) {
    // Every root is then Lustre to the fs/ layer, and its capabilities
    // in the host facts say so (controller/run/fs_checks.h).
    o.lustre_options.require_lustre = false;
  }
  if (f.Has("allow_command")) o.allow_commands = f.GetList("allow_command");
  if (f.Has("command_user")) o.command_user = f.GetString("command_user");
  if (f.Has("start_spin")) {
    const std::string& spin = f.GetString("start_spin");
    if (spin != "auto" && spin != "never") {
      return absl::InvalidArgumentError(
          absl::StrFormat("--start_spin \"%s\": give auto or never", spin));
    }
    o.runner.spin_start = spin == "auto";
  }
  o.runner.test_delay_per_transfer =
      absl::Microseconds(static_cast<int64_t>(f.GetUint("test_delay_per_transfer_us")));
  if (f.Has("test_delay_calls")) o.test_delay_calls = f.GetList("test_delay_calls");
  o.test_delay_call = absl::Milliseconds(static_cast<int64_t>(f.GetUint("test_delay_call_ms")));
  if (use("telemetry_interval_ms")) {
    o.telemetry_options.interval_ms = static_cast<uint32_t>(f.GetUint("telemetry_interval_ms"));
  }
  if (use("telemetry_processes")) {
    o.telemetry_options.process_cpu = f.GetBool("telemetry_processes");
  }
  if (use("devices")) o.telemetry_options.devices = f.GetList("devices");
  if (use("ifaces")) o.telemetry_options.ifaces = f.GetList("ifaces");
  if (use("insecure")) config.insecure = f.GetBool("insecure");
  if (use("tls_ca")) config.tls_ca = f.GetString("tls_ca");
  if (use("tls_cert")) config.tls_cert = f.GetString("tls_cert");
  if (use("tls_key")) config.tls_key = f.GetString("tls_key");
  if (use("tls_allow")) config.tls_allow = f.GetList("tls_allow");
  if (use("listen")) config.listen = f.GetString("listen");
  if (f.Has("tls_dir")) {
    const std::string& dir = f.GetString("tls_dir");
    const std::string node = AgentNodeName(f.GetString("node"));
    if (!f.Has("tls_ca")) config.tls_ca = dir + "/ca.pem";
    if (!f.Has("tls_cert")) config.tls_cert = absl::StrFormat("%s/agent-%s.pem", dir, node);
    if (!f.Has("tls_key")) config.tls_key = absl::StrFormat("%s/agent-%s.key", dir, node);
  }
  if (use("state_dir")) o.state_dir = f.Has("state_dir") ? f.GetString("state_dir") : DefaultStateDir();
  if (f.Has("announce")) config.announce_dir = f.GetString("announce");
  if (f.Has("node")) config.node = f.GetString("node");
  if (f.Has("advertise")) config.advertise = f.GetString("advertise");
  if (f.Has("once")) config.once = f.GetBool("once");
  config.local_parent_pid = static_cast<int>(f.GetUint("local_parent"));
  if (f.Has("local_dir")) config.local_dir = f.GetString("local_dir");
  if ((!config.node.empty() || !config.advertise.empty()) && config.announce_dir.empty()) {
    return absl::InvalidArgumentError(
        "--node and --advertise name what --announce DIR writes: give --announce too");
  }
  return config;
}

}  // namespace lockstep
