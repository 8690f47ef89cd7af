#include "agent/workloads/find.h"

#include <dirent.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "absl/strings/str_format.h"
#include "common/clock.h"
#include "common/mix.h"

namespace lockstep {
namespace {

// A name pattern longer than this is refused (PATH_MAX: no longer name matches).
constexpr size_t kMaxFindGlobBytes = 4096;

int64_t MtimeNs(const struct stat& st) {
  return static_cast<int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;
}

class FindWorkload : public Workload {
 public:
  explicit FindWorkload(const v1::PhaseSpec& spec) : spec_(spec), criteria_(FindCriteriaOf(spec)) {}

  absl::Status Validate() const override {
    if (spec_.find_name_glob().size() > kMaxFindGlobBytes) {
      return SpecError(spec_, absl::StrFormat("find_name_glob of %u bytes; the limit is %u",
                                              spec_.find_name_glob().size(), kMaxFindGlobBytes));
    }
    if (spec_.find_newer_unix_ns() < 0) {
      return SpecError(spec_, absl::StrFormat("find_newer_unix_ns %d is before 1970",
                                              spec_.find_newer_unix_ns()));
    }
    return absl::OkStatus();
  }

  std::string TaskPath(const std::string& dir, uint32_t /*rank*/) const override { return dir; }

  // The tree must be there: a find of a missing directory is an error, not 0 files.
  absl::Status Prepare(const BeneathDir& held, std::span<v1::TaskResult* const>) override {
    held_ = &held;
    const std::string& dir = held.path();
    dir_ = dir;
    struct stat st;
    if (held.Stat(dir, &st) != 0) {
      return absl::FailedPreconditionError(
          absl::StrFormat("phase %s: cannot search %s: %s; run the phases that create the tree "
                          "first, or fix dir",
                          spec_.phase_id(), dir, BeneathErrorText(errno)));
    }
    if (!S_ISDIR(st.st_mode)) {
      return absl::FailedPreconditionError(absl::StrFormat(
          "phase %s: %s is not a directory; find searches a directory tree", spec_.phase_id(), dir));
    }
    return absl::OkStatus();
  }

  void RunTask(const TaskContext& task) override;

  absl::StatusOr<uint32_t> RemoveFiles(const BeneathDir& /*dir*/) const override { return 0u; }
  bool CreatesFiles() const override { return false; }
  // None the spec sizes: a walk holds its pending directory names and one
  // DIR stream (libc's, 32 KiB), as many as the tree has, not the spec.
  uint64_t AgentBufferBytes() const override { return 0; }
  std::string AgentBufferKeys() const override { return "tasks_per_agent"; }

 private:
  class TaskRun;

  const v1::PhaseSpec spec_;
  const FindCriteria criteria_;
  const BeneathDir* held_ = nullptr;  // from Prepare
  std::string dir_;                  // its path
};

// One task's walk: every directory listed, its own entries examined.
class FindWorkload::TaskRun {
 public:
  TaskRun(const FindWorkload& w, const TaskContext& ctx)
      : w_(w), ctx_(ctx), total_tasks_(std::max<uint32_t>(w.spec_.total_tasks(), 1)) {}

  void Run() {
    const int64_t start_unix_ns = RealtimeNs();
    ctx_.result->set_first_io_unix_ns(start_unix_ns);
    Walk();
    // As mdtest: every IOR timer spans the whole walk.
    const int64_t stop_unix_ns = RealtimeNs();
    v1::TaskResult* r = ctx_.result;
    SetWholeSpanTimers(start_unix_ns, stop_unix_ns, r);
    r->set_ops(scanned_);
    r->set_items_matched(matched_);
  }

 private:
  void Fail(const std::string& what, const std::string& path, int err) {
    ctx_.Fail({.what = what, .path = path, .err = err});
  }

  std::string PathOf(const std::string& rel) const {
    return rel.empty() ? w_.dir_ : w_.dir_ + "/" + rel;
  }

  // Depth first from the phase directory; stops at the first error.
  void Walk() {
    std::vector<std::string> pending = {""};
    while (!pending.empty() && !ctx_.Aborted()) {
      const std::string rel = std::move(pending.back());
      pending.pop_back();
      if (!ListDir(rel, &pending)) return;
    }
  }

  // Opens directory `rel`, the task's first timed operation when it is the
  // root (the start gate's bracket, workload.h PhaseTasks).
  DIR* Open(const std::string& path, bool first) {
    // Latency samples are the examined files' lstats only (ops counts those).
    if (first) ctx_.FirstOpIssuing();
    // Below the held directory, no symlink followed (agent/beneath.h).
    const int fd = w_.held_->Open(path, O_RDONLY | O_DIRECTORY);
    DIR* d = fd < 0 ? nullptr : ::fdopendir(fd);
    const int err = errno;
    if (fd >= 0 && d == nullptr) ::close(fd);
    if (first) ctx_.FirstOpReturned();
    errno = err;
    return d;
  }

  // Lists directory `rel`: its subdirectories onto *pending, its own entries
  // examined. False when the task failed.
  bool ListDir(const std::string& rel, std::vector<std::string>* pending) {
    const std::string path = PathOf(rel);
    DIR* d = Open(path, rel.empty());
    if (d == nullptr) {
      if (errno == ENOENT && !rel.empty()) return true;  // gone since its parent was read
      Fail("cannot open directory", path, errno);
      return false;
    }
    const int dfd = ::dirfd(d);
    bool ok = true;
    for (;;) {
      if (ctx_.Aborted()) break;
      errno = 0;
      const struct dirent* e = ::readdir(d);
      if (e == nullptr) {
        if (errno != 0) {
          Fail("cannot read directory", path, errno);
          ok = false;
        }
        break;
      }
      const char* name = e->d_name;
      if (std::strcmp(name, ".") == 0 || std::strcmp(name, "..") == 0) continue;
      std::string child = rel.empty() ? std::string(name) : rel + "/" + name;
      if (!Entry(dfd, e->d_type, name, std::move(child), pending)) {
        ok = false;
        break;
      }
    }
    ::closedir(d);
    return ok;
  }

  // One entry of a listed directory: a directory to walk, or a file this task
  // examines if it owns it. False when the task failed.
  bool Entry(int dfd, unsigned char type, const char* name, std::string child,
             std::vector<std::string>* pending) {
    if (type == DT_DIR) {
      pending->push_back(std::move(child));
      return true;
    }
    const bool owned = FindOwns(child, ctx_.rank, total_tasks_);
    // Without d_type every task looks, to know whether to descend.
    if (type != DT_UNKNOWN && !owned) return true;
    struct stat st;
    const int64_t t0 = MonotonicNs();
    const int rc = ::fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW);
    const int err = errno;
    const int64_t took_ns = MonotonicNs() - t0;
    if (rc != 0) {
      if (err == ENOENT) return true;  // removed since the listing
      Fail("cannot stat", PathOf(child), err);
      return false;
    }
    if (S_ISDIR(st.st_mode)) {
      pending->push_back(std::move(child));
      return true;
    }
    if (!owned) return true;
    ctx_.latency->Record(static_cast<uint64_t>(took_ns));
    ++scanned_;
    ctx_.counters->ops.store(scanned_, std::memory_order_relaxed);
    if (FindMatches(w_.criteria_, name, MtimeNs(st), static_cast<uint64_t>(st.st_size))) {
      ++matched_;
    }
    return true;
  }

  const FindWorkload& w_;
  const TaskContext& ctx_;
  const uint32_t total_tasks_;
  uint64_t scanned_ = 0;
  uint64_t matched_ = 0;
};

void FindWorkload::RunTask(const TaskContext& task) { TaskRun(*this, task).Run(); }

}  // namespace

FindCriteria FindCriteriaOf(const v1::PhaseSpec& spec) {
  return {.newer_unix_ns = spec.find_newer_unix_ns(),
          .match_size = spec.find_match_size(),
          .size_bytes = spec.find_size_bytes(),
          .name_glob = spec.find_name_glob()};
}

bool FindMatches(const FindCriteria& c, std::string_view base_name, int64_t mtime_unix_ns,
                 uint64_t size_bytes) {
  if (c.newer_unix_ns != 0 && mtime_unix_ns <= c.newer_unix_ns) return false;
  if (c.match_size && size_bytes != c.size_bytes) return false;
  if (c.name_glob.empty()) return true;
  const std::string name(base_name);
  return ::fnmatch(c.name_glob.c_str(), name.c_str(), 0) == 0;
}

bool FindOwns(std::string_view rel_path, uint32_t rank, uint32_t total_tasks) {
  if (total_tasks <= 1) return true;
  uint64_t h = 0xcbf29ce484222325ULL;  // FNV-1a, then mixed: names differ in few bytes
  for (const char ch : rel_path) {
    h ^= static_cast<unsigned char>(ch);
    h *= 0x100000001b3ULL;
  }
  return Mix64(h) % total_tasks == rank;
}

std::unique_ptr<Workload> MakeFindWorkload(const v1::PhaseSpec& spec,
                                           const WorkloadOptions& /*options*/) {
  return std::make_unique<FindWorkload>(spec);
}

}  // namespace lockstep
