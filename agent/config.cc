#include "agent/config.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/files.h"
#include "common/names.h"
#include "common/sizes.h"
#include "common/status_macros.h"

#include <toml++/toml.h>

namespace lockstep {
namespace {

std::string Pos(const std::string& source, const toml::node& n) {
  return absl::StrFormat("%s:%d:%d", source, n.source().begin.line, n.source().begin.column);
}

absl::Status Bad(const std::string& source, const toml::node& n, const std::string& key,
                 const std::string& why) {
  return absl::InvalidArgumentError(
      absl::StrFormat("%s: key '%s': %s", Pos(source, n), key, why));
}

absl::Status CheckKeys(const std::string& source, const toml::table& t, const std::string& where,
                       const std::vector<std::string>& valid) {
  for (const auto& [k, v] : t) {
    std::string key(k.str());
    if (std::find(valid.begin(), valid.end(), key) == valid.end()) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: unknown key '%s' in %s; valid keys: %s", Pos(source, v), key, where,
          absl::StrJoin(valid, ", ")));
    }
  }
  return absl::OkStatus();
}

absl::Status GetString(const std::string& source, const toml::table& t, const std::string& key,
                       std::string* out) {
  const toml::node* n = t.get(key);
  if (n == nullptr) return absl::OkStatus();
  if (!n->is_string()) return Bad(source, *n, key, "expected a string");
  *out = n->as_string()->get();
  return absl::OkStatus();
}

absl::Status GetBool(const std::string& source, const toml::table& t, const std::string& key,
                     bool* out) {
  const toml::node* n = t.get(key);
  if (n == nullptr) return absl::OkStatus();
  if (!n->is_boolean()) return Bad(source, *n, key, "expected true or false");
  *out = n->as_boolean()->get();
  return absl::OkStatus();
}

absl::Status GetUint(const std::string& source, const toml::table& t, const std::string& key,
                     uint64_t lo, uint64_t hi, uint64_t* out) {
  const toml::node* n = t.get(key);
  if (n == nullptr) return absl::OkStatus();
  if (!n->is_integer() || n->as_integer()->get() < 0 ||
      static_cast<uint64_t>(n->as_integer()->get()) < lo ||
      static_cast<uint64_t>(n->as_integer()->get()) > hi) {
    return Bad(source, *n, key, absl::StrFormat("expected an integer from %u to %u", lo, hi));
  }
  *out = static_cast<uint64_t>(n->as_integer()->get());
  return absl::OkStatus();
}

absl::Status GetStrings(const std::string& source, const toml::table& t, const std::string& key,
                        std::vector<std::string>* out) {
  const toml::node* n = t.get(key);
  if (n == nullptr) return absl::OkStatus();
  if (!n->is_array()) return Bad(source, *n, key, "expected a list of strings");
  out->clear();
  for (const toml::node& e : *n->as_array()) {
    if (!e.is_string()) return Bad(source, e, key, "expected a list of strings");
    out->push_back(e.as_string()->get());
  }
  return absl::OkStatus();
}

// allow_commands (absolute paths only) and command_user, top-level keys.
absl::Status GetCommandKeys(const std::string& source, const toml::table& root, AgentConfig* c) {
  if (absl::Status s = GetStrings(source, root, "allow_commands", &c->options.allow_commands);
      !s.ok()) {
    return s;
  }
  if (const toml::node* n = root.get("allow_commands")) {
    for (const toml::node& e : *n->as_array()) {
      const std::string& program = e.as_string()->get();
      if (program.empty() || program[0] != '/') {
        return Bad(source, e, "allow_commands",
                   absl::StrFormat("\"%s\" is not an absolute path; list each program by its "
                                   "absolute path (\"/usr/bin/%s\"): a bare name could mean any "
                                   "file in a PATH",
                                   program, program.empty() ? "tar" : program));
      }
    }
  }
  if (absl::Status s = GetString(source, root, "command_user", &c->options.command_user); !s.ok()) {
    return s;
  }
  if (root.get("command_user") && c->options.command_user.empty()) {
    return Bad(source, *root.get("command_user"), "command_user",
               "is empty; name an account, or remove the key for the default (nobody when the "
               "agent runs as root)");
  }
  return absl::OkStatus();
}

const toml::table* Table(const toml::table& root, const std::string& key) {
  const toml::node* n = root.get(key);
  return n != nullptr ? n->as_table() : nullptr;
}

}  // namespace

// [ceph]: the daemons a server agent serves and how to reach them.
absl::Status GetCephKeys(const std::string& source, const toml::table& root, AgentConfig* c) {
  const toml::table* t = Table(root, "ceph");
  if (t == nullptr) return absl::OkStatus();
  RETURN_IF_ERROR(CheckKeys(source, *t, "[ceph]", {"daemons", "admin_socket", "cluster"}));
  CephDaemonOptions& o = c->options.ceph;
  RETURN_IF_ERROR(GetStrings(source, *t, "daemons", &o.daemons));
  RETURN_IF_ERROR(GetString(source, *t, "admin_socket", &o.admin_socket));
  RETURN_IF_ERROR(GetString(source, *t, "cluster", &o.cluster));
  for (const std::string& d : o.daemons) {
    const size_t dot = d.find('.');
    if (dot == std::string::npos || dot == 0 || dot + 1 == d.size()) {
      return Bad(source, *t->get("daemons"), "daemons",
                 absl::StrFormat("\"%s\" is not a Ceph daemon name; write TYPE.ID: \"osd.0\", "
                                 "\"mds.a\"",
                                 d));
    }
  }
  if (o.admin_socket.empty() || o.admin_socket[0] != '/') {
    return Bad(source, *t->get("admin_socket"), "admin_socket",
               "give an absolute path, with $name for the daemon (Ceph's default: "
               "\"/var/run/ceph/$cluster-$name.asok\")");
  }
  return absl::OkStatus();
}

absl::StatusOr<AgentConfig> ParseAgentConfig(const std::string& text, const std::string& source) {
  toml::table root;
  try {
    root = toml::parse(std::string_view(text), std::string(source));
  } catch (const toml::parse_error& e) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s:%d:%d: malformed TOML: %s", source, e.source().begin.line, e.source().begin.column,
        std::string(e.description())));
  }
  AgentConfig c;
  absl::Status s = CheckKeys(source, root, "the agent config",
                             {"listen", "role", "roots", "insecure", "allow_commands",
                              "command_user", "tls", "permissions", "limits", "telemetry",
                              "lustre", "ceph", "state_dir"});
  if (!s.ok()) return s;
  for (const char* t : {"tls", "permissions", "limits", "telemetry", "lustre", "ceph"}) {
    if (root.get(t) && !root.get(t)->is_table()) {
      return Bad(source, *root.get(t), t, absl::StrFormat("must be a table: write [%s]", t));
    }
  }
  if (!(s = GetString(source, root, "listen", &c.listen)).ok()) return s;
  std::string role = "client";
  if (!(s = GetString(source, root, "role", &role)).ok()) return s;
  auto r = ParseRole(role);
  if (!r) return Bad(source, *root.get("role"), "role", "use client, oss or mds");
  c.options.role = *r;
  if (!(s = GetStrings(source, root, "roots", &c.options.roots)).ok()) return s;
  if (!(s = GetBool(source, root, "insecure", &c.insecure)).ok()) return s;
  c.options.state_dir = DefaultStateDir();
  if (!(s = GetString(source, root, "state_dir", &c.options.state_dir)).ok()) return s;
  if (!(s = GetCommandKeys(source, root, &c)).ok()) return s;
  if (const toml::table* t = Table(root, "tls")) {
    if (!(s = CheckKeys(source, *t, "[tls]", {"ca", "cert", "key", "allow"})).ok()) return s;
    if (!(s = GetString(source, *t, "ca", &c.tls_ca)).ok()) return s;
    if (!(s = GetString(source, *t, "cert", &c.tls_cert)).ok()) return s;
    if (!(s = GetString(source, *t, "key", &c.tls_key)).ok()) return s;
    if (!(s = GetStrings(source, *t, "allow", &c.tls_allow)).ok()) return s;
  }
  if (const toml::table* t = Table(root, "permissions")) {
    if (!(s = CheckKeys(source, *t, "[permissions]", {"drop_caches", "lustre", "system_roots"}))
             .ok()) {
      return s;
    }
    if (!(s = GetBool(source, *t, "drop_caches", &c.options.allow_drop_caches)).ok()) return s;
    if (!(s = GetBool(source, *t, "lustre", &c.options.allow_lustre)).ok()) return s;
    if (!(s = GetBool(source, *t, "system_roots", &c.options.allow_system_roots)).ok()) return s;
  }
  if (const toml::table* t = Table(root, "lustre")) {
    if (!(s = CheckKeys(source, *t, "[lustre]", {"lfs", "lctl"})).ok()) return s;
    for (const char* key : {"lfs", "lctl"}) {
      std::string* tool = std::string(key) == "lfs" ? &c.options.lustre_options.lfs
                                                    : &c.options.lustre_options.lctl;
      if (!(s = GetString(source, *t, key, tool)).ok()) return s;
      if (tool->empty() || (tool->find('/') != std::string::npos && (*tool)[0] != '/')) {
        return Bad(source, *t->get(key), key,
                   "give a program name looked up on PATH (\"lfs\") or an absolute path "
                   "(\"/usr/bin/lfs\")");
      }
    }
  }
  if (!(s = GetCephKeys(source, root, &c)).ok()) return s;
  if (const toml::table* t = Table(root, "limits")) {
    if (!(s = CheckKeys(source, *t, "[limits]",
                        {"max_tasks", "max_bytes_per_phase", "default_lease_ms"}))
             .ok()) {
      return s;
    }
    uint64_t v = c.options.max_tasks;
    if (!(s = GetUint(source, *t, "max_tasks", 1, 65536, &v)).ok()) return s;
    c.options.max_tasks = static_cast<uint32_t>(v);
    v = c.options.default_lease_ms;
    if (!(s = GetUint(source, *t, "default_lease_ms", 200, 3600000, &v)).ok()) return s;
    c.options.default_lease_ms = static_cast<uint32_t>(v);
    if (const toml::node* n = t->get("max_bytes_per_phase")) {
      if (n->is_integer() && n->as_integer()->get() >= 0) {
        c.options.max_bytes_per_phase = static_cast<uint64_t>(n->as_integer()->get());
      } else if (n->is_string()) {
        auto size = ParseSize(n->as_string()->get());
        if (!size.ok()) return Bad(source, *n, "max_bytes_per_phase", std::string(size.status().message()));
        c.options.max_bytes_per_phase = *size;
      } else {
        return Bad(source, *n, "max_bytes_per_phase", "expected a size such as \"10t\"");
      }
    }
  }
  if (const toml::table* t = Table(root, "telemetry")) {
    if (!(s = CheckKeys(source, *t, "[telemetry]", {"interval_ms", "devices", "ifaces", "enabled", "processes"}))
             .ok()) {
      return s;
    }
    uint64_t v = c.options.telemetry_options.interval_ms;
    if (!(s = GetUint(source, *t, "interval_ms", 50, 3600000, &v)).ok()) return s;
    c.options.telemetry_options.interval_ms = static_cast<uint32_t>(v);
    if (!(s = GetStrings(source, *t, "devices", &c.options.telemetry_options.devices)).ok()) return s;
    if (!(s = GetStrings(source, *t, "ifaces", &c.options.telemetry_options.ifaces)).ok()) return s;
    if (!(s = GetBool(source, *t, "enabled", &c.options.telemetry)).ok()) return s;
    if (!(s = GetBool(source, *t, "processes", &c.options.telemetry_options.process_cpu)).ok()) {
      return s;
    }
  }
  return c;
}

absl::StatusOr<AgentConfig> LoadAgentConfig(const std::string& path) {
  auto text = ReadFileToString(path);
  if (!text.ok()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("cannot read agent config: %s", text.status().message()));
  }
  return ParseAgentConfig(*text, path);
}

std::string DefaultStateDir() {
  if (::geteuid() == 0) return "/var/lib/lockstep";
  const char* home = std::getenv("HOME");
  return home != nullptr && *home == '/' ? std::string(home) + "/.local/state/lockstep" : "";
}

}  // namespace lockstep
