#include "agent/port_holder.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/net.h"

namespace lockstep {
namespace {

constexpr char kTcpListen[] = "0A";  // TCP_LISTEN in /proc/net/tcp's "st" column

// "0100007F" (IPv4) or 32 hex digits (IPv6): the kernel prints each 32-bit
// word of the address as it lies in memory, so it goes back the same way.
// An IPv4-mapped IPv6 address comes out as IPv4.
bool DecodeAddress(absl::string_view hex, std::string* out) {
  if (hex.size() != 8 && hex.size() != 32) return false;
  uint32_t words[4] = {0, 0, 0, 0};
  for (size_t w = 0; w < hex.size() / 8; ++w) {
    if (!absl::SimpleHexAtoi(hex.substr(w * 8, 8), &words[w])) return false;
  }
  char text[INET6_ADDRSTRLEN] = {};
  if (hex.size() == 8) {
    in_addr a;
    std::memcpy(&a.s_addr, &words[0], 4);
    if (::inet_ntop(AF_INET, &a, text, sizeof(text)) == nullptr) return false;
  } else {
    in6_addr a;
    std::memcpy(a.s6_addr, words, 16);
    if (IN6_IS_ADDR_V4MAPPED(&a)) {  // gRPC's dual-stack socket for an IPv4 address
      if (::inet_ntop(AF_INET, &a.s6_addr[12], text, sizeof(text)) == nullptr) return false;
    } else if (::inet_ntop(AF_INET6, &a, text, sizeof(text)) == nullptr) {
      return false;
    }
  }
  *out = text;
  return true;
}

// Appends the LISTEN sockets on `port` from one /proc/net/tcp{,6} text.
void ParseTcpTable(const std::string& text, int port, std::vector<PortHolder>* out) {
  bool header = true;
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipWhitespace())) {
    if (header) {  // "  sl  local_address rem_address   st ..."
      header = false;
      continue;
    }
    std::vector<absl::string_view> f = absl::StrSplit(line, ' ', absl::SkipEmpty());
    if (f.size() < 10 || f[3] != kTcpListen) continue;
    std::vector<absl::string_view> local = absl::StrSplit(f[1], ':');
    uint32_t local_port = 0;
    uint64_t inode = 0;
    std::string host;
    if (local.size() != 2 || !absl::SimpleHexAtoi(local[1], &local_port) ||
        static_cast<int>(local_port) != port || !absl::SimpleAtoi(f[9], &inode) ||
        !DecodeAddress(local[0], &host)) {
      continue;
    }
    PortHolder h;
    h.local_address = JoinHostPort(host, port);
    h.inode = inode;
    out->push_back(std::move(h));
  }
}

bool ReadWhole(const std::string& path, std::string* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::ostringstream s;
  s << in.rdbuf();
  *out = s.str();
  return true;
}

std::string CommandLineOf(const std::string& proc, int pid) {
  std::string raw;
  if (!ReadWhole(absl::StrCat(proc, "/", pid, "/cmdline"), &raw)) return "";
  std::vector<absl::string_view> args = absl::StrSplit(raw, '\0', absl::SkipEmpty());
  return absl::StrJoin(args, " ");
}

// Fills in pid and command line of each holder whose inode some process of
// PROC/*/fd links to; lowest pid first, so a parent wins over its children.
void FindOwners(const std::string& proc, std::vector<PortHolder>* holders) {
  std::map<std::string, PortHolder*> by_link;
  for (PortHolder& h : *holders) by_link[absl::StrCat("socket:[", h.inode, "]")] = &h;
  std::vector<int> pids;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(proc, ec)) {
    int pid = 0;
    if (absl::SimpleAtoi(e.path().filename().string(), &pid) && pid > 0) pids.push_back(pid);
  }
  std::sort(pids.begin(), pids.end());
  size_t left = by_link.size();
  for (int pid : pids) {
    if (left == 0) break;
    const std::string fd_dir = absl::StrCat(proc, "/", pid, "/fd");
    std::error_code fd_ec;  // another user's process: EACCES, skipped
    for (const auto& fd : std::filesystem::directory_iterator(fd_dir, fd_ec)) {
      char link[128];
      ssize_t n = ::readlink(fd.path().c_str(), link, sizeof(link) - 1);
      if (n <= 0) continue;
      auto it = by_link.find(std::string(link, static_cast<size_t>(n)));
      if (it == by_link.end() || it->second->pid != 0) continue;
      it->second->pid = pid;
      it->second->command_line = CommandLineOf(proc, pid);
      --left;
    }
  }
}

}  // namespace

absl::StatusOr<std::vector<PortHolder>> FindPortHolders(int port, const std::string& proc) {
  if (port <= 0 || port > 65535) {
    return absl::InvalidArgumentError(
        absl::StrFormat("port %d is not a TCP port (1..65535)", port));
  }
  std::vector<PortHolder> holders;
  int tables = 0;
  for (const char* table : {"/net/tcp", "/net/tcp6"}) {
    std::string text;
    if (!ReadWhole(proc + table, &text)) continue;  // no IPv6 on this host
    ++tables;
    ParseTcpTable(text, port, &holders);
  }
  if (tables == 0) {
    return absl::NotFoundError(absl::StrFormat(
        "cannot read %s/net/tcp or %s/net/tcp6 (is /proc mounted?)", proc, proc));
  }
  if (!holders.empty()) FindOwners(proc, &holders);
  return holders;
}

std::string DescribeListenFailure(const std::string& listen, int port, const std::string& proc) {
  if (port <= 0) {
    return absl::StrFormat(
        "cannot listen on %s: port 0 lets the system pick a free port, so the host part is not "
        "an address of this machine; give one of its addresses (ip -brief address)",
        listen);
  }
  const std::string ss = absl::StrFormat("ss -ltnp 'sport = :%d'", port);
  auto holders = FindPortHolders(port, proc);
  if (!holders.ok()) {
    return absl::StrFormat(
        "cannot listen on %s (port %d in use, not a local address, or a privileged port); "
        "cannot tell who holds port %d: %s; `%s` (as root) names the holder",
        listen, port, port, holders.status().message(), ss);
  }
  if (holders->empty()) {
    return absl::StrFormat(
        "cannot listen on %s: no socket listens on port %d in this network namespace, so the "
        "host part is not an address of this machine, or port %d is privileged (< 1024 needs "
        "root or CAP_NET_BIND_SERVICE), or it is bound without listening (`ss -tanp 'sport = "
        ":%d'` shows it)",
        listen, port, port, port);
  }
  std::vector<std::string> parts;
  bool unknown = false;
  for (const PortHolder& h : *holders) {
    if (h.pid > 0) {
      parts.push_back(absl::StrFormat("%s is held by pid %d (%s)", h.local_address, h.pid,
                                      h.command_line.empty() ? "command line unknown"
                                                             : h.command_line));
    } else {
      unknown = true;
      parts.push_back(absl::StrFormat(
          "%s is held by a process this user cannot inspect (socket inode %u)", h.local_address,
          h.inode));
    }
  }
  std::string out = absl::StrFormat(
      "cannot listen on %s: port %d is taken: %s. Stop that process, or give another --listen "
      "port (an agent refuses to share its port: the controller would reach either agent)",
      listen, port, absl::StrJoin(parts, "; "));
  if (unknown) absl::StrAppend(&out, absl::StrFormat("; `%s` (as root) names the holder", ss));
  return out;
}

}  // namespace lockstep
