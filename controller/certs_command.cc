#include "controller/certs_command.h"

#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string_view>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/status_macros.h"
#include "common/tls.h"

namespace lockstep {
namespace {

constexpr char kUsage[] =
    "usage: lockstep certs init --dir DIR [--agent NAME[,SAN...]]... [--controller NAME]\n"
    "                           [--days N] [--force]\n"
    "       lockstep certs issue --dir DIR [--agent NAME[,SAN...]]... [--controller NAME]\n"
    "                           [--days N] [--force]\n"
    "\n"
    "init makes a private CA and certificates for mutual TLS between controller and agents;\n"
    "issue adds certificates signed by the existing CA in DIR (e.g. for a new agent):\n"
    "  DIR/ca.pem, DIR/ca.key                 the CA (keep ca.key on the controller host only)\n"
    "  DIR/controller.pem, DIR/controller.key the controller's certificate (CN = --controller)\n"
    "  DIR/agent-NAME.pem, DIR/agent-NAME.key one per --agent\n"
    "\n"
    "  --agent NAME[,SAN...]  an agent; repeatable. The certificate names NAME and every SAN:\n"
    "                         list each host name and IP address the controller dials it by,\n"
    "                         e.g. --agent node7,node7.ib,10.0.0.7\n"
    "  --controller NAME      the controller certificate's name (default \"controller\")\n"
    "  --days N               validity in days (default 365)\n"
    "  --force                replace existing files (a new CA invalidates all old certificates)\n";

constexpr int kDefaultDays = 365;
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
  int days = kDefaultDays;
  bool force = false;
};

bool IsFileNameSafe(const std::string& name) {
  return !name.empty() && name.front() != '.' &&
         std::all_of(name.begin(), name.end(), [](char c) {
           return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' ||
                  c == '.';
         });
}

// Parses the words after "init". Usage errors are InvalidArgument.
absl::StatusOr<InitOptions> ParseInit(const std::vector<std::string>& args) {
  InitOptions opts;
  for (size_t i = 0; i < args.size(); ++i) {
    std::string flag = args[i];
    std::string value;
    bool has_inline_value = false;
    if (absl::StartsWith(flag, "--") && flag.find('=') != std::string::npos) {
      value = flag.substr(flag.find('=') + 1);
      flag = flag.substr(0, flag.find('='));
      has_inline_value = true;
    }
    if (flag == "--force") {
      if (has_inline_value) return absl::InvalidArgumentError("--force takes no value");
      opts.force = true;
      continue;
    }
    if (flag != "--dir" && flag != "--agent" && flag != "--controller" && flag != "--days") {
      return absl::InvalidArgumentError(absl::StrFormat("unknown argument \"%s\"", args[i]));
    }
    if (!has_inline_value) {
      if (i + 1 >= args.size()) {
        return absl::InvalidArgumentError(absl::StrFormat("%s needs a value", flag));
      }
      value = args[++i];
    }
    if (flag == "--dir") {
      if (value.empty()) return absl::InvalidArgumentError("--dir must not be empty");
      opts.dir = value;
    } else if (flag == "--controller") {
      if (value.empty()) return absl::InvalidArgumentError("--controller must not be empty");
      opts.controller = value;
      opts.controller_given = true;
    } else if (flag == "--days") {
      if (!absl::SimpleAtoi(value, &opts.days) || opts.days < 1) {
        return absl::InvalidArgumentError(
            absl::StrFormat("--days \"%s\" is not a positive whole number of days", value));
      }
    } else {  // --agent
      std::vector<std::string> parts = absl::StrSplit(value, ',', absl::SkipWhitespace());
      for (std::string& p : parts) p = std::string(absl::StripAsciiWhitespace(p));
      if (parts.empty() || !IsFileNameSafe(parts[0])) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "--agent \"%s\": NAME must be letters, digits, '-', '_' or '.' (it names the "
            "files agent-NAME.pem/.key); write --agent NAME,SAN,SAN",
            value));
      }
      AgentSpec agent;
      agent.name = parts[0];
      for (const std::string& san : parts) {
        if (std::find(agent.sans.begin(), agent.sans.end(), san) == agent.sans.end()) {
          agent.sans.push_back(san);
        }
      }
      for (const AgentSpec& other : opts.agents) {
        if (other.name == agent.name) {
          return absl::InvalidArgumentError(
              absl::StrFormat("--agent %s is given twice; give each agent once", agent.name));
        }
      }
      opts.agents.push_back(std::move(agent));
    }
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
  std::error_code ec;
  std::filesystem::path abs = std::filesystem::absolute(opts.dir, ec);
  const std::string dir = ec ? opts.dir : abs.lexically_normal().string();
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
      return 1;
    }
  }

  auto fail = [cmd](const absl::Status& s) {
    std::fprintf(stderr, "lockstep certs %s: %s\n", cmd, std::string(s.message()).c_str());
    return 1;
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
    s = IssueCertificate(out, out + "/controller", opts.controller, controller_sans,
                         -kLeafBackdateS, opts.days);
    if (!s.ok()) return fail(s);
    std::printf("wrote %s/controller.pem, %s/controller.key (CN=%s)\n", out.c_str(),
                out.c_str(), opts.controller.c_str());
  }
  for (const AgentSpec& agent : opts.agents) {
    const std::string prefix = out + "/agent-" + agent.name;
    s = IssueCertificate(out, prefix, agent.name, agent.sans, -kLeafBackdateS, opts.days);
    if (!s.ok()) return fail(Annotate(s, absl::StrCat("--agent ", agent.name)));
    std::printf("wrote %s.pem, %s.key (CN=%s, SANs %s)\n", prefix.c_str(), prefix.c_str(),
                agent.name.c_str(), absl::StrJoin(agent.sans, ", ").c_str());
  }

  std::printf("\n");
  if (issue_controller) {
    std::printf("controller flags:\n  --tls_ca %s --tls_cert %s --tls_key %s\n",
                Quote(out + "/ca.pem").c_str(), Quote(out + "/controller.pem").c_str(),
                Quote(out + "/controller.key").c_str());
  }
  const std::string allow =
      issue_controller ? absl::StrCat(" --tls_allow ", Quote(opts.controller)) : "";
  for (const AgentSpec& agent : opts.agents) {
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
  return 0;
}

}  // namespace

int RunCertsCommand(const std::vector<std::string>& args) {
  if (args.empty()) {
    std::fputs(kUsage, stderr);
    return 2;
  }
  if (args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    std::fputs(kUsage, stdout);
    return 0;
  }
  if (args[0] != "init" && args[0] != "issue") {
    std::fprintf(stderr, "lockstep certs: unknown subcommand \"%s\"\n%s", args[0].c_str(), kUsage);
    return 2;
  }
  std::vector<std::string> rest(args.begin() + 1, args.end());
  if (std::find(rest.begin(), rest.end(), "--help") != rest.end()) {
    std::fputs(kUsage, stdout);
    return 0;
  }
  const bool make_ca = args[0] == "init";
  absl::StatusOr<InitOptions> opts = ParseInit(rest);
  if (opts.ok() && !make_ca && opts->agents.empty() && !opts->controller_given) {
    opts = absl::InvalidArgumentError("issue needs at least one --agent or --controller");
  }
  if (!opts.ok()) {
    std::fprintf(stderr, "lockstep certs %s: %s\n%s", args[0].c_str(),
                 std::string(opts.status().message()).c_str(), kUsage);
    return 2;
  }
  return RunCerts(*opts, make_ca);
}

}  // namespace lockstep
