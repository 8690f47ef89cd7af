#include "controller/cli/reach_agents.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>

#include "absl/strings/ascii.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "common/files.h"
#include "controller/plan/plan.h"
#include "controller/plan/plan_toml.h"
#include "controller/plan/write_places.h"
#include "common/names.h"
#include "common/net.h"
#include "common/status_macros.h"
#include "common/tls_inspect.h"
#include "controller/run/agent_discovery.h"

namespace lockstep {

absl::Status AddAgentAddress(std::string addr, const std::string& where,
                             std::vector<std::string>* agents) {
  addr = std::string(absl::StripAsciiWhitespace(addr));
  if (addr.empty()) return absl::OkStatus();
  auto hp = SplitHostPort(addr);
  if (!hp.ok() || hp->second == 0) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: \"%s\" is not HOST:PORT", where, addr));
  }
  if (std::find(agents->begin(), agents->end(), addr) != agents->end()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: agent %s is listed twice; list each agent once", where, addr));
  }
  agents->push_back(addr);
  return absl::OkStatus();
}

absl::StatusOr<std::vector<AgentPlan>> ParseHostfileAgents(const std::string& text,
                                                           const std::string& path) {
  std::vector<AgentPlan> out;
  std::vector<std::string> addresses;
  int line_no = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_no;
    const std::string where = absl::StrFormat("--hostfile %s:%d", path, line_no);
    std::vector<std::string> words =
        absl::StrSplit(line.substr(0, line.find('#')), absl::ByAnyChar(" \t"), absl::SkipEmpty());
    if (words.empty()) continue;
    if (words.size() > 2) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: \"%s\": write HOST:PORT and optionally its role (client, oss or mds)", where,
          absl::StripAsciiWhitespace(line)));
    }
    RETURN_IF_ERROR(AddAgentAddress(words[0], where, &addresses));
    v1::Role role = v1::ROLE_UNSPECIFIED;
    if (words.size() == 2) {
      std::optional<v1::Role> r = ParseRole(words[1]);
      if (!r) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "%s: role \"%s\" of %s: use client, oss or mds", where, words[1], words[0]));
      }
      role = *r;
    }
    out.push_back({addresses.back(), role});
  }
  if (out.empty()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--hostfile %s lists no agent: write one HOST:PORT a line", path));
  }
  return out;
}

absl::StatusOr<std::vector<std::string>> ParseHostfile(const std::string& text,
                                                       const std::string& path) {
  ASSIGN_OR_RETURN(std::vector<AgentPlan> agents, ParseHostfileAgents(text, path));
  std::vector<std::string> out;
  for (const AgentPlan& a : agents) out.push_back(a.address);
  return out;
}

absl::StatusOr<std::vector<AgentPlan>> AgentsFromFlags(const ParsedFlags& f,
                                                       absl::Duration default_wait,
                                                       const std::atomic<bool>* interrupted) {
  const std::string& dir = f.GetString("agents-from");
  const bool listed = f.Has("agents") || f.Has("hostfile");
  if (!dir.empty() && listed) {
    return absl::InvalidArgumentError(
        "--agents-from cannot be combined with --agents or --hostfile: take the agents from one "
        "place");
  }
  if (dir.empty() && (f.Has("expect") || f.Has("expect_nodes") || f.Has("wait_ms"))) {
    return absl::InvalidArgumentError(
        "--expect, --expect_nodes and --wait_ms say what to wait for in --agents-from DIR: give "
        "--agents-from too");
  }
  std::vector<AgentPlan> out;
  if (listed) {
    std::vector<std::string> addresses;
    std::map<std::string, v1::Role> roles;  // the hostfiles' ROLE columns
    for (const std::string& a : f.GetList("agents")) {
      RETURN_IF_ERROR(AddAgentAddress(a, "--agents", &addresses));
    }
    for (const std::string& path : f.GetList("hostfile")) {
      auto text = ReadPlanInput(path, "a hostfile");
      if (!text.ok()) {
        return absl::InvalidArgumentError(
            absl::StrFormat("--hostfile %s: %s", path, text.status().message()));
      }
      ASSIGN_OR_RETURN(std::vector<AgentPlan> from_file, ParseHostfileAgents(*text, path));
      for (const AgentPlan& a : from_file) {
        RETURN_IF_ERROR(AddAgentAddress(a.address, "--hostfile " + path, &addresses));
        roles[a.address] = a.role;
      }
    }
    for (const std::string& a : addresses) {
      auto it = roles.find(a);
      out.push_back({a, it == roles.end() ? v1::ROLE_UNSPECIFIED : it->second});
    }
    return out;
  }
  if (dir.empty()) return out;
  AnnounceWait wait;
  wait.dir = dir;
  wait.expect = static_cast<uint32_t>(f.GetUint("expect"));
  wait.nodes = f.GetList("expect_nodes");
  wait.timeout = f.Has("wait_ms") ? absl::Milliseconds(f.GetUint("wait_ms")) : default_wait;
  wait.interrupted = interrupted;
  // A wrapper script names its own flag for the wait (deploy/slurm: --wait-s).
  if (const char* flag = std::getenv("LOCKSTEP_WAIT_FLAG"); flag != nullptr && *flag != 0) {
    wait.wait_flag = flag;
  }
  ASSIGN_OR_RETURN(std::vector<Announcement> announced, AwaitAnnouncements(wait));
  return AgentsOf(announced);
}

TlsFiles TlsFilesFromFlags(const ParsedFlags& f) {
  const std::string& dir = f.GetString("tls_dir");
  auto file = [&](const char* flag, const char* in_dir) {
    const std::string& given = f.GetString(flag);
    return !given.empty() ? given : dir.empty() ? "" : dir + "/" + in_dir;
  };
  return TlsFiles{file("tls_ca", "ca.pem"), file("tls_cert", "controller.pem"),
                  file("tls_key", "controller.key")};
}

absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> ControllerCredentials(
    const TlsFiles& files) {
  ASSIGN_OR_RETURN(std::shared_ptr<grpc::ChannelCredentials> creds,
                   MakeChannelCredentials(files));
  for (const std::string& w : ExpiryWarnings(files, absl::Now(), kCertExpiryWarning)) {
    std::fprintf(stderr, "lockstep: warning: %s\n", w.c_str());
  }
  return creds;
}

absl::Status TlsFromDir(const std::string& tls_dir, bool insecure, RunOptions* o) {
  o->insecure = insecure;
  if (insecure || tls_dir.empty()) return absl::OkStatus();
  o->tls_files =
      TlsFiles{tls_dir + "/ca.pem", tls_dir + "/controller.pem", tls_dir + "/controller.key"};
  ASSIGN_OR_RETURN(o->credentials, ControllerCredentials(o->tls_files));
  return absl::OkStatus();
}

absl::Status TlsFromFlags(const ParsedFlags& f, RunOptions* o) {
  if (o->insecure) return absl::OkStatus();
  o->tls_files = TlsFilesFromFlags(f);
  const TlsFiles& files = o->tls_files;
  if (files.ca_pem.empty() && files.cert_pem.empty() && files.key_pem.empty()) {
    return absl::OkStatus();
  }
  ASSIGN_OR_RETURN(o->credentials, ControllerCredentials(files));
  return absl::OkStatus();
}

absl::Status FrontEndAgentsFromFlags(const ParsedFlags& f, const std::atomic<bool>* interrupted,
                                     RunOptions* o) {
  o->insecure = f.GetBool("insecure");
  if (absl::Status tls = TlsFromFlags(f, o); !tls.ok()) {
    return absl::InvalidArgumentError(tls.message());
  }
  auto agents = AgentsFromFlags(f, absl::Seconds(5), interrupted);
  if (!agents.ok()) {
    if (absl::IsCancelled(agents.status())) return absl::CancelledError();
    if (absl::IsInvalidArgument(agents.status())) return agents.status();
    return absl::UnavailableError(agents.status().message());
  }
  o->agents = *std::move(agents);
  const uint64_t local = f.GetUint("local");
  if (!o->agents.empty() && local > 0) {
    return absl::InvalidArgumentError(
        "--local cannot be combined with --agents, --hostfile or --agents-from");
  }
  if (o->agents.empty()) o->local_agents = local > 0 ? static_cast<int>(local) : 2;
  o->named_roots = f.GetList("root");
  return absl::OkStatus();
}

uint32_t ClientAgentCount(const RunOptions& o) {
  if (o.agents.empty()) return static_cast<uint32_t>(o.local_agents);
  uint32_t clients = 0;
  for (const AgentPlan& a : o.agents) clients += a.role == v1::OSS || a.role == v1::MDS ? 0 : 1;
  return clients;
}

namespace {

// Local agents: the directory they may write below (their root) and the
// phases' directory on this host; relative to the working directory.
absl::Status PlaceLocally(const LocalPlacement& placement, CliCommand* cmd, std::string* root) {
  std::error_code ec;
  const std::string dir = cmd->plan.phases.empty() ? "." : cmd->plan.phases.front().dir;
  const std::filesystem::path abs = std::filesystem::absolute(dir, ec).lexically_normal();
  // Where it may write first: "does not exist; create it" is no advice for
  // a directory that would then be refused.
  const LocalWritePlaces places = CommandLineWritePlaces(cmd->controller.roots);
  RETURN_IF_ERROR(CheckLocalWritePlace(abs.string(), places, placement.what));
  std::string placed;
  if (!ec && std::filesystem::is_directory(abs, ec)) {
    *root = std::filesystem::canonical(abs, ec).string();
    placed = *root;
  } else if (placement.makes_last_dir) {
    std::string s = abs.string();
    while (s.size() > 1 && s.back() == '/') s.pop_back();
    const std::filesystem::path p(s);
    if (!std::filesystem::is_directory(p.parent_path(), ec)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s %s: its parent directory %s does not exist; %s creates only the last "
          "directory: create the parent first",
          placement.what, dir, p.parent_path().string(), placement.tool));
    }
    *root = std::filesystem::canonical(p.parent_path(), ec).string();
    placed = (std::filesystem::path(*root) / p.filename()).string();
    if (IsSystemDirectory(*root)) {  // "/newdir": the agents take the new directory alone
      std::filesystem::create_directory(placed, ec);
      if (ec) {
        return absl::InvalidArgumentError(
            absl::StrFormat("%s %s: cannot create it: %s", placement.what, dir, ec.message()));
      }
      *root = placed;
    }
  } else {
    return absl::InvalidArgumentError(absl::StrFormat(
        "directory %s does not exist; create it first%s", abs.string(), placement.missing_note));
  }
  for (PhasePlan& p : cmd->plan.phases) p.dir = placed;
  return SetPlanText(&cmd->plan, placement.tool);
}

}  // namespace

absl::Status SetUpTranslatedAgents(const LocalPlacement& placement, CliCommand* cmd,
                                   RunOptions* options) {
  if (!cmd->controller.agents.empty()) {
    return TlsFromDir(cmd->controller.tls_dir, cmd->controller.insecure, options);
  }
  options->local_agents = cmd->controller.local_agents;
  options->named_roots = cmd->controller.roots;
  return PlaceLocally(placement, cmd, &options->local_root);
}

}  // namespace lockstep
