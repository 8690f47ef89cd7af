#include "agent/phase_preparer.h"

#include <sys/stat.h>
#include <sys/statvfs.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/strings/str_format.h"
#include "agent/workloads/workload.h"
#include "common/errors.h"
#include "common/sizes.h"
#include "common/status_macros.h"

namespace lockstep {
namespace {

// `resolved` (canonical, below a root) opened through its root's
// descriptor with no symlink followed (agent/beneath.h); a missing one held
// by its parent when `may_be_missing`. A symlink swapped in since the
// resolution is refused (PATH_REFUSED).
absl::StatusOr<std::shared_ptr<const BeneathDir>> HoldBeneathRoot(const AllowedRoots& roots,
                                                                  const std::string& resolved,
                                                                  bool may_be_missing) {
  const std::string root = roots.RootOf(resolved);
  ASSIGN_OR_RETURN(std::shared_ptr<const BeneathDir> held_root, BeneathDir::OpenRoot(root));
  auto held = may_be_missing ? held_root->OpenDirToCreate(resolved) : held_root->OpenDir(resolved);
  if (held.ok() || absl::IsNotFound(held.status())) return held;
  return WithKind(held.status(), v1::PATH_REFUSED);
}

// The phase directory within the roots, held open; creates a missing
// mdtest -d.
absl::StatusOr<std::shared_ptr<const BeneathDir>> ResolvePhaseDir(const AllowedRoots& roots,
                                                                  const v1::PhaseSpec& spec,
                                                                  const Workload& workload,
                                                                  std::shared_ptr<const BeneathDir>* created_dir) {
  if (!workload.UsesDir()) {  // NET: no file; the first root stands in
    if (roots.roots().empty()) {
      return absl::FailedPreconditionError(absl::StrFormat(
          "phase %s: this agent has no root to hold; give it one (roots in its config)",
          spec.phase_id()));
    }
    return HoldBeneathRoot(roots, roots.roots()[0], /*may_be_missing=*/false);
  }
  auto dir = roots.Resolve(spec.dir());
  if (dir.ok()) return HoldBeneathRoot(roots, *dir, /*may_be_missing=*/false);
  // A command phase's Prepare makes its own directory (owned by command_user).
  const bool missing = absl::IsNotFound(dir.status());
  if (!missing || !(workload.PreparesMissingDir() || workload.CreatesMissingDir())) {
    return dir.status();
  }
  ASSIGN_OR_RETURN(const std::string planned, roots.ResolveNew(spec.dir()));
  ASSIGN_OR_RETURN(std::shared_ptr<const BeneathDir> held,
                   HoldBeneathRoot(roots, planned, /*may_be_missing=*/true));
  if (workload.PreparesMissingDir() || spec.first_rank() != 0) return held;
  // mdtest creates its -d directory when it is missing (one level, as
  // mkdir(2)); rank 0's agent does, in Prepare, before any task starts.
  if (held->Mkdir(planned, 0775) == 0) {
    *created_dir = held;
  } else if (errno != EEXIST) {
    return absl::FailedPreconditionError(
        absl::StrFormat("phase %s: cannot create the mdtest directory %s: %s; create it or fix -d",
                        spec.phase_id(), planned, BeneathErrorText(errno)));
  }
  return HoldBeneathRoot(roots, planned, /*may_be_missing=*/false);
}

// The agent's per-phase byte limit and the free space (NO_SPACE).
absl::Status CheckWriteSpace(const PhasePreparerOptions& options, const v1::PhaseSpec& spec,
                             const Workload& workload, const BeneathDir& held) {
  const std::string& dir = held.path();
  // This agent's share; on a shared file system the others' shares come on top.
  const uint64_t share = workload.AgentWriteBytes();
  if (share == 0) return absl::OkStatus();
  if (options.max_bytes_per_phase > 0 && share > options.max_bytes_per_phase) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "phase %s would write %s on this agent; its limit is %s (limits.max_bytes_per_phase "
        "in the agent config)",
        spec.phase_id(), HumanBytes(share), HumanBytes(options.max_bytes_per_phase)));
  }
  struct statvfs sv;
  if (spec.ignore_free_space() || ::fstatvfs(held.fd(), &sv) != 0) return absl::OkStatus();
  const uint64_t free_bytes = static_cast<uint64_t>(sv.f_bavail) * sv.f_frsize;
  if (share <= free_bytes) return absl::OkStatus();
  return WithKind(absl::ResourceExhaustedError(absl::StrFormat(
                      "phase %s needs %s in %s on this agent and only %s is free; shrink "
                      "block_size or tasks, free space, or run with --force",
                      spec.phase_id(), HumanBytes(share), dir, HumanBytes(free_bytes))),
                  v1::NO_SPACE);
}

// The directory's file system: layout and client checksums, reported in
// `phase->reply`; the checksums' scope kept in `phase->checksums`.
absl::Status ApplyFsSettings(const FileSystemContext& fs, const v1::PhaseSpec& spec,
                             const std::string& dir, PreparedPhase* phase) {
  auto found = FileSystemFor(dir, fs);
  const bool asks = spec.set_stripe() || spec.checksums() != v1::CHECKSUMS_UNCHANGED;
  // A command phase's directory is made by its own Prepare, later: with
  // nothing to set, there is nothing to ask its file system yet.
  if (!found.ok() && absl::IsNotFound(found.status()) && !asks) return absl::OkStatus();
  if (!found.ok()) return found.status();
  std::unique_ptr<FileSystem> file_system = std::move(*found);
  v1::PrepareReply* reply = &phase->reply;
  reply->set_fs_name(file_system->Name());
  reply->set_fs_version(file_system->Version());
  // Everything refused before anything changes.
  RETURN_IF_ERROR(file_system->CheckSettings(spec, dir));
  if (spec.set_stripe()) {
    ASSIGN_OR_RETURN(v1::FsLayout layout, file_system->SetLayout(dir, phase->held->HeldPath(), spec));
    reply->set_stripe_layout(layout.raw());
    *reply->mutable_layout() = std::move(layout);
  }
  if (spec.checksums() != v1::CHECKSUMS_UNCHANGED) {
    ASSIGN_OR_RETURN(phase->checksums,
                     file_system->SetChecksums(spec.checksums() == v1::CHECKSUMS_ON));
    reply->set_checksums_before(phase->checksums->Before());
  }
  return absl::OkStatus();
}

// What the reply says about a prepared phase: the directory, its file
// system, the files and the parked threads.
void DescribePreparedPhase(const BeneathDir& dir, const PhaseRunner& runner,
                           v1::PrepareReply* reply) {
  reply->set_resolved_dir(dir.path());
  if (struct statvfs sv; ::fstatvfs(dir.fd(), &sv) == 0) {
    v1::FsStats* fs = reply->mutable_dir_fs();
    fs->set_block_bytes(sv.f_bsize);
    fs->set_blocks(sv.f_blocks);
    fs->set_blocks_free(sv.f_bfree);
    fs->set_files(sv.f_files);
    fs->set_files_free(sv.f_ffree);
  }
  for (const std::string& f : runner.files()) {
    if (!f.empty()) reply->add_files(f);
  }
  runner.DescribePrepared(reply);
  reply->set_threads_parked(runner.spec().tasks());
}

// The workloads see the byte limit too (a seeks layout, weighed at Prepare).
PhasePreparerOptions WithWorkloadsLimit(PhasePreparerOptions options) {
  options.runner.max_bytes_per_phase = options.max_bytes_per_phase;
  return options;
}

}  // namespace

PhasePreparer::PhasePreparer(const AllowedRoots* roots, const RootMounts* mounts,
                             const FileSystemContext* fs, PhasePreparerOptions options)
    : roots_(roots), mounts_(mounts), fs_(fs), options_(WithWorkloadsLimit(std::move(options))) {}

absl::StatusOr<PreparedPhase> PhasePreparer::Prepare(
    const v1::PhaseSpec& spec, std::shared_ptr<const BeneathDir>* created_dir) const {
  RETURN_IF_ERROR(CheckTasks(spec));
  ASSIGN_OR_RETURN(std::unique_ptr<Workload> workload, MakeWorkload(spec, options_.runner));
  // Every kind's buffers, before anything is made: a kind's limit on one
  // item does not bound tasks x item (4,096 x 64 MiB is 256 GiB).
  RETURN_IF_ERROR(CheckAgentBufferBytes(spec, workload->AgentBufferBytes(),
                                        absl::StrFormat("%u tasks", spec.tasks()),
                                        workload->AgentBufferKeys()));
  // A root whose mount went away leaves the bare mount point: refused.
  if (workload->UsesDir()) RETURN_IF_ERROR(mounts_->Check(spec.dir(), options_.host));
  PreparedPhase phase;
  ASSIGN_OR_RETURN(phase.held, ResolvePhaseDir(*roots_, spec, *workload, created_dir));
  phase.dir = phase.held->path();
  RETURN_IF_ERROR(CheckWriteSpace(options_, spec, *workload, *phase.held));
  // File-system settings first: a layout applies only to files created after it.
  RETURN_IF_ERROR(ApplyFsSettings(*fs_, spec, phase.dir, &phase));
  phase.creates_files = workload->CreatesFiles();
  phase.removes_trees = workload->RemovesTrees();
  // The workload made above goes to the runner: one per Prepare.
  ASSIGN_OR_RETURN(phase.runner,
                   PhaseRunner::Prepare(std::move(workload), spec, phase.held, options_.runner));
  DescribePreparedPhase(*phase.held, *phase.runner, &phase.reply);
  return phase;
}

absl::Status PhasePreparer::CheckTasks(const v1::PhaseSpec& spec) const {
  if (spec.tasks() <= options_.max_tasks) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrFormat("phase %s asks for %u tasks on this agent; its limit is %u",
                      spec.phase_id(), spec.tasks(), options_.max_tasks));
}

absl::StatusOr<std::shared_ptr<const BeneathDir>> PhasePreparer::HoldDir(
    const std::string& dir) const {
  ASSIGN_OR_RETURN(const std::string resolved, roots_->Resolve(dir));
  return HoldBeneathRoot(*roots_, resolved, /*may_be_missing=*/false);
}

}  // namespace lockstep
