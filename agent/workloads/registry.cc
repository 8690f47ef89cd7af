// The kind → workload table. A new kind: its own workloads/KIND.{h,cc} with
// a factory, and one line (plus the #include) here.
#include <unistd.h>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "agent/workloads/backend.h"
#include "agent/workloads/checkpoint.h"
#include "agent/workloads/command.h"
#include "agent/workloads/datagen.h"
#include "agent/workloads/find.h"
#include "agent/workloads/mdtest.h"
#include "agent/workloads/net.h"
#include "agent/workloads/rewrite.h"
#include "agent/workloads/seeks.h"
#include "agent/workloads/small_files.h"
#include "agent/workloads/train.h"
#include "agent/workloads/transfer.h"
#include "agent/workloads/workload.h"
#include "common/checked_math.h"
#include "common/clock.h"
#include "common/limits.h"
#include "common/names.h"
#include "common/sizes.h"
#include "common/status_macros.h"

namespace lockstep {
namespace {

using WorkloadFactory = std::unique_ptr<Workload> (*)(const v1::PhaseSpec&, const WorkloadOptions&);

struct Registration {
  v1::PhaseKind kind;
  WorkloadFactory make;
  bool on_servers = false;  // server agents (role oss, mds) run it too
};

constexpr Registration kWorkloads[] = {
    {v1::WRITE, &MakeTransferWorkload},
    {v1::READ, &MakeTransferWorkload},
    {v1::REWRITE, &MakeRewriteWorkload},
    {v1::SMALL_FILES, &MakeSmallFilesWorkload},
    {v1::MDTEST, &MakeMdtestWorkload},
    {v1::FIND, &MakeFindWorkload},
    {v1::COMMAND, &MakeCommandWorkload},
    {v1::SEEKS, &MakeSeeksWorkload},
    {v1::TRAIN, &MakeTrainWorkload},
    {v1::DATAGEN, &MakeDatagenWorkload},
    {v1::CHECKPOINT, &MakeCheckpointWorkload},
    {v1::NET, &MakeNetWorkload, /*on_servers=*/true},
    {v1::BACKEND, &MakeBackendWorkload, /*on_servers=*/true},
};

}  // namespace

absl::StatusOr<std::unique_ptr<Workload>> MakeWorkload(const v1::PhaseSpec& spec,
                                                       const WorkloadOptions& options) {
  for (const Registration& r : kWorkloads) {
    if (r.kind == spec.kind()) return r.make(spec, options);
  }
  std::vector<std::string> known;
  for (const Registration& r : kWorkloads) known.push_back(PhaseKindName(r.kind));
  // A kind newer than this agent's proto has no name here: its number says it.
  const int number = static_cast<int>(spec.kind());
  const std::string name = PhaseKindName(spec.kind());
  const std::string kind = number != 0 && name == "unspecified"
                               ? absl::StrFormat("%d", number)
                               : absl::StrFormat("%d (%s)", number, name);
  return SpecError(spec, absl::StrFormat("kind %s has no workload on this agent; kind must be one "
                                         "of %s (is the controller newer than this agent? update "
                                         "lockstep-agent)",
                                         kind, absl::StrJoin(known, ", ")));
}

bool RunsOnServers(v1::PhaseKind kind) {
  for (const Registration& r : kWorkloads) {
    if (r.kind == kind) return r.on_servers;
  }
  return false;
}

std::vector<v1::PhaseKind> WorkloadKinds() {
  std::vector<v1::PhaseKind> out;
  for (const Registration& r : kWorkloads) out.push_back(r.kind);
  return out;
}

absl::Status SpecError(const v1::PhaseSpec& spec, const std::string& why) {
  return absl::InvalidArgumentError(absl::StrFormat("phase %s: %s", spec.phase_id(), why));
}

// What every kind shares; the workload checks its own fields (Validate).
absl::Status CheckCommonSpec(const v1::PhaseSpec& s) {
  if (s.file_name().empty() || s.file_name().find('/') != std::string::npos) {
    return SpecError(
        s, absl::StrFormat("file name \"%s\" must be a plain name without '/'", s.file_name()));
  }
  if (s.task_file_names_size() > 0 &&
      (!s.file_per_process() ||
       static_cast<uint32_t>(s.task_file_names_size()) != s.total_tasks())) {
    return SpecError(s, absl::StrFormat("%d task file names for %u tasks%s; give one per task",
                                        s.task_file_names_size(), s.total_tasks(),
                                        s.file_per_process() ? "" : " of a shared file"));
  }
  for (const std::string& name : s.task_file_names()) {
    if (name.empty() || name.find('/') != std::string::npos || name == "." || name == "..") {
      return SpecError(s, absl::StrFormat("task file name \"%s\" must be a plain name", name));
    }
  }
  if (s.delay_seconds() > kMaxDelaySeconds) {
    return SpecError(s, absl::StrFormat("delay_seconds %u is more than %u (a day)",
                                        s.delay_seconds(), kMaxDelaySeconds));
  }
  if (s.tasks() == 0) return SpecError(s, "no tasks for this agent");
  if (s.total_tasks() == 0 || s.first_rank() + s.tasks() > s.total_tasks()) {
    return SpecError(s, absl::StrFormat("ranks %u..%u do not fit in %u tasks", s.first_rank(),
                                        s.first_rank() + s.tasks() - 1, s.total_tasks()));
  }
  return absl::OkStatus();
}

// file_name as one path component: not empty, not . or .., no '/' or NUL
// (the controller refuses these at the plan check; "x/.." once reached
// Prepare's remove).
absl::Status CheckPlainFileName(const v1::PhaseSpec& s) {
  const std::string& n = s.file_name();
  if (n.empty() || n == "." || n == ".." || n.find('/') != std::string::npos ||
      n.find('\0') != std::string::npos) {
    return SpecError(s, absl::StrFormat("file name \"%s\" is not a plain file name (one path "
                                        "component, not . or .., no '/' or NUL)",
                                        absl::CEscape(n)));
  }
  return absl::OkStatus();
}

absl::Status CheckTransferLayout(const v1::PhaseSpec& s) {
  if (s.transfer_bytes() == 0) return SpecError(s, "transfer size is 0");
  if (s.transfer_bytes() % kTransferAlignBytes != 0) {
    return SpecError(s, absl::StrFormat("transfer size %u is not a multiple of %u bytes",
                                        s.transfer_bytes(), kTransferAlignBytes));
  }
  if (s.block_bytes() == 0) return SpecError(s, "block size is 0");
  if (s.block_bytes() % s.transfer_bytes() != 0) {
    return SpecError(s, absl::StrFormat("block size %u is not a multiple of transfer size %u",
                                        s.block_bytes(), s.transfer_bytes()));
  }
  if (s.segments() == 0) return SpecError(s, "segments is 0");
  // The controller checked these (controller/plan/limits.h); an agent
  // checks again what it would allocate and address.
  const std::optional<uint64_t> all =
      CheckedProduct({s.block_bytes(), s.segments(), std::max<uint64_t>(s.total_tasks(), 1)});
  if (!all || *all > kMaxFileOffsetBytes) {
    return SpecError(s, absl::StrFormat(
                            "block size %u x %u segments x %u tasks is more than %s: a file "
                            "offset cannot address it (64-bit); lower the block size, segments "
                            "or tasks",
                            s.block_bytes(), s.segments(), s.total_tasks(),
                            HumanBytes(kMaxFileOffsetBytes)));
  }
  const bool checks = s.verify() || s.verify_after_write();
  RETURN_IF_ERROR(CheckAgentBufferBytes(
      s, TransferBufferBytes(s),
      absl::StrFormat("%u tasks x transfer size %s%s", s.tasks(), HumanBytes(s.transfer_bytes()),
                      checks ? " x 2 (verification)" : ""),
      "tasks_per_agent or transfer_size"));
  if (absl::Status name = CheckPlainFileName(s); !name.ok()) return name;
  if (s.random_blocks() && s.kind() != v1::READ) {
    return SpecError(s, "random blocks (IOR -z -z) apply to read phases only (IOR 4.1's write "
                        "with -z -z divides by zero and dies of SIGFPE)");
  }
  if (s.direct() && s.transfer_bytes() % kDirectIoAlignBytes != 0) {
    return SpecError(s, absl::StrFormat(
                            "O_DIRECT needs a transfer size that is a multiple of %u, got %u",
                            kDirectIoAlignBytes, s.transfer_bytes()));
  }
  return absl::OkStatus();
}

uint64_t TransferBufferBytes(const v1::PhaseSpec& s) {
  const bool checks = s.verify() || s.verify_after_write();
  return SaturatingMul(SaturatingMul(s.transfer_bytes(), s.tasks()), checks ? 2 : 1);
}

absl::Status CheckAgentBufferBytes(const v1::PhaseSpec& spec, uint64_t buffer_bytes,
                                   const std::string& what, const std::string& keys) {
  const std::string need =
      absl::StrFormat("kind %s: %s need %s of buffers on this agent", PhaseKindName(spec.kind()),
                      what, HumanBytes(buffer_bytes));
  if (buffer_bytes > kMaxAgentBufferBytes) {
    return SpecError(spec, absl::StrFormat("%s, more than the %s an agent holds for one phase; "
                                           "lower %s",
                                           need, HumanBytes(kMaxAgentBufferBytes), keys));
  }
  const long pages = ::sysconf(_SC_PHYS_PAGES), page_bytes = ::sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page_bytes <= 0) return absl::OkStatus();
  const uint64_t memory_bytes =
      SaturatingMul(static_cast<uint64_t>(pages), static_cast<uint64_t>(page_bytes));
  if (buffer_bytes <= memory_bytes) return absl::OkStatus();
  return SpecError(spec, absl::StrFormat("%s, more than this host's memory (%s); lower %s", need,
                                         HumanBytes(memory_bytes), keys));
}

int64_t BeginTransferOp(TaskCounters* c, const WorkloadOptions& options, uint64_t offset) {
  const int64_t t0 = MonotonicNs();
  c->op_offset.store(offset, std::memory_order_relaxed);
  c->op_start_mono_ns.store(t0, std::memory_order_relaxed);
  if (options.test_delay_per_transfer > absl::ZeroDuration()) {
    absl::SleepFor(options.test_delay_per_transfer);  // test only: a slower device
  }
  return t0;
}

int64_t EndTransferOp(TaskCounters* c, int64_t start_mono_ns, LatencyHistogram* latency) {
  const int64_t t1 = MonotonicNs();
  c->op_start_mono_ns.store(0, std::memory_order_relaxed);
  latency->Record(static_cast<uint64_t>(t1 - start_mono_ns));
  return t1;
}

void SetWholeSpanTimers(int64_t start_unix_ns, int64_t stop_unix_ns, v1::TaskResult* r) {
  r->set_open_start_unix_ns(start_unix_ns);
  r->set_open_stop_unix_ns(start_unix_ns);
  r->set_rdwr_start_unix_ns(start_unix_ns);
  r->set_rdwr_stop_unix_ns(stop_unix_ns);
  r->set_close_start_unix_ns(stop_unix_ns);
  r->set_close_stop_unix_ns(stop_unix_ns);
}

}  // namespace lockstep
