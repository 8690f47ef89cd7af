// Byte sizes as people write them in plans and on IOR command lines.
#ifndef LOCKSTEP_COMMON_SIZES_H_
#define LOCKSTEP_COMMON_SIZES_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace lockstep {

// Parses a size. Accepted forms (case-insensitive suffix, no sign):
//   "4096"               bytes
//   "1k" "1m" "60g" "1t" "1p"   IOR suffixes: powers of two (1m = 1048576)
//   "1KiB" "1MiB" "4GiB" "1TiB" powers of two
//   "1KB" "1MB" "1GB" "1TB"     powers of ten (1MB = 1000000)
//   "1B"                         bytes
// Errors (InvalidArgument) name the text and list the accepted forms.
// Overflow past 2^64-1 is an error. Zero is accepted; callers decide.
absl::StatusOr<uint64_t> ParseSize(std::string_view text);

// IOR's HumanReadable(…, BASE_TWO): "1 MiB", "60 GiB", "1.50 MiB", "512 bytes".
std::string HumanBytes(uint64_t bytes);

}  // namespace lockstep

#endif  // LOCKSTEP_COMMON_SIZES_H_
