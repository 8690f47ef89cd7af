#include "controller/record/phase_id.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"

namespace lockstep {
namespace {

// Reads "<letter><digits>/" off the front of *text into *out.
bool TakeNumber(char letter, std::string_view* text, uint32_t* out) {
  if (text->empty() || text->front() != letter) return false;
  const size_t slash = text->find('/');
  if (slash == std::string_view::npos || slash == 1) return false;
  const std::string_view digits = text->substr(1, slash - 1);
  for (char c : digits) {
    if (c < '0' || c > '9') return false;
  }
  if (!absl::SimpleAtoi(absl::string_view(digits.data(), digits.size()), out)) return false;
  text->remove_prefix(slash + 1);
  return true;
}

}  // namespace

std::string PhaseId::str() const { return absl::StrFormat("t%u/r%u/%s", test, rep, phase); }

std::optional<PhaseId> PhaseId::Parse(std::string_view text) {
  PhaseId id;
  if (!TakeNumber('t', &text, &id.test) || !TakeNumber('r', &text, &id.rep) || text.empty()) {
    return std::nullopt;
  }
  id.phase = std::string(text);
  return id;
}

}  // namespace lockstep
