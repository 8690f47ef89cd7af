// Lustre's tools for the agent (agent/fs/lustre_fs.h puts Lustre behind the
// FileSystem interface with them): striping of phase directories, lctl
// parameters (with restore), the Lustre version, and the statfs check that a
// path is on Lustre. External tools run only through RunCommand
// (common/process_runner.h): an argument vector handed to execve, never a
// shell, so plan strings are never interpreted.
#ifndef LOCKSTEP_AGENT_FS_LUSTRE_TOOLS_H_
#define LOCKSTEP_AGENT_FS_LUSTRE_TOOLS_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/process_runner.h"
#include "common/fs_type.h"

namespace lockstep {

// ---- File system type -----------------------------------------------------

// FsTypeOf and the statfs magic numbers: common/fs_type.h.
absl::StatusOr<bool> IsLustre(const std::string& path);

// ---- Parsers (pure, for the tools' output) -----------------------------------

struct StripeInfo {
  std::string raw;  // the tool's whole output, always recorded
  // From "stripe_count: 4 stripe_size: 1048576 ... stripe_offset: -1 pool: p"
  // (directory default) or "lmm_stripe_count: 4" ... (plain file layout).
  // Unset for composite (PFL/DoM) layouts, where only `raw` is meaningful.
  std::optional<int64_t> stripe_count;
  std::optional<uint64_t> stripe_size_bytes;
  std::optional<int64_t> stripe_index;  // stripe_offset; -1 = any OST
  std::string pool;
};
StripeInfo ParseGetStripe(std::string_view text);

struct ParamValue {
  std::string name;   // "osc.lustre-OST0000-osc-ffff8803.checksums"
  std::string value;  // "1"; multi-line values keep their newlines
};
// `lctl get_param PATTERN` output: "name=value" lines; lines without
// "name=" continue the previous value.
std::vector<ParamValue> ParseParamLines(std::string_view text);

// "2.15.3\n" (sysfs, new lctl) or "lustre: 2.10.8\nkernel: ..." (old procfs).
absl::StatusOr<std::string> ParseLustreVersion(std::string_view text);

// Where a Lustre node says its version: sysfs, then the old procfs file.
const std::vector<std::string>& DefaultLustreVersionFiles();

// The version the first of `files` that parses says; NotFound listing what
// each said (no file: not a Lustre node). Files only, no lctl: cheap enough
// for every HostFacts, and no --allow_lustre needed.
absl::StatusOr<std::string> LustreVersionFromFiles(const std::vector<std::string>& files);

// ---- lfs / lctl -------------------------------------------------------------

struct StripeSettings {
  int64_t stripe_count = 0;        // 0 = file system default, -1 = all OSTs
  uint64_t stripe_size_bytes = 0;  // 0 = default; else a multiple of 64 KiB, < 4 GiB
  int64_t stripe_index = -1;       // first OST; -1 = let the MDS choose
  std::string pool;                // "" = no pool
  // The path lfs is given for the directory: a held directory's /proc link
  // (BeneathDir::HeldPath), so that a component swapped for a symlink since
  // it was opened cannot redirect the layout; "" = the directory's path.
  // Messages name the directory's path either way.
  std::string through;
};

struct LustreToolsOptions {
  std::string lfs = "lfs";    // looked up on PATH
  std::string lctl = "lctl";
  int timeout_ms = 30000;     // per tool run
  // Read before asking lctl for the version.
  std::vector<std::string> version_files = DefaultLustreVersionFiles();
  // SetStripe/GetStripe refuse paths whose statfs type is not Lustre. Only
  // tests turn this off.
  bool require_lustre = true;
};

class LustreTools {
 public:
  explicit LustreTools(LustreToolsOptions options = {});

  // lfs setstripe -c N -S SIZE [-i IDX] [-p POOL] DIR. `dir` must be an
  // absolute path to an existing directory on Lustre; FailedPrecondition
  // names it and its file system type otherwise.
  absl::Status SetStripe(const std::string& dir, const StripeSettings& settings) const;
  // lfs getstripe -d DIR for a directory, lfs getstripe PATH for a file.
  absl::StatusOr<StripeInfo> GetStripe(const std::string& path) const;

  // The version files, else `lctl get_param -n version`. NotFound when
  // neither says (not a Lustre node).
  absl::StatusOr<std::string> Version() const;

  // lctl get_param -n NAME: the value(s) as printed, trailing newline dropped.
  // With a wildcard the values of all matches come one per line, without
  // names: use GetParams to tell them apart.
  absl::StatusOr<std::string> GetParam(const std::string& name) const;
  // lctl get_param PATTERN, split per matching parameter.
  absl::StatusOr<std::vector<ParamValue>> GetParams(const std::string& pattern) const;
  // lctl set_param NAME=VALUE (NAME may hold wildcards, VALUE may be an
  // action such as "clear").
  absl::Status SetParam(const std::string& name, const std::string& value) const;
  // lctl set_param N1=V1 N2=V2 ... in one run.
  absl::Status SetParams(const std::vector<ParamValue>& values) const;

  const LustreToolsOptions& options() const { return options_; }

 private:
  LustreToolsOptions options_;
};

// Sets a Lustre parameter for a scope and puts every matching parameter back
// to the value it had before, one by one (so "osc.*.checksums" restores each
// OSC's own value). For settings only: an action such as
// ldlm.namespaces.*.lru_size=clear is refused (restoring the read-back LRU
// size would pin it and disable LRU resizing); use SetParam for those.
class ScopedParam {
 public:
  static absl::StatusOr<std::unique_ptr<ScopedParam>> Set(const LustreTools& tools,
                                                          const std::string& name,
                                                          const std::string& value);
  // Restores; a failure is logged with the values that could not be restored.
  ~ScopedParam();
  ScopedParam(const ScopedParam&) = delete;
  ScopedParam& operator=(const ScopedParam&) = delete;

  // Restores now. Idempotent; later calls (and the destructor) do nothing.
  absl::Status Restore();
  const std::vector<ParamValue>& saved() const { return saved_; }

 private:
  ScopedParam(const LustreTools& tools, std::vector<ParamValue> saved)
      : tools_(tools), saved_(std::move(saved)) {}
  LustreTools tools_;  // a copy: the scope may outlive the caller's object
  std::vector<ParamValue> saved_;
  bool restored_ = false;
};

}  // namespace lockstep

#endif  // LOCKSTEP_AGENT_FS_LUSTRE_TOOLS_H_
