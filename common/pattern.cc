#include "common/pattern.h"

#include <algorithm>
#include <cstring>

#include "absl/strings/str_format.h"
#include "common/mix.h"

namespace lockstep {
namespace {

inline uint64_t WordAt(uint64_t offset, uint64_t tag) {
  uint64_t in_block = offset % kPatternBlockBytes;
  if (in_block == 0) return offset;
  if (in_block == 8) return tag;
  return tag ^ (in_block * 0x9E3779B97F4A7C15ULL);
}

}  // namespace

uint64_t PatternTag(uint64_t seed, uint64_t writer_rank) {
  return Mix64(seed ^ Mix64(writer_rank + 1));
}

void FillPattern(char* buf, size_t len, uint64_t file_offset, uint64_t tag) {
  // Word by word for one 4 KiB period; past it every word but the offset
  // stamps repeats the period (file_offset is a multiple of 8, so the words
  // line up with the blocks' words): copy, doubling, then stamp. A 256 KiB
  // buffer word by word was half of a Prepare's CPU.
  const size_t words_len = len / 8 * 8;
  const size_t period = std::min<size_t>(words_len, kPatternBlockBytes);
  for (size_t i = 0; i < period; i += 8) {
    uint64_t w = WordAt(file_offset + i, tag);
    std::memcpy(buf + i, &w, 8);
  }
  if (words_len <= period) return;
  for (size_t done = period; done < words_len;) {
    const size_t n = std::min(done, words_len - done);
    std::memcpy(buf + done, buf, n);
    done += n;
  }
  StampPattern(buf + period, words_len - period, file_offset + period, tag);
}

void StampPattern(char* buf, size_t len, uint64_t file_offset, uint64_t /*tag*/) {
  // Tag and filler words depend only on the position within a 4 KiB block,
  // so only the offset word at each block start changes.
  uint64_t first = (kPatternBlockBytes - file_offset % kPatternBlockBytes) % kPatternBlockBytes;
  for (uint64_t i = first; i + 8 <= len; i += kPatternBlockBytes) {
    uint64_t off = file_offset + i;
    std::memcpy(buf + i, &off, 8);
  }
}

std::optional<PatternMismatch> CheckPattern(const char* buf, size_t len, uint64_t file_offset,
                                            uint64_t tag, char* scratch) {
  FillPattern(scratch, len, file_offset, tag);
  if (std::memcmp(buf, scratch, len) == 0) return std::nullopt;
  size_t i = 0;
  while (i < len && buf[i] == scratch[i]) ++i;
  size_t word = i - i % 8;
  PatternMismatch m;
  m.file_offset = file_offset + i;
  m.expected_word = 0;
  m.found_word = 0;
  std::memcpy(&m.expected_word, scratch + word, std::min<size_t>(8, len - word));
  std::memcpy(&m.found_word, buf + word, std::min<size_t>(8, len - word));
  return m;
}

std::string PatternMismatch::Describe() const {
  return absl::StrFormat("data differs at offset %u: expected word 0x%016x, found 0x%016x",
                         file_offset, expected_word, found_word);
}

}  // namespace lockstep
