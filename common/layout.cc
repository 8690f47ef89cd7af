#include "common/layout.h"

#include <stdlib.h>

#include <algorithm>

#include "absl/strings/str_format.h"
#include "common/mix.h"

namespace lockstep {

std::string TaskFilePath(const std::string& dir, const v1::PhaseSpec& spec, uint32_t rank) {
  std::string path = dir;
  if (!path.empty() && path.back() != '/') path += '/';
  if (spec.file_per_process() && spec.task_file_names_size() > 0) {
    // IOzone -F: the names as given, one per task (the agent checked the count).
    const uint32_t data_rank = DataRank(spec, rank);
    path += spec.task_file_names(static_cast<int>(data_rank % spec.task_file_names_size()));
  } else {
    path += spec.file_name();
    if (spec.file_per_process()) path += absl::StrFormat(".%08d", DataRank(spec, rank));
  }
  if (spec.multi_file()) path += absl::StrFormat(".%u", spec.repetition());
  return path;
}

uint32_t DataRank(const v1::PhaseSpec& spec, uint32_t rank) {
  const uint32_t n = spec.total_tasks();
  if (n == 0) return rank;
  uint64_t offset = spec.reorder_shift();
  if (spec.reorder_random()) {
    const uint32_t per_node = std::max<uint32_t>(spec.tasks(), 1);
    offset = IorRandomTaskOffset(rank, spec.reorder_random_seed(), spec.repetition(), n, per_node,
                                 std::max<uint32_t>(n / per_node, 1),
                                 std::max<uint32_t>(spec.reorder_node_offset(), 1));
  }
  return static_cast<uint32_t>((rank + offset) % n);
}

uint32_t IorRandomTaskOffset(uint32_t rank, int32_t seed, uint32_t repetition, uint32_t tasks,
                             uint32_t tasks_per_node, uint32_t nodes, uint32_t task_offset) {
  const uint32_t node_offset = std::min<uint32_t>(task_offset, nodes == 0 ? 0 : nodes - 1);
  const unsigned seed0 = seed < 0 ? static_cast<unsigned>(-static_cast<int64_t>(seed)) + repetition
                                  : static_cast<unsigned>(seed);
  // glibc's rand() is random() on a 128-byte TYPE_3 state: the same
  // sequence from initstate_r with 128 bytes, without the global state.
  char state[128] = {};
  struct random_data data = {};
  ::initstate_r(rank + seed0, state, sizeof(state), &data);
  auto next = [&] {
    int32_t r = 0;
    ::random_r(&data, &r);
    return static_cast<uint32_t>(r) % tasks;
  };
  uint32_t offset = next();
  while (offset < uint64_t{node_offset} * tasks_per_node) offset = next();
  return offset;
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
  const uint64_t per_block = TransfersPerBlock(spec);
  const uint64_t pairs = TransfersPerTask(spec);
  if (pairs == 0 || per_block == 0) return 0;
  // The last transfer in order (transfers go block by block, segment by segment).
  const uint64_t last = pairs - 1;
  return TransferOffset(spec, data_rank, last / per_block, last % per_block) +
         spec.transfer_bytes();
}

uint64_t AggregateBytes(const v1::PhaseSpec& spec) {
  if (spec.stonewall_count() > 0) {
    return TransfersPerTask(spec) * spec.transfer_bytes() * spec.total_tasks();
  }
  return spec.block_bytes() * spec.segments() * spec.total_tasks();
}

uint64_t TransfersPerTask(const v1::PhaseSpec& spec) {
  const uint64_t all = TransfersPerBlock(spec) * spec.segments();
  return spec.stonewall_count() > 0 ? std::min(all, spec.stonewall_count()) : all;
}


uint64_t IorRand64::Next() {
  // IOR: res.low = low * multi.low; res.high = high * multi.high + (res.low >> 32).
  constexpr uint64_t kMultiHigh = 0x0fc94e3bf4e9ab32ull;
  constexpr uint64_t kMultiLow = 0x866458cd56f5e605ull;
  low_ = low_ * kMultiLow;
  high_ = high_ * kMultiHigh + (low_ >> 32);
  return high_;
}

uint64_t RandomBlocksState(const v1::PhaseSpec& spec, uint32_t data_rank) {
  const int32_t seed = static_cast<int32_t>(static_cast<uint32_t>(spec.random_seed()) +
                                            (spec.file_per_process() ? data_rank : 0));
  return static_cast<uint64_t>(static_cast<int64_t>(seed)) * (uint64_t{data_rank} + 1);
}

Permutation::Permutation(uint64_t n, uint64_t key) : n_(n) {
  uint32_t bits = 2;
  while (bits < 64 && (uint64_t{1} << bits) < n) bits += 2;
  half_bits_ = bits / 2;
  half_mask_ = (uint64_t{1} << half_bits_) - 1;
  uint64_t k = key;
  for (uint64_t& rk : keys_) {
    k = Mix64(k);
    rk = k;
  }
}

uint64_t Permutation::operator()(uint64_t i) const {
  uint64_t x = i;
  // Cycle walking: a bijection of [0, 4^h) restricted to [0, n) by applying
  // it again until the value falls in range; n > 4^h / 4 keeps this short.
  do {
    uint64_t left = x >> half_bits_;
    uint64_t right = x & half_mask_;
    for (uint64_t rk : keys_) {
      uint64_t f = Mix64(right ^ rk) & half_mask_;
      uint64_t next = left ^ f;
      left = right;
      right = next;
    }
    x = (left << half_bits_) | right;
  } while (x >= n_);
  return x;
}

uint64_t RandomOffsetsKey(const v1::PhaseSpec& spec, uint32_t data_rank) {
  return Mix64(spec.random_seed() ^ Mix64(uint64_t{data_rank} + 0x5EEDULL));
}

}  // namespace lockstep
