// Small file helpers with Status errors that name the path.
#ifndef LOCKSTEP_COMMON_FILES_H_
#define LOCKSTEP_COMMON_FILES_H_

#include <sys/types.h>

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace lockstep {

absl::StatusOr<std::string> ReadFileToString(const std::string& path);

// Writes `content` to `path` so that a reader sees the old file or the whole
// new one, never a part: write to "<path>.tmp.<pid>", fsync, rename, fsync
// the directory. The file gets exactly `mode` (not masked by the umask), set
// before any byte is written: a 0600 key is never readable by others, not
// even for a moment.
absl::Status WriteFileAtomically(const std::string& path, std::string_view content,
                                 mode_t mode = 0644);

// mkdir -p: creates `dir` and its missing parents with `mode` (masked by the
// umask, as mkdir(2) does); OK when it exists. Errors name the directory that
// could not be made (PermissionDenied, NotFound, ...) or say that `dir` is
// not a directory (FailedPrecondition); callers add their own fix.
absl::Status MakeDirectories(const std::string& dir, mode_t mode);

// Whether `path` is `root` or lies below it, by the text of both (no
// symlinks resolved): "/a/b" is under "/a", "/ab" is not; everything is under
// "/". Both absolute and normal (no "..", no trailing '/').
bool PathIsUnder(const std::string& path, const std::string& root);

// Hex SHA-256 of `data` (OpenSSL EVP).
std::string Sha256Hex(std::string_view data);

}  // namespace lockstep

#endif  // LOCKSTEP_COMMON_FILES_H_
