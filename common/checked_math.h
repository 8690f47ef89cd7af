// Checked 64-bit size arithmetic: every product or sum of sizes a plan or a
// PhaseSpec asks for (block × segments × tasks × agents, buffers × tasks)
// goes through these, so that a value that does not fit is refused by name
// instead of wrapping to a small number (a wrapped total once showed
// "0 bytes/agent" and passed the free-space check). Controller and agent
// both use them.
#ifndef LOCKSTEP_COMMON_CHECKED_MATH_H_
#define LOCKSTEP_COMMON_CHECKED_MATH_H_

#include <cstdint>
#include <initializer_list>
#include <optional>

namespace lockstep {

// The largest size of one file, and so of any byte count a phase may
// address: file offsets are off_t (signed 64-bit), 8 EiB - 1.
inline constexpr uint64_t kMaxFileOffsetBytes = uint64_t{INT64_MAX};

// a × b, or nullopt when it does not fit in 64 bits.
constexpr std::optional<uint64_t> CheckedMul(uint64_t a, uint64_t b) {
  uint64_t out = 0;
  if (__builtin_mul_overflow(a, b, &out)) return std::nullopt;
  return out;
}

// The product of all `factors`, or nullopt when any step overflows.
constexpr std::optional<uint64_t> CheckedProduct(std::initializer_list<uint64_t> factors) {
  uint64_t out = 1;
  for (uint64_t f : factors) {
    if (__builtin_mul_overflow(out, f, &out)) return std::nullopt;
  }
  return out;
}

// a + b, or nullopt when it does not fit in 64 bits.
constexpr std::optional<uint64_t> CheckedAdd(uint64_t a, uint64_t b) {
  uint64_t out = 0;
  if (__builtin_add_overflow(a, b, &out)) return std::nullopt;
  return out;
}

// a × b, UINT64_MAX when it does not fit: for figures that are only shown
// or compared against a limit (an estimate, a space check), where "more
// than 16 EiB" is as good as the exact value and never passes a check.
constexpr uint64_t SaturatingMul(uint64_t a, uint64_t b) {
  return CheckedMul(a, b).value_or(UINT64_MAX);
}
constexpr uint64_t SaturatingAdd(uint64_t a, uint64_t b) {
  return CheckedAdd(a, b).value_or(UINT64_MAX);
}

}  // namespace lockstep

#endif  // LOCKSTEP_COMMON_CHECKED_MATH_H_
