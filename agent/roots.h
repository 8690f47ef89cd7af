// The directories an agent may create files in, and the safe resolution of
// plan paths against them.
#ifndef LOCKSTEP_AGENT_ROOTS_H_
#define LOCKSTEP_AGENT_ROOTS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace lockstep {

class AllowedRoots {
 public:
  // Canonicalizes each root (realpath). Errors name a root that does not
  // exist or is not a directory.
  static absl::StatusOr<AllowedRoots> Create(const std::vector<std::string>& roots);

  // Resolves a plan directory: a relative `dir` is taken under the first
  // root; the result (after resolving "..", symlinks) must be a root or lie
  // below one. Errors: NotFound (dir missing, says which host path); a path
  // refused carries the kind PATH_REFUSED (common/errors.h): PermissionDenied
  // (outside the roots, lists them; or not resolvable), InvalidArgument
  // (empty, not a directory).
  absl::StatusOr<std::string> Resolve(const std::string& dir) const;

  // For a directory that may not exist yet (mdtest creates its -d): its
  // parent must resolve as Resolve does; returns "<resolved parent>/<last
  // component>". InvalidArgument (PATH_REFUSED) for a last component of "",
  // "." or "..".
  absl::StatusOr<std::string> ResolveNew(const std::string& dir) const;

  // The root that holds `resolved` (a result of Resolve or ResolveNew): the
  // longest root it is under; "" when none.
  std::string RootOf(const std::string& resolved) const;

  const std::vector<std::string>& roots() const { return roots_; }

 private:
  std::vector<std::string> roots_;
};

}  // namespace lockstep

#endif  // LOCKSTEP_AGENT_ROOTS_H_
