// The data pattern written by every task and checked on read.
//
// The file is a sequence of 4 KiB blocks. The first 8-byte word of each block
// holds its file offset, the second a tag derived from (seed, writer rank);
// the other words are a filler derived from the tag and the word's position in
// its block. So every block says who wrote it and where it belongs, and a
// flipped byte anywhere is found by comparison.
#ifndef LOCKSTEP_COMMON_PATTERN_H_
#define LOCKSTEP_COMMON_PATTERN_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace lockstep {

inline constexpr uint64_t kPatternBlockBytes = 4096;

uint64_t PatternTag(uint64_t seed, uint64_t writer_rank);

// Fills `buf[0, len)` with the pattern of the bytes at file offsets
// [file_offset, file_offset + len). REQUIRES: file_offset and len multiples of 8.
void FillPattern(char* buf, size_t len, uint64_t file_offset, uint64_t tag);

// Fast path for a buffer already filled by FillPattern for some offset with
// the same offset mod 4096: rewrites only the per-block offset stamps.
void StampPattern(char* buf, size_t len, uint64_t file_offset, uint64_t tag);

struct PatternMismatch {
  uint64_t file_offset;  // of the first differing byte
  uint64_t expected_word;
  uint64_t found_word;
  std::string Describe() const;
};

// Compares `buf` with the pattern expected at `file_offset`; `scratch` must
// hold `len` bytes. Returns the first mismatch, or nullopt.
std::optional<PatternMismatch> CheckPattern(const char* buf, size_t len, uint64_t file_offset,
                                            uint64_t tag, char* scratch);

}  // namespace lockstep

#endif  // LOCKSTEP_COMMON_PATTERN_H_
