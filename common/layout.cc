#include "common/layout.h"

#include "absl/strings/str_format.h"

namespace lockstep {

std::string TaskFilePath(const std::string& dir, const v1::PhaseSpec& spec, uint32_t rank) {
  std::string base = dir;
  if (!base.empty() && base.back() != '/') base += '/';
  base += spec.file_name();
  if (!spec.file_per_process()) return base;
  return absl::StrFormat("%s.%08d", base, DataRank(spec, rank));
}

uint32_t DataRank(const v1::PhaseSpec& spec, uint32_t rank) {
  if (spec.total_tasks() == 0) return rank;
  return (rank + spec.reorder_shift()) % spec.total_tasks();
}

uint64_t TransfersPerBlock(const v1::PhaseSpec& spec) {
  return spec.transfer_bytes() == 0 ? 0 : spec.block_bytes() / spec.transfer_bytes();
}

uint64_t TransferOffset(const v1::PhaseSpec& spec, uint32_t data_rank, uint64_t segment,
                        uint64_t j) {
  if (spec.file_per_process()) {
    return segment * spec.block_bytes() + j * spec.transfer_bytes();
  }
  return segment * spec.total_tasks() * spec.block_bytes() + data_rank * spec.block_bytes() +
         j * spec.transfer_bytes();
}

uint64_t RequiredFileSize(const v1::PhaseSpec& spec, uint32_t data_rank) {
  if (spec.segments() == 0) return 0;
  uint64_t last = spec.segments() - 1;
  return TransferOffset(spec, data_rank, last, TransfersPerBlock(spec) - 1) +
         spec.transfer_bytes();
}

uint64_t AggregateBytes(const v1::PhaseSpec& spec) {
  return spec.block_bytes() * spec.segments() * spec.total_tasks();
}

}  // namespace lockstep
