#include "common/files.h"

#include <fcntl.h>
#include <openssl/evp.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "absl/strings/str_format.h"
#include "common/sizes.h"

namespace lockstep {
namespace {

absl::Status ErrnoError(std::string_view what, const std::string& path, int err) {
  std::string msg = absl::StrFormat("%s %s: %s", std::string(what), path, std::strerror(err));
  switch (err) {
    case ENOENT:
      return absl::NotFoundError(msg);
    case EACCES:
    case EPERM:
      return absl::PermissionDeniedError(msg);
    case ENOSPC:
    case EDQUOT:
      return absl::ResourceExhaustedError(msg);
    default:
      return absl::InternalError(msg);
  }
}

}  // namespace

namespace {

// Reads `fd` to its end into *out, stopping once *out holds more than
// `max_bytes` (the caller refuses that); an errno on failure, else 0.
int ReadAll(int fd, uint64_t max_bytes, std::string* out) {
  char buf[65536];
  while (out->size() <= max_bytes) {
    const uint64_t room = max_bytes + 1 - out->size();
    const size_t want = room < sizeof(buf) ? static_cast<size_t>(room) : sizeof(buf);
    ssize_t n = ::read(fd, buf, want);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    if (n == 0) break;
    out->append(buf, static_cast<size_t>(n));
  }
  return 0;
}

}  // namespace

absl::StatusOr<std::string> ReadFileToString(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoError("cannot open", path, errno);
  std::string out;
  const int err = ReadAll(fd, UINT64_MAX - 1, &out);
  ::close(fd);
  if (err != 0) return ErrnoError("cannot read", path, err);
  return out;
}

absl::StatusOr<std::string> ReadFileAtMost(const std::string& path, uint64_t max_bytes,
                                           std::string_view what) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoError("cannot open", path, errno);
  std::string out;
  const int err = ReadAll(fd, max_bytes, &out);
  ::close(fd);
  if (err != 0) return ErrnoError("cannot read", path, err);
  if (out.size() > max_bytes) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: more than %s, the most %s may be (no plan needs more); is it the right file?",
        path, HumanBytes(max_bytes), std::string(what)));
  }
  return out;
}

absl::Status WriteFileAtomically(const std::string& path, std::string_view content,
                                 mode_t mode) {
  std::string tmp = absl::StrFormat("%s.tmp.%d", path, ::getpid());
  ::unlink(tmp.c_str());  // a leftover of a crashed writer with this pid
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode & 0600);
  if (fd < 0) return ErrnoError("cannot create", tmp, errno);
  if (::fchmod(fd, mode) != 0) {
    int err = errno;
    ::close(fd);
    ::unlink(tmp.c_str());
    return ErrnoError("cannot chmod", tmp, err);
  }
  size_t done = 0;
  while (done < content.size()) {
    ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      return ErrnoError("cannot write", tmp, err);
    }
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0) {
    int err = errno;
    ::close(fd);
    ::unlink(tmp.c_str());
    return ErrnoError("cannot fsync", tmp, err);
  }
  ::close(fd);
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    return ErrnoError("cannot rename into place", path, err);
  }
  // The directory entry is durable once the directory itself is synced.
  const size_t slash = path.find_last_of('/');
  const std::string dir = slash == std::string::npos ? std::string(".")
                          : slash == 0               ? std::string("/")
                                                     : path.substr(0, slash);
  int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
  return absl::OkStatus();
}

std::string Sha256Hex(std::string_view data) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(data.data(), data.size(), md, &len, EVP_sha256(), nullptr);
  std::string hex;
  hex.reserve(len * 2);
  for (unsigned int i = 0; i < len; ++i) hex += absl::StrFormat("%02x", md[i]);
  return hex;
}

absl::Status MakeDirectories(const std::string& dir, mode_t mode) {
  if (dir.empty()) return absl::InvalidArgumentError("no directory given");
  for (size_t pos = dir.find('/', 1);; pos = dir.find('/', pos + 1)) {
    const std::string part = dir.substr(0, pos);
    if (!part.empty() && part.back() != '/' && ::mkdir(part.c_str(), mode) != 0 &&
        errno != EEXIST) {
      return ErrnoError("cannot create directory", part, errno);
    }
    if (pos == std::string::npos) break;
  }
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return absl::FailedPreconditionError(absl::StrFormat("%s is not a directory", dir));
  }
  return absl::OkStatus();
}

std::string AbsolutePath(const std::string& path) {
  std::error_code ec;
  const std::filesystem::path p = std::filesystem::absolute(path, ec);
  return (ec ? std::filesystem::path(path) : p).lexically_normal().string();
}

bool PathIsUnder(const std::string& path, const std::string& root) {
  if (root == "/") return true;
  return path == root || (path.size() > root.size() && path.compare(0, root.size(), root) == 0 &&
                          path[root.size()] == '/');
}

bool IsSystemDirectory(const std::string& path) {
  if (path == "/") return true;
  static const char* const kSystem[] = {"/etc", "/usr",  "/boot",    "/bin", "/sbin",
                                        "/proc", "/sys", "/var/lib", "/root"};
  for (const char* s : kSystem) {
    if (PathIsUnder(path, s)) return true;
  }
  if (PathIsUnder(path, "/dev")) return !PathIsUnder(path, "/dev/shm");
  // /lib, /lib64, /lib32, /libx32 ...
  const size_t slash = path.find('/', 1);
  const std::string top = path.substr(0, slash);
  return top.rfind("/lib", 0) == 0;
}

}  // namespace lockstep
