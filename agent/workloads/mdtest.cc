#include "agent/workloads/mdtest.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <set>
#include <vector>

#include "absl/strings/str_format.h"
#include "agent/workloads/file_io.h"
#include "common/checked_math.h"
#include "common/clock.h"
#include "common/fs_type.h"
#include "common/limits.h"
#include "common/mdtest_layout.h"
#include "common/pattern.h"
#include "common/status_macros.h"

namespace lockstep {
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

bool IsDirOp(v1::MdtestOp op) {
  return op == v1::MD_DIR_CREATE || op == v1::MD_DIR_STAT || op == v1::MD_DIR_REMOVE ||
         op == v1::MD_DIR_RENAME;
}

int ErrnoOf(int rc) { return rc == 0 ? 0 : errno; }

bool IsCreate(v1::MdtestOp op) { return op == v1::MD_FILE_CREATE || op == v1::MD_DIR_CREATE; }

// mdtest -W applies to the creates.
bool IsStonewalledCreate(const v1::PhaseSpec& s) {
  return IsCreate(s.md_op()) && s.md_stonewall_seconds() > 0;
}

// What one directory of a task's tree (MdtestTaskTree) costs it at least:
// the std::string, and 32 bytes from malloc for its path, 27 characters or
// more ("/test-dir.0-0/mdtest_tree.0" below the root).
constexpr uint64_t kMdtestPathFloorBytes = sizeof(std::string) + 32;

class MdtestWorkload : public Workload {
 public:
  explicit MdtestWorkload(const v1::PhaseSpec& spec) : spec_(spec) {}

  absl::Status Validate() const override;
  std::string TaskPath(const std::string& dir, uint32_t rank) const override {
    return MdtestTaskTree(dir, spec_, rank).front();
  }
  absl::Status Prepare(const BeneathDir& dir, std::span<v1::TaskResult* const> results) override;
  void RunTask(const TaskContext& task) override;
  // tree_remove removes the iteration's test-dir when it is empty (the agent
  // whose tasks finish last succeeds, as mdtest's rank 0 after its barrier).
  void Finish() override {
    if (spec_.md_op() != v1::MD_TREE_REMOVE) return;
    // Fails (ENOTEMPTY) while another agent's tasks still remove their trees;
    // that agent's own attempt, later, succeeds.
    held_->Rmdir(MdtestTestDir(dir_, spec_.repetition()));
  }
  absl::StatusOr<uint32_t> RemoveFiles(const BeneathDir& dir) const override;
  bool CreatesFiles() const override { return true; }
  // mdtest -w: each created file gets md_write_bytes.
  uint64_t AgentWriteBytes() const override {
    if (spec_.md_op() != v1::MD_FILE_CREATE) return 0;
    return SaturatingMul(SaturatingMul(spec_.tasks(), spec_.md_items()), spec_.md_write_bytes());
  }
  bool CreatesMissingDir() const override { return true; }
  bool RemovesTrees() const override { return spec_.md_op() == v1::MD_TREE_REMOVE; }
  // Per task a -w/-e buffer of max(-w, -e, 8), for file_read with verify
  // (-X) the expected bytes, min(-w, -e) rounded down to 8, and its copy of
  // the tree's paths at kMdtestPathFloorBytes a directory (a floor).
  uint64_t AgentBufferBytes() const override {
    const uint64_t w = spec_.md_write_bytes(), e = spec_.md_read_bytes();
    const bool expects = spec_.md_op() == v1::MD_FILE_READ && spec_.verify();
    const uint64_t paths = SaturatingMul(MdtestTreeDirs(spec_.md_branching(), spec_.md_depth()),
                                         kMdtestPathFloorBytes);
    const uint64_t per_task = SaturatingAdd(
        SaturatingAdd(std::max<uint64_t>({w, e, 8}), expects ? std::min(w, e) / 8 * 8 : 0),
        paths);
    return SaturatingMul(spec_.tasks(), per_task);
  }
  std::string AgentBufferKeys() const override {
    return "tasks_per_agent, md_write_size or md_read_size";
  }

 private:
  class TaskRun;

  // tree_create, by the agent holding rank 0: makes the iteration's test-dir
  // (mdtest does, untimed, before the barrier) if missing.
  absl::Status MakeTestDir() const;

  const v1::PhaseSpec spec_;
  const BeneathDir* held_ = nullptr;            // from Prepare
  std::string dir_;                             // its path
  // Items named by full path from the agent's root, as mdtest names them,
  // where the file system revalidates names (common/fs_type.h,
  // FsKind::names_revalidated); else relative to their tree directory held
  // open.
  bool by_full_path_ = false;
  std::vector<std::vector<std::string>> trees_;  // per task: dirs of its tree, root first
  std::vector<AlignedBuffer> bufs_;              // per task: -w data, -e destination
};

// One task's sub-phase over its tree or items.
class MdtestWorkload::TaskRun {
 public:
  TaskRun(const MdtestWorkload& w, const TaskContext& ctx)
      : s_(w.spec_),
        ctx_(ctx),
        held_(*w.held_),
        walk_(w.by_full_path_ ? w.held_->root() : *w.held_),
        by_full_path_(w.by_full_path_),
        dir_(w.dir_),
        tree_(w.trees_[ctx.index]),
        buf_(w.bufs_[ctx.index].get()),
        owner_(MdtestItemOwner(s_, ctx.rank)),
        layout_(MdtestItemLayout(s_.md_items(), 0, s_.md_branching(), s_.md_depth(),
                                 s_.md_leaf_only())) {}

  void Run() {
    start_mono_ns_ = MonotonicNs();
    const int64_t start_unix_ns = RealtimeNs();
    ctx_.result->set_first_io_unix_ns(start_unix_ns);
    const bool owns_tree = MdtestOwnsTree(s_, ctx_.rank);
    switch (s_.md_op()) {
      case v1::MD_TREE_CREATE:
        if (owns_tree) MakeTree();
        break;
      case v1::MD_TREE_REMOVE:
        if (owns_tree) RemoveTree();
        break;
      case v1::MD_DIR_RENAME:
        RenameChain();
        break;
      default:
        ItemOps();
    }
    // mdtest -Y: sync after the phase, inside its time (the file system of
    // the phase directory: syncfs, not the whole host's sync).
    if (s_.fsync_at_end() && !failed_ && !ctx_.Aborted()) SyncDir();
    // mdtest times a sub-phase as a whole: every IOR timer spans it.
    const int64_t stop_unix_ns = RealtimeNs();
    v1::TaskResult* r = ctx_.result;
    SetWholeSpanTimers(start_unix_ns, stop_unix_ns, r);
    r->set_bytes(bytes_);
    r->set_ops(ops_);
  }

 private:
  void Fail(const std::string& what, const std::string& path, int err) {
    const bool verify = err == EBADMSG && s_.verify();  // mdtest -X: a mismatch
    ctx_.Fail({.what = what, .path = path, .err = verify ? 0 : err, .verify = verify});
  }

  // Runs `op` (returning 0 or an errno), timed; counts it when it succeeded.
  // The first one is bracketed for the start gate (workload.h PhaseTasks).
  template <typename Op>
  int Timed(Op&& op) {
    const bool first = !issued_any_;
    issued_any_ = true;
    if (first) ctx_.FirstOpIssuing();
    const int64_t t0 = MonotonicNs();
    // In flight, for stall reports: a metadata server that stops answering
    // hangs the call (Heartbeat's stalled tasks name it).
    ctx_.counters->op_offset.store(ops_, std::memory_order_relaxed);
    ctx_.counters->op_start_mono_ns.store(t0, std::memory_order_relaxed);
    const int err = op();
    ctx_.counters->op_start_mono_ns.store(0, std::memory_order_relaxed);
    ctx_.latency->Record(static_cast<uint64_t>(MonotonicNs() - t0));
    if (first) ctx_.FirstOpReturned();
    if (err == 0) {
      ++ops_;
      ctx_.counters->ops.store(ops_, std::memory_order_relaxed);
    }
    return err;
  }

  // The tree directory (index into tree_) and name of item i (0-based) of
  // the owner, as mdtest names and places it.
  size_t ItemDir(uint64_t i) const {
    const uint64_t n = layout_.first + i;
    return layout_.per_dir == 0 ? 0 : std::min<uint64_t>(n / layout_.per_dir, tree_.size() - 1);
  }
  std::string ItemName(uint64_t i) const {
    return MdtestItemName(IsDirOp(s_.md_op()), owner_, layout_.first + i);
  }
  std::string ItemPath(uint64_t i) const { return tree_[ItemDir(i)] + "/" + ItemName(i); }

  void MakeTree() {
    for (const std::string& d : tree_) {
      if (ctx_.Aborted()) break;
      if (int e = Timed([&] { return ErrnoOf(walk_.Mkdir(d, 0775)); })) {
        Fail("cannot create directory", d, e);
        break;
      }
    }
  }

  void RemoveTree() {
    for (auto it = tree_.rbegin(); it != tree_.rend(); ++it) {
      if (ctx_.Aborted()) break;
      if (int e = Timed([&] { return ErrnoOf(walk_.Rmdir(*it)); })) {
        Fail("cannot remove directory", *it, e);
        break;
      }
    }
  }

  // mdtest 4.1's rename_dir_test: a chain through the items' names.
  // With a stonewall count handed on, over that many items.
  void RenameChain() {
    const uint64_t n = s_.stonewall_count() > 0 ? s_.stonewall_count() : layout_.items;
    if (n <= 1) return;
    const std::string parked = ItemPath(0) + "-XX";
    std::string last = parked;
    for (uint64_t i = 0; i < n; ++i) {
      if (ctx_.Aborted()) break;
      std::string item = i + 1 == n ? parked : ItemPath(i);
      if (int e = Timed([&] { return ErrnoOf(walk_.Rename(item, last)); })) {
        Fail("cannot rename (to " + last + ")", item, e);
        break;
      }
      last = std::move(item);
    }
  }

  // The items of the op: all of the layout's, or with a stonewall count
  // handed on (PhaseSpec.stonewall_count) exactly that many; a create with
  // mdtest -W stops at the wall and continues to the agreed count.
  void ItemOps() {
    if (IsStonewalledCreate(s_)) return StonewalledCreate();
    const uint64_t n = s_.stonewall_count() > 0 && !IsCreate(s_.md_op()) ? s_.stonewall_count()
                                                                         : layout_.items;
    ItemRange(0, n);
  }

  // Items [from, to) in order, until `wall_mono_ns` (then *hit); returns the
  // index of the first item not done. Stops early on a failure or an abort.
  uint64_t ItemRange(uint64_t from, uint64_t to, int64_t wall_mono_ns = INT64_MAX,
                     bool* hit = nullptr) {
    uint64_t i = from;
    for (; i < to; ++i) {
      if (ctx_.Aborted()) break;
      if (MonotonicNs() >= wall_mono_ns) {
        *hit = true;
        break;
      }
      const char* what = "";
      const int e = ItemOp(i, &what);
      if (e > 0) Fail(what, ItemPath(i), e);
      if (e != 0) {
        failed_ = true;
        break;
      }
      ctx_.counters->bytes.store(bytes_, std::memory_order_relaxed);
    }
    return i;
  }

  // mdtest -W: create until md_stonewall_seconds after the task's start,
  // then every task (of every agent with sync_across_agents) continues to
  // the most items any task made ("all processes did the same number").
  void StonewalledCreate() {
    const int64_t wall_mono_ns = start_mono_ns_ + int64_t{s_.md_stonewall_seconds()} * 1'000'000'000;
    bool hit = false;
    uint64_t done = ItemRange(0, layout_.items, wall_mono_ns, &hit);
    v1::TaskResult* r = ctx_.result;
    if (hit) r->set_stonewall_stop_unix_ns(RealtimeNs());
    r->set_stonewall_pairs(done);
    r->set_stonewall_hit(hit);
    if (failed_ || ctx_.Aborted()) {
      r->set_stonewall_duration_ns(MonotonicNs() - start_mono_ns_);
      return;
    }
    const uint64_t target = ctx_.phase->WearOut(done);
    // As IOR: the stonewall's duration ends when the tasks agreed on the target.
    r->set_stonewall_duration_ns(MonotonicNs() - start_mono_ns_);
    ItemRange(done, std::min(target, layout_.items));
  }

  // Tree directory `d`, opened below the phase directory (no symlink
  // followed) once, untimed. -1 and errno when it cannot be opened.
  int DirFd(size_t d) {
    if (dir_fds_.size() != tree_.size()) dir_fds_.assign(tree_.size(), -1);
    if (dir_fds_[d] < 0) dir_fds_[d] = held_.Open(tree_[d], O_PATH | O_DIRECTORY);
    return dir_fds_[d];
  }

  // `op(dirfd, name)` on item `i`, timed. As mdtest names its items, by
  // full path: where the file system checks every name with itself at each
  // lookup (by_full_path_: FUSE, NFS, CephFS, Lustre, ...), the item's
  // directory is opened again from the agent's root for every operation and
  // inside its time (beneath the root, no symlink followed), so each
  // directory on the way is looked up as in mdtest's path walk: on ceph-fuse
  // a stat by full path costs ~3x one relative to a held directory (bench
  // README section 24). Elsewhere the dentry cache answers that walk, and
  // the directory held open (DirFd, untimed) costs the same without the
  // extra calls.
  template <typename Op>
  int AtItem(uint64_t i, Op&& op) {
    const std::string name = ItemName(i);
    if (!by_full_path_) {
      const int dfd = DirFd(ItemDir(i));
      if (dfd < 0) return errno;
      return Timed([&] { return op(dfd, name.c_str()); });
    }
    return Timed([&] {
      const int dfd = walk_.Open(tree_[ItemDir(i)], O_PATH | O_DIRECTORY);
      if (dfd < 0) return errno;
      const int err = op(dfd, name.c_str());
      ::close(dfd);
      return err;
    });
  }

  // The spec's op on item `i`, timed: 0, an errno (and *what it tried), or
  // -1 when the task already failed.
  int ItemOp(uint64_t i, const char** what) {
    struct stat st;
    switch (s_.md_op()) {
      case v1::MD_DIR_CREATE:
        *what = "cannot create directory";
        return AtItem(i, [](int dfd, const char* n) { return ErrnoOf(::mkdirat(dfd, n, 0775)); });
      case v1::MD_DIR_STAT:
      case v1::MD_FILE_STAT:
        *what = "cannot stat";
        return AtItem(i, [&](int dfd, const char* n) {
          return ErrnoOf(::fstatat(dfd, n, &st, AT_SYMLINK_NOFOLLOW));
        });
      case v1::MD_DIR_REMOVE:
        *what = "cannot remove directory";
        return AtItem(i, [](int dfd, const char* n) {
          return ErrnoOf(::unlinkat(dfd, n, AT_REMOVEDIR));
        });
      case v1::MD_FILE_CREATE:
        *what = "cannot create";
        return CountBytes(AtItem(i, [&](int dfd, const char* n) { return CreateFile(dfd, n); }),
                          s_.md_write_bytes());
      case v1::MD_FILE_READ: {
        *what = "cannot read";
        const int err = CountBytes(
            AtItem(i, [&](int dfd, const char* n) { return ReadFile(dfd, n); }),
            s_.md_read_bytes());
        if (err == 0 && s_.verify() && !ReadMatches()) {
          // mdtest -X: untimed, as mdtest checks after the read.
          *what = "data differs from what mdtest -w wrote (mdtest -X) in";
          return EBADMSG;
        }
        return err;
      }
      case v1::MD_FILE_REMOVE:
        *what = "cannot remove";
        return AtItem(i, [](int dfd, const char* n) { return ErrnoOf(::unlinkat(dfd, n, 0)); });
      default:
        Fail("unknown mdtest operation for", tree_[0], EINVAL);
        return -1;
    }
  }

  int CountBytes(int err, uint64_t bytes) {
    if (err == 0) bytes_ += bytes;
    return err;
  }

  // mdtest -w: create, write md_write_bytes, close. A new item (O_EXCL) needs
  // no check; one that exists is opened non-blocking and checked as by
  // OpenFile (a planted FIFO or hard link fails the item).
  int CreateFile(int dfd, const char* name) const {
    constexpr int kFlags = O_WRONLY | O_CLOEXEC | O_NOFOLLOW;
    int fd = ::openat(dfd, name, kFlags | O_CREAT | O_EXCL, 0664);
    if (fd < 0 && errno == EEXIST) {
      fd = ::openat(dfd, name, kFlags | O_NONBLOCK);  // kept: no effect on a regular file
      if (const int bad = fd < 0 ? 0 : SettleDataFile(fd, O_WRONLY | O_NONBLOCK); bad != 0) {
        ::close(fd);
        return bad;
      }
    }
    if (fd < 0) return errno;
    const uint64_t wbytes = s_.md_write_bytes();
    int err = wbytes > 0 ? WriteAll(fd, buf_, wbytes) : 0;
    if (::close(fd) != 0 && err == 0) err = errno;
    return err;
  }

  // mdtest -e: open, read md_read_bytes, close; a short file is an error.
  // Non-blocking, so that a FIFO planted at the name cannot hold the task
  // (it reads short and is then named); a regular file reads as ever.
  int ReadFile(int dfd, const char* name) const {
    const int fd = ::openat(dfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (fd < 0) return errno;
    const uint64_t rbytes = s_.md_read_bytes();
    size_t got = 0;
    int err = rbytes > 0 ? ReadAll(fd, buf_, rbytes, &got) : 0;
    if ((err != 0 || got < rbytes) && SettleDataFile(fd, O_RDONLY | O_NONBLOCK) == ENXIO) {
      err = ENXIO;
    }
    ::close(fd);
    if (err == 0 && got < rbytes) err = EIO;  // mdtest: "unable to read file"
    return err;
  }

  // mdtest -X: the item's bytes are the owner's pattern (the create wrote
  // its own items with its rank's tag), up to the last whole 8 bytes.
  bool ReadMatches() {
    const uint64_t n = std::min(s_.md_read_bytes(), s_.md_write_bytes()) / 8 * 8;
    if (n == 0) return true;
    if (expected_.size() != n) {
      expected_.assign(n, 0);
      FillPattern(expected_.data(), n, 0, PatternTag(s_.pattern_seed(), owner_));
    }
    return std::memcmp(buf_, expected_.data(), n) == 0;
  }

  void SyncDir() {
    const int fd = held_.Open(dir_, O_RDONLY | O_DIRECTORY);
    if (fd < 0) return Fail("cannot open for mdtest -Y's sync", dir_, errno);
    if (::syncfs(fd) != 0) Fail("cannot sync (mdtest -Y)", dir_, errno);
    ::close(fd);
  }

  const v1::PhaseSpec& s_;
  const TaskContext& ctx_;
  const BeneathDir& held_;
  // Where the tree's paths resolve from: held_'s root by full path
  // (by_full_path_), else held_ itself.
  const BeneathDir& walk_;
  const bool by_full_path_;
  const std::string& dir_;
  const std::vector<std::string>& tree_;
  char* const buf_;
  const uint32_t owner_;
  const MdtestItems layout_;
  uint64_t ops_ = 0;
  uint64_t bytes_ = 0;
  bool issued_any_ = false;  // the first timed operation was issued
  bool failed_ = false;      // an item op failed (the task's error is set)
  int64_t start_mono_ns_ = 0;
  std::vector<char> expected_;  // mdtest -X
  std::vector<int> dir_fds_;    // DirFd's, by tree directory; -1 unopened

 public:
  ~TaskRun() {
    for (int fd : dir_fds_) {
      if (fd >= 0) ::close(fd);
    }
  }
};

absl::Status MdtestWorkload::Validate() const {
  const v1::PhaseSpec& s = spec_;
  if (s.md_op() == v1::MD_OP_UNSPECIFIED) return SpecError(s, "mdtest phase without md_op");
  if (s.md_write_bytes() > kMaxMdtestFileBytes || s.md_read_bytes() > kMaxMdtestFileBytes) {
    return SpecError(s, absl::StrFormat("mdtest -w/-e of more than %u bytes", kMaxMdtestFileBytes));
  }
  if (s.md_branching() > 1 && s.md_depth() > 0 &&
      std::pow(double(s.md_branching()), double(s.md_depth())) > double(kMaxMdtestTreeDirs)) {
    return SpecError(s, absl::StrFormat("a tree of branching %u and depth %u has more than %u dirs",
                                        s.md_branching(), s.md_depth(), kMaxMdtestTreeDirs));
  }
  if (MdtestTreeDirs(s.md_branching(), s.md_depth()) > kMaxMdtestTreeDirs) {
    return SpecError(s, absl::StrFormat("a tree of more than %u directories", kMaxMdtestTreeDirs));
  }
  if (s.md_unique_dir() && s.md_depth() > 0 && s.md_neighbor_shift() % s.total_tasks() != 0) {
    return SpecError(s, "mdtest -u -N with a tree deeper than 0 (-z): mdtest 4.1 looks for the "
                        "items in directories that do not exist");
  }
  return absl::OkStatus();
}

absl::Status MdtestWorkload::Prepare(const BeneathDir& held,
                                     std::span<v1::TaskResult* const> results) {
  held_ = &held;
  const std::string& dir = held.path();
  dir_ = dir;
  trees_.clear();
  bufs_.clear();
  for (uint32_t i = 0; i < spec_.tasks(); ++i) {
    trees_.push_back(MdtestTaskTree(dir, spec_, spec_.first_rank() + i));
  }
  if (spec_.md_op() == v1::MD_TREE_CREATE) {
    // Stale trees from an earlier run would make the mkdirs fail.
    auto removed = RemoveFiles(held);
    if (!removed.ok()) return removed.status();
    if (spec_.first_rank() == 0) {
      if (absl::Status s = MakeTestDir(); !s.ok()) return s;
    }
  }
  const size_t bytes = std::max<uint64_t>({spec_.md_write_bytes(), spec_.md_read_bytes(), 8});
  ASSIGN_OR_RETURN(bufs_, PatternBuffersPerTask(spec_, bytes));
  struct statfs sf;
  const bool have_statfs = ::fstatfs(held.fd(), &sf) == 0;
  const FsKind* kind = have_statfs ? FsKindOf(static_cast<uint32_t>(sf.f_type)) : nullptr;
  by_full_path_ = kind != nullptr && kind->names_revalidated;
  if (spec_.first_rank() == 0 && !results.empty() && have_statfs) {
    // mdtest's "FS" line: rank 0 statfs(2)s the -d directory.
    v1::FsStats* fs = results[0]->mutable_dir_fs();
    fs->set_block_bytes(static_cast<uint64_t>(sf.f_bsize));
    fs->set_blocks(static_cast<uint64_t>(sf.f_blocks));
    fs->set_blocks_free(static_cast<uint64_t>(sf.f_bfree));
    fs->set_files(static_cast<uint64_t>(sf.f_files));
    fs->set_files_free(static_cast<uint64_t>(sf.f_ffree));
  }
  return absl::OkStatus();
}

absl::Status MdtestWorkload::MakeTestDir() const {
  const std::string testdir = MdtestTestDir(dir_, spec_.repetition());
  if (held_->Mkdir(testdir, 0775) != 0 && errno != EEXIST) {
    return absl::InternalError(absl::StrFormat("phase %s: cannot create directory %s: %s",
                                               spec_.phase_id(), testdir, BeneathErrorText(errno)));
  }
  return absl::OkStatus();
}

void MdtestWorkload::RunTask(const TaskContext& task) { TaskRun(*this, task).Run(); }

absl::StatusOr<uint32_t> MdtestWorkload::RemoveFiles(const BeneathDir& held) const {
  const std::string& dir = held.path();
  // Whole trees: each task's own, or the shared tree (rank 0's).
  std::set<std::string> roots;
  v1::PhaseSpec own = spec_;
  own.set_md_op(v1::MD_TREE_REMOVE);  // the trees the tasks own
  for (uint32_t i = 0; i < spec_.tasks(); ++i) {
    const uint32_t rank = spec_.first_rank() + i;
    if (MdtestOwnsTree(own, rank)) roots.insert(MdtestTaskTree(dir, own, rank).front());
  }
  uint32_t removed = 0;
  for (const std::string& r : roots) {
    auto n = held.RemoveTree(r);
    if (!n.ok()) return n.status();
    if (*n > 0) ++removed;
  }
  // The iteration's test-dir, once empty, by rank 0's agent as mdtest's
  // rank 0 (another agent's trees may still be in it).
  if (spec_.first_rank() == 0) held.Rmdir(MdtestTestDir(dir, spec_.repetition()));
  return removed;
}

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

std::unique_ptr<Workload> MakeMdtestWorkload(const v1::PhaseSpec& spec,
                                             const WorkloadOptions& /*options*/) {
  return std::make_unique<MdtestWorkload>(spec);
}

}  // namespace lockstep
