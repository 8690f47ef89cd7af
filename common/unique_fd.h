// A file descriptor owned by one object and closed when it goes (errno is
// kept across the close): movable, not copyable.
#ifndef LOCKSTEP_COMMON_UNIQUE_FD_H_
#define LOCKSTEP_COMMON_UNIQUE_FD_H_

#include <unistd.h>

#include <cerrno>
#include <utility>

namespace lockstep {

class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(UniqueFd&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  UniqueFd& operator=(UniqueFd&& o) noexcept {
    if (this != &o) Reset(std::exchange(o.fd_, -1));
    return *this;
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd() { Reset(); }

  int get() const { return fd_; }
  // Closes the descriptor held, if any, and holds `fd` instead.
  void Reset(int fd = -1) {
    if (fd_ >= 0) {
      const int saved = errno;
      ::close(fd_);
      errno = saved;
    }
    fd_ = fd;
  }

 private:
  int fd_ = -1;
};

}  // namespace lockstep

#endif  // LOCKSTEP_COMMON_UNIQUE_FD_H_
