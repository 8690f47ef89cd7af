#include "agent/workloads/command_process.h"

#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "absl/strings/str_format.h"
#include "common/command_rules.h"

namespace lockstep {
namespace {

// ---- accounts ---------------------------------------------------------------

bool LookUpAccount(const std::string& name, CommandAccount* out) {
  struct passwd pw, *found = nullptr;
  std::vector<char> buf(16384);
  if (::getpwnam_r(name.c_str(), &pw, buf.data(), buf.size(), &found) != 0 || found == nullptr) {
    const bool numeric = !name.empty() && std::all_of(name.begin(), name.end(),
                                                       [](char ch) { return ch >= '0' && ch <= '9'; });
    if (!numeric) return false;
    const uid_t uid = static_cast<uid_t>(std::strtoul(name.c_str(), nullptr, 10));
    if (::getpwuid_r(uid, &pw, buf.data(), buf.size(), &found) != 0 || found == nullptr) {
      if (uid != ::geteuid()) return false;
      // The agent's own uid without a passwd entry (a container's): itself.
      const char* home = std::getenv("HOME");
      *out = {.name = name, .uid = uid, .gid = ::getegid(), .home = home ? home : "/"};
      return true;
    }
  }
  out->name = found->pw_name;
  out->uid = found->pw_uid;
  out->gid = found->pw_gid;
  out->home = found->pw_dir;
  return true;
}

std::string OwnAccountName() {
  struct passwd pw, *found = nullptr;
  std::vector<char> buf(16384);
  if (::getpwuid_r(::geteuid(), &pw, buf.data(), buf.size(), &found) == 0 && found != nullptr) {
    return found->pw_name;
  }
  return absl::StrFormat("%u", ::geteuid());
}

std::vector<gid_t> SupplementaryGroups(const CommandAccount& a) {
  int n = 64;
  std::vector<gid_t> groups(static_cast<size_t>(n));
  if (::getgrouplist(a.name.c_str(), a.gid, groups.data(), &n) < 0) {
    groups.resize(static_cast<size_t>(n));
    if (::getgrouplist(a.name.c_str(), a.gid, groups.data(), &n) < 0) return {a.gid};
  }
  groups.resize(static_cast<size_t>(n));
  return groups;
}

}  // namespace

absl::StatusOr<CommandAccount> ResolveCommandAccount(const std::string& configured) {
  const uid_t self = ::geteuid();
  const std::string name = !configured.empty() ? configured : self == 0 ? "nobody" : OwnAccountName();
  CommandAccount a;
  if (!LookUpAccount(name, &a)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "command_user \"%s\"%s is not an account on this host (getent passwd %s); set "
        "command_user to an existing unprivileged account",
        name, configured.empty() ? " (the default for an agent run as root)" : "", name));
  }
  if (self != 0 && a.uid != self) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "command_user \"%s\": this agent runs as %s (uid %u), not as root, so it cannot run "
        "programs as another account; remove command_user (programs then run as %s) or start "
        "the agent as root",
        configured, OwnAccountName(), self, OwnAccountName()));
  }
  a.switch_user = self == 0 && a.uid != 0;
  if (a.switch_user) a.groups = SupplementaryGroups(a);
  return a;
}

std::vector<std::string> CommandEnvironment(const CommandAccount& account,
                                            const std::vector<std::string>& extra) {
  std::vector<std::string> env = {std::string("PATH=") + kCommandSearchPath,
                                  "HOME=" + account.home, "LANG=C"};
  for (const std::string& e : extra) {
    const std::string key = e.substr(0, e.find('=') + 1);
    auto same = std::find_if(env.begin(), env.end(),
                             [&](const std::string& have) { return have.rfind(key, 0) == 0; });
    if (same != env.end()) {
      *same = e;
    } else {
      env.push_back(e);
    }
  }
  return env;
}

// mkdir 0700, then (switch_user) chown and chmod 0755 of the phase
// directory `held` names: until it is the account's, nobody else can use it.
// 0 or errno (EEXIST: another agent of a shared file system made it).
int MakeOwnedDir(const BeneathDir& held, const CommandAccount& account) {
  if (held.Mkdir(held.path(), 0700) != 0) return errno;
  const int fd = held.Open(held.path(), O_RDONLY | O_DIRECTORY);
  if (fd < 0) return errno;
  int err = 0;
  if ((account.switch_user && ::fchown(fd, account.uid, account.gid) != 0) ||
      ::fchmod(fd, 0755) != 0) {
    err = errno;
  }
  ::close(fd);
  return err;
}

// Another agent (shared file system) made the directory: it is usable once
// that agent has handed it to the account (mode 0755), which follows its
// mkdir at once; polled for at most a second.
void AwaitHandedOver(const BeneathDir& held) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(1);
  struct stat st;
  while (held.Stat(held.path(), &st) == 0 && (st.st_mode & 0777) == 0700 &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

absl::Status PrepareCommandDir(const BeneathDir& held, const std::string& program,
                               const CommandAccount& account) {
  const std::string& dir = held.path();
  struct stat st;
  if (held.Stat(dir, &st) != 0) {
    if (errno != ENOENT) {
      return absl::FailedPreconditionError(
          absl::StrFormat("cannot look at %s: %s", dir, BeneathErrorText(errno)));
    }
    if (const int err = MakeOwnedDir(held, account); err == EEXIST) {
      AwaitHandedOver(held);
    } else if (err != 0) {
      held.Rmdir(dir);
      return absl::FailedPreconditionError(absl::StrFormat(
          "cannot create the phase directory %s for %s: %s; create it (owned by %s) or fix dir",
          dir, account.name, BeneathErrorText(err), account.name));
    }
  } else if (!S_ISDIR(st.st_mode)) {
    return absl::FailedPreconditionError(
        absl::StrFormat("%s is not a directory; fix dir", dir));
  }
  absl::Status probe = ProbeAsAccount(dir, program, account);
  if (probe.ok() || absl::IsInternal(probe)) return probe;
  return absl::PermissionDeniedError(absl::StrFormat(
      "%s; programs run as command_user %s: make %s usable by it (chown %s %s), or name a "
      "directory that does not exist yet (the agent creates it, owned by %s)",
      probe.message(), account.name, dir, account.name, dir, account.name));
}

}  // namespace lockstep
