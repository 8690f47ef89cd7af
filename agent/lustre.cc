#include "agent/lustre.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <thread>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/clock.h"
#include "common/files.h"
#include "common/log.h"
#include "common/status_macros.h"

extern char** environ;

namespace lockstep {
namespace {

absl::string_view AV(std::string_view s) { return absl::string_view(s.data(), s.size()); }

// Closes an fd on scope exit.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() { Reset(); }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  void Reset(int fd = -1) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
  }

 private:
  int fd_ = -1;
};

std::string FirstLine(const std::string& text) {
  absl::string_view t = absl::StripAsciiWhitespace(text);
  size_t nl = t.find('\n');
  return std::string(nl == absl::string_view::npos ? t : t.substr(0, nl));
}

// Pid of a child we gave up on (D state after SIGKILL): reap it in the
// background so it does not stay a zombie.
void ReapLater(pid_t pid) {
  std::thread([pid] {
    int st;
    while (::waitpid(pid, &st, 0) < 0 && errno == EINTR) {
    }
  }).detach();
}

int PidfdOpen(pid_t pid) {
#ifdef SYS_pidfd_open
  return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
#else
  (void)pid;
  errno = ENOSYS;
  return -1;
#endif
}

// Waits until `pidfd` is readable (the child exited) or `deadline_mono_ns`.
bool WaitPidfd(int pidfd, int64_t deadline_mono_ns) {
  for (;;) {
    int64_t left_ms = (deadline_mono_ns - MonotonicNs()) / 1000000;
    if (left_ms < 0) left_ms = 0;
    struct pollfd p = {pidfd, POLLIN, 0};
    int r = ::poll(&p, 1, static_cast<int>(left_ms));
    if (r > 0) return true;
    if (r == 0) return false;
    if (errno != EINTR) return false;
  }
}

}  // namespace

std::string FormatCommand(const std::vector<std::string>& argv) {
  std::vector<std::string> parts;
  for (const std::string& a : argv) {
    bool plain = !a.empty();
    for (char c : a) {
      if (!(absl::ascii_isalnum(static_cast<unsigned char>(c)) ||
            std::strchr("-_./=,:*@%+", c) != nullptr)) {
        plain = false;
      }
    }
    if (plain) {
      parts.push_back(a);
    } else {
      std::string q = "'";
      for (char c : a) q += (c == '\'') ? std::string("'\\''") : std::string(1, c);
      parts.push_back(q + "'");
    }
  }
  return absl::StrJoin(parts, " ");
}

namespace {

// A started tool: its pid, the read ends of its stdout and stderr, and a
// pidfd (-1 on kernels without pidfd_open) to wait for its exit in poll(2).
struct Child {
  pid_t pid = -1;
  Fd out;
  Fd err;
  Fd pidfd;
};

// What the tool did by the deadline.
struct Outcome {
  bool exited = false;
  bool timed_out = false;
  bool status_lost = false;  // SIGCHLD ignored: the kernel reaped it
  int status = 0;            // waitpid(2)'s, when exited
};

// posix_spawnp of `argv` with stdin from /dev/null, stdout and stderr to
// pipes, nothing else inherited, default signal handling, own process group.
absl::Status Spawn(const std::vector<std::string>& argv, const std::string& cmd, Child* child) {
  int out_pipe[2], err_pipe[2];
  if (::pipe2(out_pipe, O_CLOEXEC) != 0) {
    return absl::InternalError(absl::StrFormat("%s: pipe: %s", cmd, std::strerror(errno)));
  }
  child->out.Reset(out_pipe[0]);
  Fd out_w(out_pipe[1]);
  if (::pipe2(err_pipe, O_CLOEXEC) != 0) {
    return absl::InternalError(absl::StrFormat("%s: pipe: %s", cmd, std::strerror(errno)));
  }
  child->err.Reset(err_pipe[0]);
  Fd err_w(err_pipe[1]);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out_w.get(), 1);
  posix_spawn_file_actions_adddup2(&actions, err_w.get(), 2);
  // Nothing else of the agent's (gRPC sockets, data files) leaks to the tool.
  posix_spawn_file_actions_addclosefrom_np(&actions, 3);

  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t empty, defaults;
  sigemptyset(&empty);
  sigemptyset(&defaults);
  for (int sig : {SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGCHLD, SIGQUIT}) sigaddset(&defaults, sig);
  posix_spawnattr_setsigmask(&attr, &empty);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setpgroup(&attr, 0);  // own group: a timeout kills its children too
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK |
                                      POSIX_SPAWN_SETSIGDEF);

  std::vector<char*> cargv;
  cargv.reserve(argv.size() + 1);
  for (const std::string& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);

  int rc = ::posix_spawnp(&child->pid, argv[0].c_str(), &actions, &attr, cargv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (rc == ENOENT) {
    const char* path = std::getenv("PATH");
    return absl::NotFoundError(absl::StrFormat(
        "%s: \"%s\" is not on PATH (%s); install it or put its directory on PATH", cmd, argv[0],
        path ? path : "PATH unset"));
  }
  if (rc == EACCES) {
    return absl::PermissionDeniedError(absl::StrFormat(
        "%s: \"%s\" is not executable (%s); fix its permissions", cmd, argv[0],
        std::strerror(rc)));
  }
  if (rc != 0) {
    return absl::InternalError(absl::StrFormat("%s: cannot start: %s", cmd, std::strerror(rc)));
  }
  child->pidfd.Reset(PidfdOpen(child->pid));
  return absl::OkStatus();  // the write ends close here: EOF once the tool exits
}

// Reads one chunk of `fd` into `dst` (up to kMaxCommandOutputBytes); clears
// `open` at the end of the pipe.
void Drain(int fd, bool& open, std::string& dst) {
  char buf[65536];
  ssize_t got = ::read(fd, buf, sizeof(buf));
  if (got > 0) {
    size_t room = kMaxCommandOutputBytes - std::min(dst.size(), kMaxCommandOutputBytes);
    dst.append(buf, std::min(static_cast<size_t>(got), room));
  } else if (got == 0 || (errno != EINTR && errno != EAGAIN)) {
    open = false;
  }
}

// Collects the tool's output until it exited and closed both pipes, or the
// deadline.
Outcome Collect(Child& child, int64_t deadline_mono_ns, CommandOutput* out) {
  Outcome o;
  bool out_open = true, err_open = true;
  while (out_open || err_open || !o.exited) {
    if (!o.exited && child.pidfd.get() < 0 && !out_open && !err_open) break;  // waitpid later
    const int64_t now_mono_ns = MonotonicNs();
    if (now_mono_ns >= deadline_mono_ns) {
      o.timed_out = true;
      break;
    }
    struct pollfd fds[3];
    int n = 0;
    int out_i = -1, err_i = -1, pid_i = -1;
    if (out_open) fds[out_i = n++] = {child.out.get(), POLLIN, 0};
    if (err_open) fds[err_i = n++] = {child.err.get(), POLLIN, 0};
    if (!o.exited && child.pidfd.get() >= 0) fds[pid_i = n++] = {child.pidfd.get(), POLLIN, 0};
    const int wait_ms = static_cast<int>((deadline_mono_ns - now_mono_ns + 999999) / 1000000);
    if (::poll(fds, n, wait_ms) < 0) {
      if (errno == EINTR) continue;
      o.timed_out = true;  // cannot wait: treat as a failure and kill
      break;
    }
    if (out_i >= 0 && fds[out_i].revents != 0) Drain(child.out.get(), out_open, out->stdout_text);
    if (err_i >= 0 && fds[err_i].revents != 0) Drain(child.err.get(), err_open, out->stderr_text);
    if (pid_i >= 0 && fds[pid_i].revents != 0) {
      pid_t w = ::waitpid(child.pid, &o.status, WNOHANG);
      if (w == child.pid) {
        o.exited = true;
      } else if (w < 0 && errno == ECHILD) {
        o.exited = true;  // SIGCHLD is ignored: the kernel reaped it
        o.status_lost = true;
      }
    }
  }
  return o;
}

// Kills the tool's process group after a timeout; waits up to 1 s for the
// tool itself. Returns whether it was reaped.
bool KillTimedOut(Child& child, Outcome& o) {
  ::kill(-child.pid, SIGKILL);  // the whole group: what the tool started dies too
  if (o.exited) return true;    // the tool may be gone while a child kept its pipes
  ::kill(child.pid, SIGKILL);
  bool reaped = false;
  if (child.pidfd.get() < 0) {
    reaped = ::waitpid(child.pid, &o.status, 0) == child.pid;
  } else if (WaitPidfd(child.pidfd.get(), MonotonicNs() + 1000000000LL)) {
    // (A tool blocked in the kernel on a dead server may not die at once.)
    reaped = ::waitpid(child.pid, &o.status, 0) == child.pid;
  }
  if (!reaped) ReapLater(child.pid);
  return reaped;
}

// The error for a tool that did not exit 0, or OK.
absl::Status ExitStatus(const std::string& cmd, const Outcome& o, CommandOutput* out) {
  if (o.status_lost) {
    return absl::InternalError(absl::StrFormat(
        "%s: exit status lost (waitpid found no child); the agent must not ignore SIGCHLD", cmd));
  }
  if (WIFSIGNALED(o.status)) {
    out->exit_code = 128 + WTERMSIG(o.status);
    return absl::InternalError(absl::StrFormat("%s: killed by signal %d%s%s", cmd,
                                               WTERMSIG(o.status),
                                               out->stderr_text.empty() ? "" : "; stderr: ",
                                               FirstLine(out->stderr_text)));
  }
  out->exit_code = WEXITSTATUS(o.status);
  if (out->exit_code != 0) {
    return absl::InternalError(absl::StrFormat(
        "%s: exit code %d; stderr: %s", cmd, out->exit_code,
        out->stderr_text.empty() ? std::string("(empty)") : FirstLine(out->stderr_text)));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<CommandOutput> RunCommand(const std::vector<std::string>& argv, int timeout_ms) {
  if (argv.empty() || argv[0].empty()) {
    return absl::InvalidArgumentError("RunCommand: empty argument vector");
  }
  if (timeout_ms <= 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: timeout_ms %d must be positive", FormatCommand(argv), timeout_ms));
  }
  const std::string cmd = FormatCommand(argv);
  const int64_t start_mono_ns = MonotonicNs();
  const int64_t deadline_mono_ns = start_mono_ns + static_cast<int64_t>(timeout_ms) * 1000000;
  Child child;
  if (absl::Status s = Spawn(argv, cmd, &child); !s.ok()) return s;
  CommandOutput out;
  Outcome o = Collect(child, deadline_mono_ns, &out);
  if (o.timed_out) {
    const bool reaped = KillTimedOut(child, o);
    return absl::DeadlineExceededError(absl::StrFormat(
        "%s: still running after %d ms; killed (pid %d%s)%s%s", cmd, timeout_ms, child.pid,
        reaped ? "" : ", not yet exited: stuck in the kernel?",
        out.stderr_text.empty() ? "" : "; stderr: ", FirstLine(out.stderr_text)));
  }
  if (!o.exited) {
    pid_t w;
    while ((w = ::waitpid(child.pid, &o.status, 0)) < 0 && errno == EINTR) {
    }
    if (w < 0) o.status_lost = true;
  }
  out.run_duration_ns = MonotonicNs() - start_mono_ns;
  if (absl::Status s = ExitStatus(cmd, o, &out); !s.ok()) return s;
  return out;
}

// ---- File system type -------------------------------------------------------

namespace {

std::string FsName(uint64_t magic) {
  switch (magic) {
    case kLustreSuperMagic: return "lustre";
    case 0xEF53: return "ext4";
    case 0x58465342: return "xfs";
    case 0x01021994: return "tmpfs";
    case 0x9123683E: return "btrfs";
    case 0x6969: return "nfs";
    case 0x794C7630: return "overlayfs";
    case 0x2FC12FC1: return "zfs";
    case 0x47504653: return "gpfs";
    case 0xFF534D42: return "cifs";
    case 0x65735546: return "fuse";
    case 0x9FA0: return "proc";
    case 0x62656572: return "sysfs";
    default: return absl::StrFormat("0x%x", magic);
  }
}

}  // namespace

absl::StatusOr<FsType> FsTypeOf(const std::string& path) {
  struct statfs st;
  if (::statfs(path.c_str(), &st) != 0) {
    int err = errno;
    std::string msg = absl::StrFormat("statfs %s: %s", path, std::strerror(err));
    if (err == ENOENT) return absl::NotFoundError(msg);
    if (err == EACCES || err == EPERM) return absl::PermissionDeniedError(msg);
    return absl::InternalError(msg);
  }
  FsType t;
  t.magic = static_cast<uint64_t>(static_cast<uint32_t>(st.f_type));
  t.name = FsName(t.magic);
  return t;
}

absl::StatusOr<bool> IsLustre(const std::string& path) {
  ASSIGN_OR_RETURN(FsType t, FsTypeOf(path));
  return t.magic == kLustreSuperMagic;
}

// ---- Parsers ----------------------------------------------------------------

StripeInfo ParseGetStripe(std::string_view std_text) {
  absl::string_view text = AV(std_text);
  StripeInfo info;
  info.raw = std::string(text);
  if (absl::StrContains(text, "lcm_layout_gen") || absl::StrContains(text, "lcm_entry_count")) {
    return info;  // composite layout: raw only
  }
  std::vector<absl::string_view> tok =
      absl::StrSplit(text, absl::ByAnyChar(" \t\n"), absl::SkipEmpty());
  for (size_t i = 0; i + 1 < tok.size(); ++i) {
    if (!absl::EndsWith(tok[i], ":")) continue;
    absl::string_view key = absl::StripPrefix(absl::StripSuffix(tok[i], ":"), "lmm_");
    absl::string_view val = tok[i + 1];
    int64_t v;
    uint64_t u;
    if (key == "stripe_count" && !info.stripe_count && absl::SimpleAtoi(val, &v)) {
      info.stripe_count = v;
    } else if (key == "stripe_size" && !info.stripe_size_bytes && absl::SimpleAtoi(val, &u)) {
      info.stripe_size_bytes = u;
    } else if (key == "stripe_offset" && !info.stripe_index && absl::SimpleAtoi(val, &v)) {
      info.stripe_index = v;
    } else if (key == "pool" && info.pool.empty() && !absl::EndsWith(val, ":")) {
      info.pool = std::string(val);
    }
  }
  return info;
}

namespace {

// "osc.lustre-OST0000-osc-ffff8803.checksums" before '=': no spaces, a dot.
bool LooksLikeParamName(absl::string_view s) {
  if (s.empty() || s.find('.') == absl::string_view::npos) return false;
  for (char c : s) {
    if (absl::ascii_isspace(static_cast<unsigned char>(c)) || c == ':') return false;
  }
  return true;
}

}  // namespace

std::vector<ParamValue> ParseParamLines(std::string_view std_text) {
  std::vector<ParamValue> out;
  for (absl::string_view line : absl::StrSplit(AV(std_text), '\n')) {
    size_t eq = line.find('=');
    if (eq != absl::string_view::npos && LooksLikeParamName(line.substr(0, eq))) {
      out.push_back({std::string(line.substr(0, eq)), std::string(line.substr(eq + 1))});
    } else if (!out.empty() && !line.empty()) {
      ParamValue& last = out.back();
      if (!last.value.empty()) last.value += '\n';
      last.value += std::string(line);
    }
  }
  return out;
}

absl::StatusOr<std::string> ParseLustreVersion(std::string_view std_text) {
  absl::string_view text = absl::StripAsciiWhitespace(AV(std_text));
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    line = absl::StripAsciiWhitespace(line);
    if (absl::ConsumePrefix(&line, "lustre:")) {
      return std::string(absl::StripAsciiWhitespace(line));
    }
  }
  absl::string_view first = text.substr(0, text.find('\n'));
  first = absl::StripAsciiWhitespace(first);
  if (first.empty() || !absl::ascii_isdigit(static_cast<unsigned char>(first[0])) ||
      first.find(':') != absl::string_view::npos) {
    return absl::InvalidArgumentError(
        absl::StrFormat("cannot find a Lustre version in \"%s\"", std::string(text)));
  }
  return std::string(first);
}

// ---- lfs / lctl -------------------------------------------------------------

LustreTools::LustreTools(LustreToolsOptions options) : options_(std::move(options)) {}

namespace {

absl::Status CheckOnLustre(const std::string& path, const char* what) {
  ASSIGN_OR_RETURN(FsType t, FsTypeOf(path));
  if (t.magic != kLustreSuperMagic) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "cannot %s %s: it is on %s (statfs f_type 0x%x), not Lustre (0x%x); point the phase "
        "dir at a Lustre mount or drop the stripe settings",
        what, path, t.name, t.magic, kLustreSuperMagic));
  }
  return absl::OkStatus();
}

absl::Status CheckParamName(const std::string& name) {
  if (name.empty() || name[0] == '-' || name.find('=') != std::string::npos ||
      std::any_of(name.begin(), name.end(),
                  [](char c) { return absl::ascii_isspace(static_cast<unsigned char>(c)); })) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "Lustre parameter name \"%s\" is invalid: it must be non-empty, not start with '-', "
        "and hold no '=' or whitespace (e.g. \"osc.*.checksums\")",
        name));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status LustreTools::SetStripe(const std::string& dir, const StripeSettings& s) const {
  if (dir.empty() || dir[0] != '/') {
    return absl::InvalidArgumentError(absl::StrFormat(
        "stripe directory \"%s\" is not an absolute path; resolve it first", dir));
  }
  if (s.stripe_count < -1) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "stripe_count %d for %s is invalid: use -1 (all OSTs), 0 (default) or a count",
        s.stripe_count, dir));
  }
  if (s.stripe_size_bytes % 65536 != 0 || s.stripe_size_bytes >= (4ULL << 30)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "stripe_size_bytes %d for %s is invalid: Lustre needs a multiple of 64 KiB (65536) "
        "below 4 GiB, or 0 for the default",
        s.stripe_size_bytes, dir));
  }
  if (s.stripe_index < -1) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "stripe_index %d for %s is invalid: use -1 (any OST) or an OST index", s.stripe_index,
        dir));
  }
  if (!s.pool.empty() &&
      (s.pool.size() > 15 || !std::all_of(s.pool.begin(), s.pool.end(), [](char c) {
        return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' ||
               c == '.';
      }) || s.pool[0] == '-')) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "OST pool name \"%s\" for %s is invalid: at most 15 letters, digits, '_', '-' or '.', "
        "not starting with '-'",
        s.pool, dir));
  }
  if (options_.require_lustre) {
    struct stat st;
    if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
      return absl::NotFoundError(absl::StrFormat(
          "stripe directory %s does not exist or is not a directory; create it first", dir));
    }
    RETURN_IF_ERROR(CheckOnLustre(dir, "set striping on"));
  }
  std::vector<std::string> argv = {options_.lfs, "setstripe",
                                   "-c", absl::StrCat(s.stripe_count),
                                   "-S", absl::StrCat(s.stripe_size_bytes)};
  if (s.stripe_index >= 0) {
    argv.push_back("-i");
    argv.push_back(absl::StrCat(s.stripe_index));
  }
  if (!s.pool.empty()) {
    argv.push_back("-p");
    argv.push_back(s.pool);
  }
  argv.push_back(dir);
  return RunCommand(argv, options_.timeout_ms).status();
}

absl::StatusOr<StripeInfo> LustreTools::GetStripe(const std::string& path) const {
  if (path.empty() || path[0] != '/') {
    return absl::InvalidArgumentError(absl::StrFormat(
        "getstripe path \"%s\" is not an absolute path; resolve it first", path));
  }
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    return absl::NotFoundError(
        absl::StrFormat("getstripe %s: %s", path, std::strerror(errno)));
  }
  if (options_.require_lustre) RETURN_IF_ERROR(CheckOnLustre(path, "get striping of"));
  std::vector<std::string> argv = {options_.lfs, "getstripe"};
  if (S_ISDIR(st.st_mode)) argv.push_back("-d");
  argv.push_back(path);
  ASSIGN_OR_RETURN(CommandOutput out, RunCommand(argv, options_.timeout_ms));
  return ParseGetStripe(out.stdout_text);
}

absl::StatusOr<std::string> LustreTools::Version() const {
  std::vector<std::string> tried;
  for (const std::string& file : options_.version_files) {
    absl::StatusOr<std::string> text = ReadFileToString(file);
    if (!text.ok()) {
      tried.push_back(std::string(text.status().message()));
      continue;
    }
    absl::StatusOr<std::string> v = ParseLustreVersion(*text);
    if (v.ok()) return v;
    tried.push_back(absl::StrFormat("%s: %s", file, v.status().message()));
  }
  absl::StatusOr<CommandOutput> out =
      RunCommand({options_.lctl, "get_param", "-n", "version"}, options_.timeout_ms);
  if (out.ok()) {
    absl::StatusOr<std::string> v = ParseLustreVersion(out->stdout_text);
    if (v.ok()) return v;
    tried.push_back(absl::StrFormat("lctl get_param -n version: %s", v.status().message()));
  } else {
    tried.push_back(std::string(out.status().message()));
  }
  return absl::NotFoundError(absl::StrFormat("no Lustre version found (not a Lustre node?): %s",
                                             absl::StrJoin(tried, "; ")));
}

absl::StatusOr<std::string> LustreTools::GetParam(const std::string& name) const {
  RETURN_IF_ERROR(CheckParamName(name));
  ASSIGN_OR_RETURN(CommandOutput out,
                   RunCommand({options_.lctl, "get_param", "-n", name}, options_.timeout_ms));
  std::string v = std::move(out.stdout_text);
  while (!v.empty() && v.back() == '\n') v.pop_back();
  return v;
}

absl::StatusOr<std::vector<ParamValue>> LustreTools::GetParams(const std::string& pattern) const {
  RETURN_IF_ERROR(CheckParamName(pattern));
  ASSIGN_OR_RETURN(CommandOutput out,
                   RunCommand({options_.lctl, "get_param", pattern}, options_.timeout_ms));
  std::vector<ParamValue> values = ParseParamLines(out.stdout_text);
  if (values.empty()) {
    return absl::NotFoundError(absl::StrFormat(
        "lctl get_param %s matched no parameter (output: \"%s\"); check the name with "
        "`lctl list_param`",
        pattern, FirstLine(out.stdout_text)));
  }
  return values;
}

absl::Status LustreTools::SetParam(const std::string& name, const std::string& value) const {
  return SetParams({{name, value}});
}

absl::Status LustreTools::SetParams(const std::vector<ParamValue>& values) const {
  std::vector<std::string> argv = {options_.lctl, "set_param"};
  for (const ParamValue& p : values) {
    RETURN_IF_ERROR(CheckParamName(p.name));
    if (p.value.find('\n') != std::string::npos) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "value for Lustre parameter %s holds a newline; lctl set_param takes one line",
          p.name));
    }
    argv.push_back(absl::StrCat(p.name, "=", p.value));
  }
  if (values.empty()) return absl::OkStatus();
  return RunCommand(argv, options_.timeout_ms).status();
}

// ---- ScopedParam --------------------------------------------------------------

absl::StatusOr<std::unique_ptr<ScopedParam>> ScopedParam::Set(const LustreTools& tools,
                                                              const std::string& name,
                                                              const std::string& value) {
  if (value == "clear") {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s=clear is an action, not a setting: it cannot be restored (restoring the read-back "
        "value of e.g. lru_size would pin it); use SetParam",
        name));
  }
  ASSIGN_OR_RETURN(std::vector<ParamValue> saved, tools.GetParams(name));
  for (const ParamValue& p : saved) {
    if (p.value.find('\n') != std::string::npos) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s has a multi-line value (a stats file?), which set_param cannot restore; "
          "ScopedParam is for single-value settings",
          p.name));
    }
  }
  RETURN_IF_ERROR(tools.SetParam(name, value));
  return std::unique_ptr<ScopedParam>(new ScopedParam(tools, std::move(saved)));
}

absl::Status ScopedParam::Restore() {
  if (restored_) return absl::OkStatus();
  restored_ = true;
  absl::Status s = tools_.SetParams(saved_);
  if (!s.ok()) {
    std::vector<std::string> pairs;
    for (const ParamValue& p : saved_) pairs.push_back(absl::StrCat(p.name, "=", p.value));
    return Annotate(s, absl::StrFormat("restoring %s", absl::StrJoin(pairs, " ")));
  }
  return s;
}

ScopedParam::~ScopedParam() {
  absl::Status s = Restore();
  if (!s.ok()) LogError("Lustre parameter not restored: %s", std::string(s.message()));
}

}  // namespace lockstep
