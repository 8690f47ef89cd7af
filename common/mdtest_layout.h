// mdtest 4.1's names and places, shared by the agent (which makes them) and
// the controller (which counts them):
//
//   <dir>/test-dir.<iteration>-0/                 one per iteration
//     mdtest_tree.0/            shared tree (rank 0 makes it), or
//     mdtest_tree.<rank>.0/     one tree per task (-u)
//       mdtest_tree[.<rank>].<k>/ ...   nested: the children of directory k
//                                       are b·k+1 .. b·k+b (breadth-first)
//   items of rank o: file.mdtest.<o>.<n> and dir.mdtest.<o>.<n>, item n in
//   directory n / items_per_dir of the tree.
#ifndef LOCKSTEP_COMMON_MDTEST_LAYOUT_H_
#define LOCKSTEP_COMMON_MDTEST_LAYOUT_H_

#include <cstdint>
#include <string>
#include <vector>

namespace lockstep {

// Directories of a tree of branching b and depth z: (b^(z+1)-1)/(b-1),
// z+1 for b = 1. Saturates at UINT64_MAX.
uint64_t MdtestTreeDirs(uint32_t branching, uint32_t depth);
// Its leaf directories: b^z (1 for b <= 1). Saturates at UINT64_MAX.
uint64_t MdtestLeafDirs(uint32_t branching, uint32_t depth);

// One task's items after mdtest's rounding.
struct MdtestItems {
  uint64_t items = 0;     // per task
  uint64_t per_dir = 0;   // items in each directory that holds items
  uint64_t first = 0;     // number of the first item: with -L the first leaf's
};

// mdtest's rounding: with -n N, N / dirs items per directory (-L: N / leaves)
// and N rounded down to a multiple of that; with -I M (and no -n), M per
// directory. Items 0 .. items-1 are numbered first + i.
MdtestItems MdtestItemLayout(uint64_t items, uint64_t items_per_dir, uint32_t branching,
                             uint32_t depth, bool leaf_only);

// "<dir>/test-dir.<iteration>-0"
std::string MdtestTestDir(const std::string& dir, uint32_t iteration);
// Base name of rank's tree directories: "mdtest_tree" or, unique, "mdtest_tree.<rank>".
std::string MdtestTreeBase(bool unique, uint32_t rank);
// "file.mdtest.<owner>.<n>" or "dir.mdtest.<owner>.<n>".
std::string MdtestItemName(bool directory, uint32_t owner, uint64_t n);
// The tree's directories, root first, breadth-first; directory k > 0 is
// "<its parent>/<base>.<k>".
std::vector<std::string> MdtestTreePaths(const std::string& root, const std::string& base,
                                         uint32_t branching, uint32_t depth);

}  // namespace lockstep

#endif  // LOCKSTEP_COMMON_MDTEST_LAYOUT_H_
