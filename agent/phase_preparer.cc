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

// The phase directory within the roots; creates a missing mdtest -d.
absl::StatusOr<std::string> ResolvePhaseDir(const AllowedRoots& roots, const v1::PhaseSpec& spec,
                                            const Workload& workload, std::string* created_dir) {
  auto dir = roots.Resolve(spec.dir());
  // A command phase's Prepare makes its own directory (owned by command_user).
  if (!dir.ok() && absl::IsNotFound(dir.status()) && workload.PreparesMissingDir()) {
    return roots.ResolveNew(spec.dir());
  }
  if (dir.ok() || !absl::IsNotFound(dir.status()) || !workload.CreatesMissingDir()) return dir;
  // mdtest creates its -d directory when it is missing (one level, as
  // mkdir(2)); rank 0's agent does, in Prepare, before any task starts.
  auto planned = roots.ResolveNew(spec.dir());
  if (!planned.ok()) return planned.status();
  if (spec.first_rank() != 0) return *planned;
  if (::mkdir(planned->c_str(), 0775) == 0) {
    *created_dir = *planned;
  } else if (errno != EEXIST) {
    return absl::FailedPreconditionError(
        absl::StrFormat("phase %s: cannot create the mdtest directory %s: %s; create it or fix -d",
                        spec.phase_id(), *planned, std::strerror(errno)));
  }
  return roots.Resolve(spec.dir());
}

// The agent's per-phase byte limit and the free space (NO_SPACE).
absl::Status CheckWriteSpace(const PhasePreparerOptions& options, const v1::PhaseSpec& spec,
                             const Workload& workload, const std::string& dir) {
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
  if (spec.ignore_free_space() || ::statvfs(dir.c_str(), &sv) != 0) return absl::OkStatus();
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
    ASSIGN_OR_RETURN(v1::FsLayout layout, file_system->SetLayout(dir, spec));
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
void DescribePreparedPhase(const std::string& dir, const PhaseRunner& runner,
                           v1::PrepareReply* reply) {
  reply->set_resolved_dir(dir);
  if (struct statvfs sv; ::statvfs(dir.c_str(), &sv) == 0) {
    v1::FsStats* fs = reply->mutable_dir_fs();
    fs->set_block_bytes(sv.f_bsize);
    fs->set_blocks(sv.f_blocks);
    fs->set_blocks_free(sv.f_bfree);
    fs->set_files(sv.f_files);
    fs->set_files_free(sv.f_ffree);
  }
  for (const std::string& f : runner.files()) reply->add_files(f);
  reply->set_threads_parked(runner.spec().tasks());
}

}  // namespace

PhasePreparer::PhasePreparer(const AllowedRoots* roots, const RootMounts* mounts,
                             const FileSystemContext* fs, PhasePreparerOptions options)
    : roots_(roots), mounts_(mounts), fs_(fs), options_(std::move(options)) {}

absl::StatusOr<PreparedPhase> PhasePreparer::Prepare(const v1::PhaseSpec& spec,
                                                     std::string* created_dir) const {
  if (spec.tasks() > options_.max_tasks) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "phase %s asks for %u tasks on this agent; its limit is %u", spec.phase_id(), spec.tasks(),
        options_.max_tasks));
  }
  ASSIGN_OR_RETURN(std::unique_ptr<Workload> workload, MakeWorkload(spec, options_.runner));
  // A root whose mount went away leaves the bare mount point: refused.
  RETURN_IF_ERROR(mounts_->Check(spec.dir(), options_.host));
  PreparedPhase phase;
  ASSIGN_OR_RETURN(phase.dir, ResolvePhaseDir(*roots_, spec, *workload, created_dir));
  RETURN_IF_ERROR(CheckWriteSpace(options_, spec, *workload, phase.dir));
  // File-system settings first: a layout applies only to files created after it.
  RETURN_IF_ERROR(ApplyFsSettings(*fs_, spec, phase.dir, &phase));
  ASSIGN_OR_RETURN(phase.runner, PhaseRunner::Prepare(spec, phase.dir, options_.runner));
  DescribePreparedPhase(phase.dir, *phase.runner, &phase.reply);
  phase.creates_files = workload->CreatesFiles();
  phase.removes_trees = workload->RemovesTrees();
  return phase;
}

}  // namespace lockstep
