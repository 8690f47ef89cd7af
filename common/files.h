// Small file helpers with Status errors that name the path.
#ifndef LOCKSTEP_COMMON_FILES_H_
#define LOCKSTEP_COMMON_FILES_H_

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace lockstep {

absl::StatusOr<std::string> ReadFileToString(const std::string& path);

// The contents of `path` when it holds at most `max_bytes`; a longer file,
// or one without end (/dev/zero, a FIFO that keeps writing), is refused
// with InvalidArgument "PATH: more than SIZE, the most WHAT may be; ..."
// after reading max_bytes + 1, never more. `what` names the input ("a plan
// file"). Every file taken from a user for a plan goes through this.
absl::StatusOr<std::string> ReadFileAtMost(const std::string& path, uint64_t max_bytes,
                                           std::string_view what);

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

// "/", /etc, /usr, /boot, /bin, /sbin, /lib*, /proc, /sys, /dev (but
// /dev/shm), /var/lib, /root, or below one of them: where benchmark files
// have no business. `path` is absolute and normal.
bool IsSystemDirectory(const std::string& path);

// `path` made absolute against the working directory and normalized by its
// text (no symlinks resolved); `path` normalized when the working directory
// cannot be read.
std::string AbsolutePath(const std::string& path);

// Hex SHA-256 of `data` (OpenSSL EVP).
std::string Sha256Hex(std::string_view data);

}  // namespace lockstep

#endif  // LOCKSTEP_COMMON_FILES_H_
