#include "common/sizes.h"

#include <cctype>
#include <limits>

#include "absl/strings/ascii.h"
#include "absl/strings/str_format.h"

namespace lockstep {
namespace {

constexpr char kForms[] =
    "use a whole number of bytes, an IOR suffix k/m/g/t/p (powers of two: "
    "\"1m\" = 1048576), or a unit KiB/MiB/GiB/TiB (powers of two) or "
    "KB/MB/GB/TB (powers of ten)";

absl::Status Bad(std::string_view text, std::string_view why) {
  return absl::InvalidArgumentError(
      absl::StrFormat("size \"%s\" %s: %s", std::string(text), std::string(why), kForms));
}

}  // namespace

absl::StatusOr<uint64_t> ParseSize(std::string_view text) {
  std::string s(text);
  // Trim.
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  s = s.substr(b, e - b);
  if (s.empty()) return Bad(text, "is empty");
  size_t i = 0;
  uint64_t value = 0;
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) {
    uint64_t digit = static_cast<uint64_t>(s[i] - '0');
    if (value > (std::numeric_limits<uint64_t>::max() - digit) / 10) {
      return Bad(text, "is too large");
    }
    value = value * 10 + digit;
    ++i;
  }
  if (i == 0) {
    if (s[0] == '-') return Bad(text, "is negative");
    return Bad(text, "does not start with a number");
  }
  std::string suffix = absl::AsciiStrToLower(s.substr(i));
  // Allow one space between number and unit: "4 GiB".
  if (!suffix.empty() && suffix[0] == ' ') suffix = suffix.substr(1);
  uint64_t mult = 1;
  if (suffix.empty() || suffix == "b") {
    mult = 1;
  } else if (suffix == "k" || suffix == "kib") {
    mult = 1ULL << 10;
  } else if (suffix == "m" || suffix == "mib") {
    mult = 1ULL << 20;
  } else if (suffix == "g" || suffix == "gib") {
    mult = 1ULL << 30;
  } else if (suffix == "t" || suffix == "tib") {
    mult = 1ULL << 40;
  } else if (suffix == "p" || suffix == "pib") {
    mult = 1ULL << 50;
  } else if (suffix == "kb") {
    mult = 1000ULL;
  } else if (suffix == "mb") {
    mult = 1000ULL * 1000;
  } else if (suffix == "gb") {
    mult = 1000ULL * 1000 * 1000;
  } else if (suffix == "tb") {
    mult = 1000ULL * 1000 * 1000 * 1000;
  } else if (suffix == "pb") {
    mult = 1000ULL * 1000 * 1000 * 1000 * 1000;
  } else {
    return Bad(text, absl::StrFormat("has an unknown unit \"%s\"", s.substr(i)));
  }
  if (value != 0 && mult > std::numeric_limits<uint64_t>::max() / value) {
    return Bad(text, "is too large");
  }
  return value * mult;
}

std::string HumanBytes(uint64_t bytes) {
  static const char* kUnits[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  if (bytes < 1024) return absl::StrFormat("%u bytes", bytes);
  double value = static_cast<double>(bytes);
  int unit = -1;
  while (value >= 1024.0 && unit < 5) {
    value /= 1024.0;
    ++unit;
  }
  if (value == static_cast<double>(static_cast<uint64_t>(value))) {
    return absl::StrFormat("%.0f %s", value, kUnits[unit]);
  }
  return absl::StrFormat("%.2f %s", value, kUnits[unit]);
}

}  // namespace lockstep
