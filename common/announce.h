// Agents that announce themselves: `lockstep-agent --announce DIR` writes one
// small TOML file, DIR/<node>.agent, saying where it listens; the controller
// (`lockstep run --agents-from DIR`) takes its agents from those files, so
// that no address is typed anywhere (Slurm jobs, a shared file system).
//
//   # written by lockstep-agent; removed when it exits
//   node = "n1"                  # the node's name (Slurm's SLURMD_NODENAME)
//   address = "host7:41235"      # HOST:PORT the controller dials
//   role = "client"              # client | oss | mds
//   host = "host7"               # gethostname() of the agent's machine
//   pid = 4242
//
// Trust: whoever can write into DIR can point the controller at an agent of
// their own, so both sides refuse a directory (and the controller a file)
// that another user could write: see CheckAnnounceDir.
#ifndef LOCKSTEP_COMMON_ANNOUNCE_H_
#define LOCKSTEP_COMMON_ANNOUNCE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "lockstep/v1/agent.pb.h"

namespace lockstep {

struct Announcement {
  std::string node;     // [A-Za-z0-9._-]+, names the file
  std::string address;  // HOST:PORT
  v1::Role role = v1::CLIENT;
  std::string host;     // the machine's host name
  int64_t pid = 0;
  std::string file;     // where it was read from (ReadAnnouncements only)
};

// The file's text (TOML, the layout above).
std::string FormatAnnouncement(const Announcement& a);
// Parses a file's text; `source` names it in errors ("DIR/n1.agent: ...").
absl::StatusOr<Announcement> ParseAnnouncement(const std::string& text, const std::string& source);

// OK when `dir` is a directory that only its owner can write and that owner
// is this process's user or root. FailedPrecondition naming the directory,
// its mode or owner and the fix otherwise (a world- or group-writable
// directory would let anyone inject an agent address); NotFound when missing.
absl::Status CheckAnnounceDir(const std::string& dir);

// Agent side. Writes DIR/<a.node>.agent atomically (temp file, then link(2),
// which fails when the name exists). A file of the same node from a process
// of this host that no longer runs (killed without cleanup) is replaced.
// AlreadyExists naming the other agent when the node is announced by a live
// one (or by another host): each agent needs its own --node.
absl::Status WriteAnnouncement(const std::string& dir, const Announcement& a);
// Removes DIR/<node>.agent if it still names this process (best effort).
void RemoveAnnouncement(const std::string& dir, const Announcement& a);

// Controller side: every DIR/*.agent, sorted by node (other files are
// ignored). Errors: CheckAnnounceDir's; a file that does not parse or that
// another user owns or may write; two files naming the same address (two
// agents cannot listen on one port: one is stale or forged) -- each naming
// the files and the fix.
absl::StatusOr<std::vector<Announcement>> ReadAnnouncements(const std::string& dir);

}  // namespace lockstep

#endif  // LOCKSTEP_COMMON_ANNOUNCE_H_
