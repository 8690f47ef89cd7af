#include "controller/cli/certs_command.h"

#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <string_view>

#include "absl/strings/ascii.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/files.h"
#include "controller/plan/plan.h"
#include "common/flags.h"
#include "common/net.h"
#include "common/status_macros.h"
#include "common/tls.h"
#include "common/tls_ca.h"
#include "controller/cli/command_specs.h"
#include "controller/cli/exit_codes.h"

namespace lockstep {
namespace {

constexpr int64_t kLeafBackdateS = 3600;  // tolerate hosts whose clocks lag by up to 1 h

struct AgentSpec {
  std::string name;
  std::vector<std::string> sans;
};

struct InitOptions {
  std::string dir;
  std::vector<AgentSpec> agents;
  std::string controller = "controller";
  bool controller_given = false;
  int days = 365;
  bool force = false;
  bool from_hostfile = false;  // many agents: print their flags once, not per agent
};

bool IsFileNameSafe(const std::string& name) {
  return !name.empty() && name.front() != '.' &&
         std::all_of(name.begin(), name.end(), [](char c) {
           return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' ||
                  c == '.';
         });
}

// "node7:7070" -> "node7", "[fe80::1]:7070" -> "fe80::1"; others unchanged.
std::string WithoutPort(const std::string& token) {
  auto hp = SplitHostPort(token);
  if (hp.ok() && hp->second > 0) return hp->first;
  return token;
}

// One agent certificate: parts[0] names it (and its files), every part is a
// SAN. `where` names the flag or line in errors.
absl::Status AddAgentSpec(std::vector<std::string> parts, const std::string& where,
                          InitOptions* opts) {
  for (std::string& p : parts) p = std::string(absl::StripAsciiWhitespace(p));
  if (parts.empty() || !IsFileNameSafe(parts[0])) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: NAME \"%s\" must be letters, digits, '-', '_' or '.' (it names the files "
        "agent-NAME.pem/.key); write NAME,SAN,SAN (a host name first, then its other names and "
        "addresses)",
        where, parts.empty() ? "" : parts[0]));
  }
  AgentSpec agent;
  agent.name = parts[0];
  for (const std::string& san : parts) {
    if (std::find(agent.sans.begin(), agent.sans.end(), san) == agent.sans.end()) {
      agent.sans.push_back(san);
    }
  }
  for (const AgentSpec& other : opts->agents) {
    if (other.name == agent.name) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s: agent %s is given twice; give each agent once", where, agent.name));
    }
  }
  opts->agents.push_back(std::move(agent));
  return absl::OkStatus();
}

// The options of init/issue from their flags. Usage errors are InvalidArgument.
absl::StatusOr<InitOptions> OptionsFromFlags(const ParsedFlags& f) {
  InitOptions opts;
  opts.dir = f.GetString("dir");
  opts.force = f.GetBool("force");
  opts.days = static_cast<int>(f.GetUint("days"));
  opts.controller = f.GetString("controller");
  opts.controller_given = f.Has("controller");
  if (opts.controller.empty()) return absl::InvalidArgumentError("--controller must not be empty");
  for (const std::string& value : f.GetList("agent")) {
    std::vector<std::string> parts = absl::StrSplit(value, ',', absl::SkipWhitespace());
    RETURN_IF_ERROR(AddAgentSpec(parts, absl::StrFormat("--agent \"%s\"", value), &opts));
  }
  const std::string& hostfile = f.GetString("hostfile");
  if (!hostfile.empty()) {
    auto text = ReadPlanInput(hostfile, "a hostfile");
    if (!text.ok()) {
      return absl::InvalidArgumentError(
          absl::StrFormat("--hostfile %s: %s", hostfile, text.status().message()));
    }
    int line_no = 0;
    size_t added = 0;
    for (absl::string_view line : absl::StrSplit(*text, '\n')) {
      ++line_no;
      std::vector<std::string> parts =
          absl::StrSplit(line.substr(0, line.find('#')), absl::ByAnyChar(" \t,"),
                         absl::SkipWhitespace());
      if (parts.empty()) continue;
      for (std::string& p : parts) p = WithoutPort(p);
      RETURN_IF_ERROR(
          AddAgentSpec(parts, absl::StrFormat("--hostfile %s:%d", hostfile, line_no), &opts));
      ++added;
    }
    if (added == 0) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "--hostfile %s names no host: write one \"NAME [SAN...]\" or HOST:PORT a line",
          hostfile));
    }
    opts.from_hostfile = true;
  }
  if (opts.dir.empty()) return absl::InvalidArgumentError("--dir DIR is required");
  return opts;
}

bool Exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

std::string Quote(const std::string& s) {
  // Paths from `certs init` are shell-safe unless the user chose otherwise.
  bool plain = std::all_of(s.begin(), s.end(), [](char c) {
    return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '/' || c == '.' ||
           c == '-' || c == '_' || c == ':' || c == '+' || c == ',';
  });
  return plain ? s : absl::StrCat("'", s, "'");
}

// make_ca: `init` (new CA + controller + agents); else `issue` (agents, and the
// controller when --controller is given, signed by the existing CA).
int RunCerts(const InitOptions& opts, bool make_ca) {
  const char* cmd = make_ca ? "init" : "issue";
  const bool issue_controller = make_ca || opts.controller_given;
  const std::string dir = AbsolutePath(opts.dir);
  auto strip_slash = [](std::string d) {
    while (d.size() > 1 && d.back() == '/') d.pop_back();
    return d;
  };
  const std::string out = strip_slash(dir);

  std::vector<std::string> prefixes;
  if (make_ca) prefixes.push_back(out + "/ca");
  if (issue_controller) prefixes.push_back(out + "/controller");
  for (const AgentSpec& agent : opts.agents) prefixes.push_back(out + "/agent-" + agent.name);
  if (!opts.force) {
    std::vector<std::string> existing;
    for (const std::string& prefix : prefixes) {
      for (const char* ext : {".pem", ".key"}) {
        if (Exists(prefix + ext)) existing.push_back(prefix + ext);
      }
    }
    if (!existing.empty()) {
      std::fprintf(stderr, "lockstep certs %s: refusing to replace %s; %s\n", cmd,
                   absl::StrJoin(existing, ", ").c_str(),
                   make_ca ? "pass --force to replace them (a new CA invalidates every "
                             "certificate the old one issued), choose another --dir, or add "
                             "certificates with `lockstep certs issue`"
                           : "pass --force to replace them");
      return kExitFailure;
    }
  }

  auto fail = [cmd](const absl::Status& s) {
    std::fprintf(stderr, "lockstep certs %s: %s\n", cmd, std::string(s.message()).c_str());
    return kExitFailure;
  };
  absl::Status s;
  if (make_ca) {
    s = CreateCa(out, "lockstep CA", opts.days);
    if (!s.ok()) return fail(s);
    std::printf("wrote %s/ca.pem, %s/ca.key (CA, valid %d days)\n", out.c_str(), out.c_str(),
                opts.days);
  }
  std::vector<std::string> controller_sans;
  if (std::all_of(opts.controller.begin(), opts.controller.end(), [](char c) {
        return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' ||
               c == '_';
      })) {
    controller_sans.push_back(opts.controller);
  }
  if (issue_controller) {
    s = IssueCertificate(out, out + "/controller", CertRole::kController, opts.controller,
                         controller_sans, -kLeafBackdateS, opts.days);
    if (!s.ok()) return fail(s);
    std::printf("wrote %s/controller.pem, %s/controller.key (CN=%s)\n", out.c_str(),
                out.c_str(), opts.controller.c_str());
  }
  for (const AgentSpec& agent : opts.agents) {
    const std::string prefix = out + "/agent-" + agent.name;
    s = IssueCertificate(out, prefix, CertRole::kAgent, agent.name, agent.sans, -kLeafBackdateS,
                         opts.days);
    if (!s.ok()) return fail(Annotate(s, absl::StrCat("--agent ", agent.name)));
    if (opts.agents.size() <= 3 || !opts.from_hostfile) {
      std::printf("wrote %s.pem, %s.key (CN=%s, SANs %s)\n", prefix.c_str(), prefix.c_str(),
                  agent.name.c_str(), absl::StrJoin(agent.sans, ", ").c_str());
    }
  }
  if (opts.agents.size() > 3 && opts.from_hostfile) {
    std::printf("wrote %zu agent certificates %s/agent-NAME.pem/.key (%s ... %s)\n",
                opts.agents.size(), out.c_str(), opts.agents.front().name.c_str(),
                opts.agents.back().name.c_str());
  }

  std::printf("\n");
  if (issue_controller) {
    std::printf("controller flags:\n  --tls_ca %s --tls_cert %s --tls_key %s\n",
                Quote(out + "/ca.pem").c_str(), Quote(out + "/controller.pem").c_str(),
                Quote(out + "/controller.key").c_str());
  }
  const std::string allow =
      issue_controller ? absl::StrCat(" --tls_allow ", Quote(opts.controller)) : "";
  if (opts.agents.size() > 3) {
    std::printf(
        "agents (%zu): copy ca.pem, agent-NODE.pem and agent-NODE.key to each NODE; the "
        "controller must dial it by a name or address of its line; on NODE:\n  --tls_ca "
        "ca.pem --tls_cert agent-NODE.pem --tls_key agent-NODE.key%s\n",
        opts.agents.size(), allow.c_str());
  }
  for (const AgentSpec& agent : opts.agents) {
    if (opts.agents.size() > 3) break;
    const std::string prefix = out + "/agent-" + agent.name;
    std::printf(
        "agent %s (copy ca.pem, agent-%s.pem, agent-%s.key to it; the controller must dial it "
        "as one of: %s):\n  --tls_ca %s --tls_cert %s --tls_key %s%s\n",
        agent.name.c_str(), agent.name.c_str(), agent.name.c_str(),
        absl::StrJoin(agent.sans, ", ").c_str(), Quote(out + "/ca.pem").c_str(),
        Quote(prefix + ".pem").c_str(), Quote(prefix + ".key").c_str(), allow.c_str());
  }
  if (!opts.agents.empty() && !issue_controller) {
    std::printf("(add --tls_allow NAME to the agent flags: NAME of the controller certificate)\n");
  }
  if (make_ca && opts.agents.empty()) {
    std::printf("no --agent given: add agents later with `lockstep certs issue --dir %s "
                "--agent NAME[,SAN...]`\n",
                Quote(out).c_str());
  }
  std::printf("keep %s/ca.key private: whoever holds it can mint certificates the agents "
              "accept\n",
              out.c_str());
  return kExitOk;
}

}  // namespace

int RunCertsCommand(const std::vector<std::string>& args) {
  const CommandSpec& spec = CertsCommandSpec();
  auto f = ParseFlags(args, spec);
  if (auto code = HelpOrUsageExit(spec, f)) return *code;
  const std::vector<std::string>& words = f->positional();
  if (words.size() == 1 && words[0] == "help") {
    std::fputs(FormatCommandHelp(spec).c_str(), stdout);
    return kExitOk;
  }
  if (words.size() != 1 || (words[0] != "init" && words[0] != "issue")) {
    std::fprintf(stderr, "lockstep certs: %s\n%s",
                 words.empty() ? "give init or issue"
                               : absl::StrFormat("\"%s\": expected init or issue",
                                                 absl::StrJoin(words, " "))
                                     .c_str(),
                 FormatUsage(spec).c_str());
    return kExitUsage;
  }
  const bool make_ca = words[0] == "init";
  absl::StatusOr<InitOptions> opts = OptionsFromFlags(*f);
  if (opts.ok() && !make_ca && opts->agents.empty() && !opts->controller_given) {
    opts = absl::InvalidArgumentError("issue needs at least one --agent or --controller");
  }
  if (!opts.ok()) {
    std::fprintf(stderr, "lockstep certs %s: %s\n%s", words[0].c_str(),
                 std::string(opts.status().message()).c_str(), FormatUsage(spec).c_str());
    return kExitUsage;
  }
  return RunCerts(*opts, make_ca);
}

}  // namespace lockstep
