#include "agent/workloads/command.h"

#include <unistd.h>

#include <algorithm>
#include <vector>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "agent/workloads/command_process.h"
#include "common/checked_math.h"
#include "common/clock.h"
#include "common/command_rules.h"
#include "common/limits.h"

namespace lockstep {
namespace {

std::string ThisHost() {
  char host[256] = {};
  return ::gethostname(host, sizeof(host) - 1) == 0 ? std::string(host) : std::string("this host");
}

class CommandWorkload : public Workload {
 public:
  CommandWorkload(const v1::PhaseSpec& spec, const WorkloadOptions& options)
      : spec_(spec),
        options_(options),
        argv_(spec.command_argv().begin(), spec.command_argv().end()),
        env_(spec.command_env().begin(), spec.command_env().end()),
        account_(ResolveCommandAccount(options.command_user)),
        timeout_ms_(spec.command_timeout_ms() == 0 ? kDefaultCommandTimeoutMs
                                                   : spec.command_timeout_ms()),
        tail_bytes_(spec.command_tail_bytes() == 0 ? kDefaultCommandTailBytes
                                                   : spec.command_tail_bytes()) {}

  absl::Status Validate() const override {
    if (spec_.tasks() != 1) {
      return SpecError(spec_, absl::StrFormat("a command phase runs one task per agent, not %u",
                                              spec_.tasks()));
    }
    if (absl::Status s = CheckCommandArgv(argv_); !s.ok()) return SpecError(spec_, std::string(s.message()));
    if (absl::Status s = CheckCommandEnv(env_); !s.ok()) {
      return SpecError(spec_, absl::StrFormat("command_env: %s", s.message()));
    }
    if (spec_.command_timeout_ms() > kMaxCommandTimeoutMs) {
      return SpecError(spec_, absl::StrFormat("command_timeout_ms %u is over the limit of %u",
                                              spec_.command_timeout_ms(), kMaxCommandTimeoutMs));
    }
    if (spec_.command_tail_bytes() > kMaxCommandTailBytes) {
      return SpecError(spec_, absl::StrFormat("command_tail_bytes %u is over the limit of %u",
                                              spec_.command_tail_bytes(), kMaxCommandTailBytes));
    }
    if (!account_.ok()) return account_.status();
    return CheckAllowed();
  }

  std::string TaskPath(const std::string& dir, uint32_t /*rank*/) const override { return dir; }

  absl::Status Prepare(const BeneathDir& dir, std::span<v1::TaskResult* const>) override {
    dir_ = dir.path();
    absl::Status s = PrepareCommandDir(dir, argv_[0], *account_);
    if (s.ok()) return s;
    return absl::Status(s.code(), absl::StrFormat("phase %s: %s", spec_.phase_id(), s.message()));
  }

  void RunTask(const TaskContext& task) override;

  absl::StatusOr<uint32_t> RemoveFiles(const BeneathDir& /*dir*/) const override { return 0u; }
  bool CreatesFiles() const override { return false; }
  bool PreparesMissingDir() const override { return true; }
  // Per task the stdout and stderr tails, each held up to 2 x tail_bytes +
  // 128 KiB before it is trimmed (common/process_runner.cc, Tail).
  uint64_t AgentBufferBytes() const override {
    const uint64_t tail = SaturatingAdd(SaturatingMul(2, tail_bytes_), 128 * 1024);
    return SaturatingMul(SaturatingMul(spec_.tasks(), 2), tail);
  }
  std::string AgentBufferKeys() const override { return "tail_size"; }

 private:
  // argv[0]: an absolute path listed in allow_commands, exactly.
  absl::Status CheckAllowed() const {
    const std::string& program = argv_[0];
    const std::vector<std::string>& allowed = options_.allow_commands;
    if (program[0] != '/') {
      return SpecError(spec_, absl::StrFormat(
                                  "argv[0] \"%s\" is not an absolute path; the controller "
                                  "resolves bare names against allow_commands (update lockstep)",
                                  program));
    }
    if (std::find(allowed.begin(), allowed.end(), program) != allowed.end()) {
      return absl::OkStatus();
    }
    return absl::PermissionDeniedError(absl::StrFormat(
        "phase %s: agent on %s does not allow %s (allow_commands: [%s]); add \"%s\" to "
        "allow_commands in its agent config (lockstep-agent --allow_command %s)",
        spec_.phase_id(), ThisHost(), program, absl::StrJoin(allowed, ", "), program, program));
  }

  ProcessLaunch Launch(uint32_t rank) const {
    ProcessLaunch l;
    l.program = argv_[0];
    l.argv = ExpandCommandArgv(argv_, rank);
    l.env = CommandEnvironment(*account_, env_);
    l.dir = dir_;
    l.account = *account_;
    l.timeout = absl::Milliseconds(timeout_ms_);
    l.tail_bytes = tail_bytes_;
    return l;
  }

  const v1::PhaseSpec spec_;
  const WorkloadOptions options_;
  const std::vector<std::string> argv_;
  const std::vector<std::string> env_;
  const absl::StatusOr<CommandAccount> account_;
  const uint32_t timeout_ms_;
  const uint32_t tail_bytes_;
  std::string dir_;  // from Prepare
};

void CommandWorkload::RunTask(const TaskContext& task) {
  const ProcessLaunch launch = Launch(task.rank);
  task.FirstOpIssuing();
  const int64_t start_unix_ns = RealtimeNs();
  absl::StatusOr<v1::CommandResult> run = RunProcess(launch, task.abort);
  const int64_t stop_unix_ns = RealtimeNs();
  task.FirstOpReturned();
  v1::TaskResult* r = task.result;
  r->set_first_io_unix_ns(start_unix_ns);
  SetWholeSpanTimers(start_unix_ns, stop_unix_ns, r);
  const std::string program = launch.program;
  if (!run.ok()) {
    task.Fail({.message = absl::StrFormat("command %s on %s did not start: %s", program,
                                          ThisHost(), run.status().message())});
    return;
  }
  v1::CommandResult* c = r->mutable_command();
  *c = std::move(*run);
  for (const std::string& a : launch.argv) c->add_argv(a);
  c->set_user(account_->name);
  r->set_ops(1);
  task.latency->Record(static_cast<uint64_t>(std::max<int64_t>(c->real_ns(), 0)));
  task.counters->ops.store(1, std::memory_order_relaxed);
  // An abort is the runner's to report ("task N stopped: ...").
  if (!CommandFailed(*c) || task.Aborted()) return;
  std::string msg = absl::StrFormat("command %s on %s as %s: %s", program, ThisHost(),
                                    account_->name, CommandEnding(*c, timeout_ms_));
  const std::string tail = LastLines(c->stderr_tail(), 3);
  msg += tail.empty() ? "; stderr was empty" : absl::StrFormat("; stderr ends: %s", tail);
  task.Fail({.message = msg});
}

}  // namespace

std::unique_ptr<Workload> MakeCommandWorkload(const v1::PhaseSpec& spec,
                                              const WorkloadOptions& options) {
  return std::make_unique<CommandWorkload>(spec, options);
}

}  // namespace lockstep
