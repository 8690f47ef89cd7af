// SplitMix64's finalizer: a fast 64-bit mixing function, shared by the data
// pattern, the random-offset permutation and the small-file sizes so that they
// all derive from the plan's seed the same way.
#ifndef LOCKSTEP_COMMON_MIX_H_
#define LOCKSTEP_COMMON_MIX_H_

#include <cstdint>

namespace lockstep {

inline uint64_t Mix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

}  // namespace lockstep

#endif  // LOCKSTEP_COMMON_MIX_H_
