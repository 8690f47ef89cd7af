#include "common/mdtest_layout.h"

#include <algorithm>

#include "absl/strings/str_format.h"

namespace lockstep {
namespace {

uint64_t SaturatingMul(uint64_t a, uint64_t b) {
  if (a != 0 && b > UINT64_MAX / a) return UINT64_MAX;
  return a * b;
}

}  // namespace

uint64_t MdtestTreeDirs(uint32_t branching, uint32_t depth) {
  if (branching <= 1) return uint64_t{depth} + 1;
  uint64_t dirs = 0, level = 1;
  for (uint32_t d = 0; d <= depth; ++d) {
    dirs = dirs > UINT64_MAX - level ? UINT64_MAX : dirs + level;
    level = SaturatingMul(level, branching);
  }
  return dirs;
}

uint64_t MdtestLeafDirs(uint32_t branching, uint32_t depth) {
  if (branching <= 1) return 1;
  uint64_t leaves = 1;
  for (uint32_t d = 0; d < depth; ++d) leaves = SaturatingMul(leaves, branching);
  return leaves;
}

MdtestItems MdtestItemLayout(uint64_t items, uint64_t items_per_dir, uint32_t branching,
                             uint32_t depth, bool leaf_only) {
  const uint64_t dirs = MdtestTreeDirs(branching, depth);
  const uint64_t holders = leaf_only ? MdtestLeafDirs(branching, depth) : dirs;
  MdtestItems out;
  if (items_per_dir > 0 && items == 0) {
    out.per_dir = items_per_dir;
    out.items = SaturatingMul(items_per_dir, holders);
  } else {
    out.per_dir = holders == 0 ? 0 : items / holders;
    out.items = out.per_dir * holders;
  }
  if (leaf_only) out.first = SaturatingMul(out.per_dir, dirs - holders);
  return out;
}

std::string MdtestTestDir(const std::string& dir, uint32_t iteration) {
  std::string out = dir;
  if (out.empty() || out.back() != '/') out += '/';
  return absl::StrFormat("%stest-dir.%u-0", out, iteration);
}

std::string MdtestTreeBase(bool unique, uint32_t rank) {
  return unique ? absl::StrFormat("mdtest_tree.%u", rank) : std::string("mdtest_tree");
}

std::string MdtestItemName(bool directory, uint32_t owner, uint64_t n) {
  return absl::StrFormat("%s.mdtest.%u.%u", directory ? "dir" : "file", owner, n);
}

std::vector<std::string> MdtestTreePaths(const std::string& root, const std::string& base,
                                         uint32_t branching, uint32_t depth) {
  const uint64_t n = MdtestTreeDirs(branching, depth);
  const uint64_t b = std::max<uint32_t>(branching, 1);
  std::vector<std::string> out;
  out.reserve(n);
  out.push_back(root);
  for (uint64_t k = 1; k < n; ++k) {
    out.push_back(absl::StrFormat("%s/%s.%u", out[(k - 1) / b], base, k));
  }
  return out;
}

}  // namespace lockstep
