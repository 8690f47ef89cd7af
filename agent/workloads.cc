#include "agent/workloads.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "absl/strings/str_format.h"
#include "common/clock.h"
#include "common/mdtest_layout.h"
#include "common/mix.h"
#include "common/pattern.h"

namespace lockstep {
namespace {

// Each small file's pattern starts at a distinct "offset" (index << 32), so a
// file holding another file's data is caught; the stamps stay 4 KiB aligned.
uint64_t SmallFileBase(uint64_t index) { return index << 32; }

int WriteAll(int fd, const char* buf, size_t len) {
  size_t done = 0;
  while (done < len) {
    ssize_t n = ::write(fd, buf + done, len - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    if (n == 0) return EIO;
    done += static_cast<size_t>(n);
  }
  return 0;
}

// Reads up to `len` bytes; *got receives how many.
int ReadAll(int fd, char* buf, size_t len, size_t* got) {
  *got = 0;
  while (*got < len) {
    ssize_t n = ::read(fd, buf + *got, len - *got);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    if (n == 0) break;
    *got += static_cast<size_t>(n);
  }
  return 0;
}

void SetAllTimers(v1::TaskResult* r, int64_t start, int64_t stop) {
  r->set_open_start_unix_ns(start);
  r->set_open_stop_unix_ns(start);
  r->set_rdwr_start_unix_ns(start);
  r->set_rdwr_stop_unix_ns(stop);
  r->set_close_start_unix_ns(stop);
  r->set_close_stop_unix_ns(stop);
}

}  // namespace

std::string SmallFilesRoot(const std::string& dir, const v1::PhaseSpec& spec, uint32_t rank) {
  return absl::StrFormat("%s/%s.small.%08d", dir, spec.file_name(), rank);
}

uint64_t SmallFileSize(const v1::PhaseSpec& spec, uint32_t rank, uint64_t index) {
  const double lo = static_cast<double>(std::max<uint64_t>(spec.small_file_min_bytes(), 8));
  const double hi = static_cast<double>(std::max<uint64_t>(spec.small_file_max_bytes(), 8));
  const uint64_t r = Mix64(spec.pattern_seed() ^ Mix64((uint64_t{rank} << 40) ^ index));
  const double u = static_cast<double>(r >> 11) / 9007199254740992.0;  // [0, 1)
  double v = hi <= lo ? lo : std::exp(std::log(lo) + u * (std::log(hi) - std::log(lo)));
  uint64_t size = static_cast<uint64_t>(v) / 8 * 8;
  return std::clamp<uint64_t>(size, static_cast<uint64_t>(lo) / 8 * 8,
                              static_cast<uint64_t>(hi) / 8 * 8);
}

void RunSmallFilesTask(TaskWork& w) {
  const v1::PhaseSpec& s = *w.spec;
  v1::TaskResult* r = w.result;
  const uint64_t n = s.small_files();
  const uint64_t per_dir = std::max<uint32_t>(s.small_files_per_dir(), 1);
  const uint64_t tag = PatternTag(s.pattern_seed(), w.rank);
  const std::string root = SmallFilesRoot(w.dir, s, w.rank);
  char path[4096];

  // Open window: the directories.
  r->set_open_start_unix_ns(RealtimeNs());
  r->set_first_io_unix_ns(r->open_start_unix_ns());
  bool ok = true;
  if (::mkdir(root.c_str(), 0775) != 0) {
    w.fail("cannot create directory", root, errno, 0, false);
    ok = false;
  }
  for (uint64_t d = 0; ok && d * per_dir < n; ++d) {
    std::snprintf(path, sizeof(path), "%s/d%06llu", root.c_str(), static_cast<unsigned long long>(d));
    if (::mkdir(path, 0775) != 0) {
      w.fail("cannot create directory", path, errno, 0, false);
      ok = false;
    }
  }
  r->set_open_stop_unix_ns(RealtimeNs());

  // Transfer window: create, write, close every file.
  r->set_rdwr_start_unix_ns(RealtimeNs());
  uint64_t bytes = 0, ops = 0;
  for (uint64_t i = 0; ok && i < n; ++i) {
    if (w.abort->load(std::memory_order_relaxed)) break;
    std::snprintf(path, sizeof(path), "%s/d%06llu/f%08llu", root.c_str(),
                  static_cast<unsigned long long>(i / per_dir), static_cast<unsigned long long>(i));
    const uint64_t size = SmallFileSize(s, w.rank, i);
    StampPattern(w.buf, size, SmallFileBase(i), tag);
    const int64_t t0 = MonotonicNs();
    int fd = ::open(path, O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0664);
    int err = fd < 0 ? errno : 0;
    if (fd >= 0) {
      err = WriteAll(fd, w.buf, size);
      if (err == 0 && s.fsync_per_transfer() && ::fsync(fd) != 0) err = errno;
      if (::close(fd) != 0 && err == 0) err = errno;
    }
    w.hist->Record(static_cast<uint64_t>(MonotonicNs() - t0));
    if (err != 0) {
      w.fail("cannot create and write", path, err, 0, false);
      ok = false;
      break;
    }
    bytes += size;
    ++ops;
    w.bytes->store(bytes, std::memory_order_relaxed);
    w.ops->store(ops, std::memory_order_relaxed);
  }
  r->set_rdwr_stop_unix_ns(RealtimeNs());
  r->set_close_start_unix_ns(r->rdwr_stop_unix_ns());
  r->set_close_stop_unix_ns(r->rdwr_stop_unix_ns());
  r->set_bytes(bytes);
  r->set_ops(ops);

  // Read back and check every file (its own row).
  r->set_readback_start_unix_ns(RealtimeNs());
  uint64_t back = 0;
  for (uint64_t i = 0; ok && i < ops; ++i) {
    if (w.abort->load(std::memory_order_relaxed)) break;
    std::snprintf(path, sizeof(path), "%s/d%06llu/f%08llu", root.c_str(),
                  static_cast<unsigned long long>(i / per_dir), static_cast<unsigned long long>(i));
    const uint64_t size = SmallFileSize(s, w.rank, i);
    int fd = ::open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      w.fail("cannot open for read-back", path, errno, 0, false);
      break;
    }
    size_t got = 0;
    int err = ReadAll(fd, w.buf, size, &got);
    ::close(fd);
    if (err != 0) {
      w.fail("cannot read back", path, err, got, false);
      break;
    }
    if (got != size) {
      w.fail(absl::StrFormat("short read-back (got %u of %u bytes) of", got, size), path, 0, got,
             true);
      break;
    }
    auto m = CheckPattern(w.buf, size, SmallFileBase(i), tag, w.scratch);
    if (m) {
      PatternMismatch local = *m;
      local.file_offset -= SmallFileBase(i);
      w.fail(absl::StrFormat("read-back verification failed (%s) in", local.Describe()), path, 0,
             local.file_offset, true);
      break;
    }
    back += size;
  }
  r->set_readback_stop_unix_ns(RealtimeNs());
  r->set_readback_bytes(back);
}

namespace {

// mdtest's step of an op for the -N shift: create 0, stat and rename 1,
// read 2, remove 3.
uint32_t MdtestStep(v1::MdtestOp op) {
  switch (op) {
    case v1::MD_DIR_STAT:
    case v1::MD_FILE_STAT:
    case v1::MD_DIR_RENAME:
      return 1;
    case v1::MD_FILE_READ:
      return 2;
    case v1::MD_DIR_REMOVE:
    case v1::MD_FILE_REMOVE:
      return 3;
    default:
      return 0;
  }
}

bool IsTreeOp(v1::MdtestOp op) { return op == v1::MD_TREE_CREATE || op == v1::MD_TREE_REMOVE; }

}  // namespace

uint32_t MdtestItemOwner(const v1::PhaseSpec& spec, uint32_t rank) {
  const uint64_t n = std::max<uint32_t>(spec.total_tasks(), 1);
  if (IsTreeOp(spec.md_op())) return rank;
  return static_cast<uint32_t>(
      (rank + uint64_t{MdtestStep(spec.md_op())} * spec.md_neighbor_shift()) % n);
}

bool MdtestOwnsTree(const v1::PhaseSpec& spec, uint32_t rank) {
  return spec.md_unique_dir() || rank == 0;
}

std::vector<std::string> MdtestTaskTree(const std::string& dir, const v1::PhaseSpec& spec,
                                        uint32_t rank) {
  const std::string testdir = MdtestTestDir(dir, spec.repetition());
  if (!spec.md_unique_dir()) {
    return MdtestTreePaths(testdir + "/mdtest_tree.0", "mdtest_tree", spec.md_branching(),
                           spec.md_depth());
  }
  uint32_t tree_rank = rank;
  if (!IsTreeOp(spec.md_op())) {
    const uint64_t n = std::max<uint32_t>(spec.total_tasks(), 1);
    tree_rank = static_cast<uint32_t>((MdtestItemOwner(spec, rank) + spec.md_neighbor_shift()) % n);
  }
  return MdtestTreePaths(absl::StrFormat("%s/mdtest_tree.%u.0", testdir, tree_rank),
                         MdtestTreeBase(true, rank), spec.md_branching(), spec.md_depth());
}

void RunMdtestTask(TaskWork& w) {
  const v1::PhaseSpec& s = *w.spec;
  const std::vector<std::string>& tree = *w.tree;
  const uint64_t dirs = tree.size();
  const bool owns_tree = MdtestOwnsTree(s, w.rank);
  uint64_t ops = 0, bytes = 0;
  const int64_t start = RealtimeNs();
  w.result->set_first_io_unix_ns(start);
  auto timed = [&](auto&& op) {
    const int64_t t0 = MonotonicNs();
    int err = op();
    w.hist->Record(static_cast<uint64_t>(MonotonicNs() - t0));
    if (err == 0) {
      ++ops;
      w.ops->store(ops, std::memory_order_relaxed);
    }
    return err;
  };
  const uint64_t wbytes = s.md_write_bytes(), rbytes = s.md_read_bytes();
  const MdtestItems layout =
      MdtestItemLayout(s.md_items(), 0, s.md_branching(), s.md_depth(), s.md_leaf_only());
  const bool dir_items = s.md_op() == v1::MD_DIR_CREATE || s.md_op() == v1::MD_DIR_STAT ||
                         s.md_op() == v1::MD_DIR_REMOVE || s.md_op() == v1::MD_DIR_RENAME;
  // Path of item i (0-based) of the owner, as mdtest names and places it.
  auto item_path = [&](uint64_t i) {
    const uint64_t n = layout.first + i;
    const uint64_t d = layout.per_dir == 0 ? 0 : std::min(n / layout.per_dir, dirs - 1);
    return tree[d] + "/" + MdtestItemName(dir_items, w.md_owner, n);
  };
  switch (s.md_op()) {
    case v1::MD_TREE_CREATE:
      for (uint64_t k = 0; owns_tree && k < dirs; ++k) {
        if (w.abort->load(std::memory_order_relaxed)) break;
        if (int e = timed([&] { return ::mkdir(tree[k].c_str(), 0775) == 0 ? 0 : errno; })) {
          w.fail("cannot create directory", tree[k], e, 0, false);
          break;
        }
      }
      break;
    case v1::MD_TREE_REMOVE:
      for (uint64_t k = dirs; owns_tree && k-- > 0;) {
        if (w.abort->load(std::memory_order_relaxed)) break;
        if (int e = timed([&] { return ::rmdir(tree[k].c_str()) == 0 ? 0 : errno; })) {
          w.fail("cannot remove directory", tree[k], e, 0, false);
          break;
        }
      }
      break;
    case v1::MD_DIR_RENAME: {
      // mdtest 4.1's rename_dir_test: a chain through the items' names.
      if (layout.items <= 1) break;
      const std::string parked = item_path(0) + "-XX";
      std::string last = parked;
      for (uint64_t i = 0; i < layout.items; ++i) {
        if (w.abort->load(std::memory_order_relaxed)) break;
        std::string item = i + 1 == layout.items ? parked : item_path(i);
        if (int e = timed([&] { return ::rename(item.c_str(), last.c_str()) == 0 ? 0 : errno; })) {
          w.fail("cannot rename (to " + last + ")", item, e, 0, false);
          break;
        }
        last = std::move(item);
      }
      break;
    }
    default:
      for (uint64_t i = 0; i < layout.items; ++i) {
        if (w.abort->load(std::memory_order_relaxed)) break;
        const std::string path = item_path(i);
        int e = 0;
        const char* what = "";
        struct stat st;
        switch (s.md_op()) {
          case v1::MD_DIR_CREATE:
            what = "cannot create directory";
            e = timed([&] { return ::mkdir(path.c_str(), 0775) == 0 ? 0 : errno; });
            break;
          case v1::MD_DIR_STAT:
          case v1::MD_FILE_STAT:
            what = "cannot stat";
            e = timed([&] { return ::stat(path.c_str(), &st) == 0 ? 0 : errno; });
            break;
          case v1::MD_DIR_REMOVE:
            what = "cannot remove directory";
            e = timed([&] { return ::rmdir(path.c_str()) == 0 ? 0 : errno; });
            break;
          case v1::MD_FILE_CREATE:
            what = "cannot create";
            e = timed([&] {
              int fd = ::open(path.c_str(), O_CREAT | O_WRONLY | O_CLOEXEC | O_NOFOLLOW, 0664);
              if (fd < 0) return errno;
              int err = wbytes > 0 ? WriteAll(fd, w.buf, wbytes) : 0;
              if (::close(fd) != 0 && err == 0) err = errno;
              return err;
            });
            if (e == 0) bytes += wbytes;
            break;
          case v1::MD_FILE_READ:
            what = "cannot read";
            e = timed([&] {
              int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
              if (fd < 0) return errno;
              size_t got = 0;
              int err = rbytes > 0 ? ReadAll(fd, w.buf, rbytes, &got) : 0;
              ::close(fd);
              if (err == 0 && got < rbytes) err = EIO;  // mdtest: "unable to read file"
              return err;
            });
            if (e == 0) bytes += rbytes;
            break;
          case v1::MD_FILE_REMOVE:
            what = "cannot remove";
            e = timed([&] { return ::unlink(path.c_str()) == 0 ? 0 : errno; });
            break;
          default:
            w.fail("unknown mdtest operation for", tree[0], EINVAL, 0, false);
            e = -1;
        }
        if (e > 0) w.fail(what, path, e, 0, false);
        if (e != 0) break;
        w.bytes->store(bytes, std::memory_order_relaxed);
      }
  }
  SetAllTimers(w.result, start, RealtimeNs());
  w.result->set_bytes(bytes);
  w.result->set_ops(ops);
}

void FinishMdtestPhase(const v1::PhaseSpec& spec, const std::string& dir) {
  if (spec.md_op() != v1::MD_TREE_REMOVE) return;
  // Fails (ENOTEMPTY) while another agent's tasks still remove their trees;
  // that agent's own attempt, later, succeeds.
  ::rmdir(MdtestTestDir(dir, spec.repetition()).c_str());
}

absl::Status PrepareMdtestTestDir(const v1::PhaseSpec& spec, const std::string& dir) {
  const std::string testdir = MdtestTestDir(dir, spec.repetition());
  if (::mkdir(testdir.c_str(), 0775) != 0 && errno != EEXIST) {
    return absl::InternalError(absl::StrFormat("phase %s: cannot create directory %s: %s",
                                               spec.phase_id(), testdir, std::strerror(errno)));
  }
  return absl::OkStatus();
}

absl::StatusOr<uint64_t> RemoveTree(const std::string& path) {
  std::error_code ec;
  uint64_t n = std::filesystem::remove_all(path, ec);
  if (ec && ec != std::errc::no_such_file_or_directory) {
    return absl::InternalError(absl::StrFormat("cannot remove %s: %s", path, ec.message()));
  }
  return n;
}

}  // namespace lockstep
