// The file system of a phase directory, as IOR keeps file-system knobs in
// its backends and fio in its engines: one class per file system, chosen by
// what the directory is (statfs magic, then the file system's own probe).
// Each owns its probe and version, the directory layout (apply, read back,
// in FS-neutral v1::FsLayout terms), its tunables, and the client-side
// caches it keeps beyond the page cache.
//
//   FileSystemContext ctx{.lustre = &tools, .allow_lustre = true};
//   ASSIGN_OR_RETURN(std::unique_ptr<FileSystem> fs, FileSystemFor(dir, ctx));
//   RETURN_IF_ERROR(fs->CheckSettings(spec, dir));          // before anything changes
//   ASSIGN_OR_RETURN(v1::FsLayout got, fs->SetLayout(dir, held->HeldPath(), spec));
//
// A setting the file system cannot make is refused (FailedPrecondition)
// before anything is changed, naming the file system, the plan key, the
// value and the directory.
#ifndef LOCKSTEP_AGENT_FS_FILE_SYSTEM_H_
#define LOCKSTEP_AGENT_FS_FILE_SYSTEM_H_

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "lockstep/v1/agent.pb.h"

namespace lockstep {

class LustreTools;  // agent/fs/lustre_tools.h

// A tunable set for one phase; the destructor puts the old value back.
class FsTunableScope {
 public:
  virtual ~FsTunableScope() = default;
  // The values before the change ("osc.X.checksums=1" per line).
  virtual std::string Before() const = 0;
};

class FileSystem {
 public:
  virtual ~FileSystem() = default;

  // "lustre", "cephfs", "posix".
  virtual std::string Name() const = 0;
  // The file system's own version, "" when unknown.
  virtual std::string Version() const { return ""; }
  // What it can do (RootFacts.capabilities): which plan keys it may take
  // (checked in full by CheckSettings at Prepare) and whether every client
  // sees the same files.
  virtual v1::FsCapabilities Capabilities() const = 0;

  // Refuses what this file system cannot do with `spec` (layout fields,
  // checksums) in `dir`; changes nothing.
  virtual absl::Status CheckSettings(const v1::PhaseSpec& spec, const std::string& dir) const;
  // Applies spec's layout (set_stripe) to `dir` and returns it as read back.
  // The change is made through `at` (BeneathDir::HeldPath: the directory
  // Prepare holds, so that a component swapped for a link since cannot
  // redirect it; empty: `dir` itself); `dir` names it in messages and reads.
  virtual absl::StatusOr<v1::FsLayout> SetLayout(const std::string& dir, const std::string& at,
                                                 const v1::PhaseSpec& spec) const;
  // The layout `path` (a directory or a file) has, as far as the FS says.
  virtual absl::StatusOr<v1::FsLayout> GetLayout(const std::string& path) const;
  // Client data checksums on or off for a phase.
  virtual absl::StatusOr<std::unique_ptr<FsTunableScope>> SetChecksums(bool on) const;

  // The client-side caches it keeps beyond the kernel's page cache and
  // dentries, which a cache barrier drops (the wire's lustre_lru_clear):
  // Lustre's DLM lock LRU, so that the next phase takes its locks again.
  // Whether it has any, and the drop; none by default.
  virtual bool HasClientCaches() const { return false; }
  virtual absl::Status DropClientCaches() const { return absl::OkStatus(); }
};

// What the file systems may use, owned by the agent.
struct FileSystemContext {
  const LustreTools* lustre = nullptr;  // never null in the agent
  bool allow_lustre = false;
  std::string lustre_version;           // asked once when the agent started
  // TESTS ONLY: treat any directory as Lustre (fake lfs/lctl).
  bool lustre_any_fs = false;
  std::string mountinfo_path = "/proc/self/mountinfo";
};

// The file system of `dir` (an existing directory): Lustre by statfs magic;
// CephFS by the kernel client's magic or a FUSE mount whose type is
// fuse.ceph-fuse; anything else is "posix" (ext4, xfs, tmpfs, NFS, ...),
// which has no layout or tunables. NotFound / PermissionDenied name `dir`.
absl::StatusOr<std::unique_ptr<FileSystem>> FileSystemFor(const std::string& dir,
                                                          const FileSystemContext& ctx);

// The refusal every file system gives for a setting it does not have:
// `key` (plan key), `value`, `why`, naming the FS and the directory.
absl::Status NotOnThisFs(const std::string& fs, const std::string& key, const std::string& value,
                         const std::string& dir, const std::string& why);

}  // namespace lockstep

#endif  // LOCKSTEP_AGENT_FS_FILE_SYSTEM_H_
