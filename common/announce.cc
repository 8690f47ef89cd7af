#include "common/announce.h"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>
#include <optional>
#include <sstream>

#include <toml++/toml.h>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/files.h"
#include "common/names.h"
#include "common/net.h"

namespace lockstep {
namespace {

constexpr char kSuffix[] = ".agent";

bool ValidNode(const std::string& node) {
  if (node.empty() || node.size() > 255 || node[0] == '.') return false;
  return std::all_of(node.begin(), node.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '.' || c == '_' || c == '-';
  });
}

std::string FileOf(const std::string& dir, const std::string& node) {
  return (std::filesystem::path(dir) / (node + kSuffix)).string();
}

// A file that only we (or root) can have written.
absl::Status CheckOwnedFile(const std::string& path, const struct stat& st) {
  if (st.st_uid != ::geteuid() && st.st_uid != 0) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "%s belongs to uid %d, not to us (uid %d) or root: another user may have written it to "
        "point us at their agent; remove it, and keep the announce directory private (mode 0700)",
        path, st.st_uid, ::geteuid()));
  }
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "%s is writable by others (mode %04o): anyone could change the address in it; remove "
        "it and restart that agent",
        path, st.st_mode & 07777));
  }
  return absl::OkStatus();
}

}  // namespace

std::string FormatAnnouncement(const Announcement& a) {
  toml::table t;
  t.insert("node", a.node);
  t.insert("address", a.address);
  t.insert("role", std::string(RoleName(a.role)));
  t.insert("host", a.host);
  t.insert("pid", a.pid);
  std::ostringstream out;
  out << "# written by lockstep-agent --announce; removed when the agent exits\n" << t << "\n";
  return out.str();
}

absl::StatusOr<Announcement> ParseAnnouncement(const std::string& text,
                                               const std::string& source) {
  toml::table t;
  try {
    t = toml::parse(std::string_view(text), std::string(source));
  } catch (const toml::parse_error& e) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s:%d: not an announcement (%s); remove the file, the agent writes it again when "
        "restarted",
        source, e.source().begin.line, std::string(e.description())));
  }
  auto bad = [&](const char* key, const std::string& why) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: key '%s' %s; the file is written by lockstep-agent --announce: remove it and "
        "restart that agent",
        source, key, why));
  };
  Announcement a;
  a.file = source;
  const std::optional<std::string> node = t["node"].value<std::string>();
  if (!node || !ValidNode(*node)) return bad("node", "is missing or not a node name");
  a.node = *node;
  const std::optional<std::string> address = t["address"].value<std::string>();
  if (!address) return bad("address", "is missing");
  auto hp = SplitHostPort(*address);
  if (!hp.ok() || hp->second <= 0) {
    return bad("address", absl::StrFormat("\"%s\" is not HOST:PORT", *address));
  }
  a.address = *address;
  const std::optional<std::string> role = t["role"].value<std::string>();
  std::optional<v1::Role> parsed_role = role ? ParseRole(*role) : std::nullopt;
  if (!parsed_role) return bad("role", "is missing or not client, oss or mds");
  a.role = *parsed_role;
  a.host = t["host"].value_or(std::string());
  a.pid = t["pid"].value_or(int64_t{0});
  return a;
}

absl::Status CheckAnnounceDir(const std::string& dir) {
  struct stat st = {};
  if (::stat(dir.c_str(), &st) != 0) {
    if (errno == ENOENT) {
      return absl::NotFoundError(absl::StrFormat(
          "announce directory %s does not exist: create it (mkdir -m 0700 %s) on a file system "
          "the agents and the controller share",
          dir, dir));
    }
    return absl::FailedPreconditionError(
        absl::StrFormat("announce directory %s: %s", dir, std::strerror(errno)));
  }
  if (!S_ISDIR(st.st_mode)) {
    return absl::FailedPreconditionError(
        absl::StrFormat("announce directory %s is not a directory", dir));
  }
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "announce directory %s is writable by %s (mode %04o): anyone there could announce an "
        "agent of their own and receive the run's work; make it private: chmod 0700 %s",
        dir, (st.st_mode & S_IWOTH) ? "every user" : "its group", st.st_mode & 07777, dir));
  }
  if (st.st_uid != ::geteuid() && st.st_uid != 0) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "announce directory %s belongs to uid %d, not to us (uid %d) or root: use a directory "
        "of your own (mkdir -m 0700)",
        dir, st.st_uid, ::geteuid()));
  }
  return absl::OkStatus();
}

absl::Status WriteAnnouncement(const std::string& dir, const Announcement& a) {
  if (!ValidNode(a.node)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--node \"%s\": a node name is letters, digits, '.', '_' and '-' (not starting with '.')",
        a.node));
  }
  if (absl::Status s = CheckAnnounceDir(dir); !s.ok()) return s;
  const std::string path = FileOf(dir, a.node);
  const std::string temp = absl::StrFormat("%s.%d.tmp", path, ::getpid());
  if (absl::Status s = WriteFileAtomically(temp, FormatAnnouncement(a)); !s.ok()) return s;
  for (int attempt = 0; attempt < 2; ++attempt) {
    if (::link(temp.c_str(), path.c_str()) == 0) {
      ::unlink(temp.c_str());
      return absl::OkStatus();
    }
    const int err = errno;
    if (err != EEXIST) {
      ::unlink(temp.c_str());
      return absl::FailedPreconditionError(
          absl::StrFormat("cannot announce in %s: %s", path, std::strerror(err)));
    }
    // Taken: replace it only if it is ours from an earlier life on this host.
    auto text = ReadFileToString(path);
    auto other = text.ok() ? ParseAnnouncement(*text, path) : text.status();
    const bool stale = other.ok() && other->host == a.host && other->pid > 0 &&
                       other->pid != a.pid && ::kill(static_cast<pid_t>(other->pid), 0) != 0 &&
                       errno == ESRCH;
    if (!stale) {
      ::unlink(temp.c_str());
      return absl::AlreadyExistsError(absl::StrFormat(
          "node %s is already announced in %s%s: two agents cannot share a node name; give "
          "each its own --node (or remove the file if that agent is gone)",
          a.node, path,
          other.ok() ? absl::StrFormat(" by the agent at %s (host %s, pid %d)", other->address,
                                       other->host, other->pid)
                     : ""));
    }
    ::unlink(path.c_str());
  }
  ::unlink(temp.c_str());
  return absl::AbortedError(absl::StrFormat("cannot announce in %s: raced with another agent", path));
}

void RemoveAnnouncement(const std::string& dir, const Announcement& a) {
  const std::string path = FileOf(dir, a.node);
  auto text = ReadFileToString(path);
  if (!text.ok()) return;
  auto current = ParseAnnouncement(*text, path);
  if (current.ok() && current->pid == a.pid && current->host == a.host) ::unlink(path.c_str());
}

absl::StatusOr<std::vector<Announcement>> ReadAnnouncements(const std::string& dir) {
  if (absl::Status s = CheckAnnounceDir(dir); !s.ok()) return s;
  std::vector<Announcement> out;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.size() <= sizeof(kSuffix) - 1 ||
        name.compare(name.size() - (sizeof(kSuffix) - 1), std::string::npos, kSuffix) != 0) {
      continue;
    }
    const std::string path = entry.path().string();
    struct stat st = {};
    if (::lstat(path.c_str(), &st) != 0) continue;  // removed meanwhile: an agent exited
    if (!S_ISREG(st.st_mode)) {
      return absl::FailedPreconditionError(
          absl::StrFormat("%s is not a regular file (a link?): remove it", path));
    }
    if (absl::Status s = CheckOwnedFile(path, st); !s.ok()) return s;
    auto text = ReadFileToString(path);
    if (!text.ok()) continue;
    auto a = ParseAnnouncement(*text, path);
    if (!a.ok()) return a.status();
    if (name != a->node + kSuffix) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s announces node \"%s\": the file of a node is <node>.agent; remove it and restart "
          "that agent",
          path, a->node));
    }
    out.push_back(*std::move(a));
  }
  if (ec) {
    return absl::FailedPreconditionError(
        absl::StrFormat("announce directory %s: %s", dir, ec.message()));
  }
  std::sort(out.begin(), out.end(),
            [](const Announcement& x, const Announcement& y) { return x.node < y.node; });
  std::map<std::string, const Announcement*> by_address;
  for (const Announcement& a : out) {
    auto [it, fresh] = by_address.emplace(a.address, &a);
    if (!fresh) {
      return absl::FailedPreconditionError(absl::StrFormat(
          "nodes %s and %s both announce %s (%s, %s): two agents cannot listen on one address, "
          "so one file is stale or forged; remove it",
          it->second->node, a.node, a.address, it->second->file, a.file));
    }
  }
  return out;
}

}  // namespace lockstep
