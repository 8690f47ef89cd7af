#include "common/text_escape.h"

#include <cstdint>

#include "absl/strings/str_format.h"
#include "common/utf8.h"

namespace lockstep {
namespace {

bool MustEscape(uint32_t cp) {
  return cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp <= 0x9f) ||
         (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069);
}

bool IsLineControl(uint32_t cp) { return cp == '\n' || cp == '\t'; }

std::string Escape(std::string_view text, bool keep_lines) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    uint32_t cp = 0;
    const size_t n = Utf8SequenceAt(text, i, &cp);
    if (n == 0) {
      out += absl::StrFormat("\\x%02x", static_cast<unsigned char>(text[i]));
      ++i;
      continue;
    }
    if (!MustEscape(cp) || (keep_lines && IsLineControl(cp))) {
      out.append(text.substr(i, n));
    } else if (cp < 0x80) {
      out += absl::StrFormat("\\x%02x", cp);
    } else {
      out += absl::StrFormat("\\u%04x", cp);
    }
    i += n;
  }
  return out;
}

}  // namespace

std::string EscapeForTerminal(std::string_view text) { return Escape(text, false); }

std::string EscapeForTerminalKeepingLines(std::string_view text) { return Escape(text, true); }

void EscapeInPlaceKeepingLines(std::string* text) {
  for (size_t i = 0; i < text->size();) {
    uint32_t cp = 0;
    const size_t n = Utf8SequenceAt(*text, i, &cp);
    if (n == 0 || (MustEscape(cp) && !IsLineControl(cp))) {
      *text = Escape(*text, true);
      return;
    }
    i += n;
  }
}

bool HasControlCharacters(std::string_view text) {
  for (size_t i = 0; i < text.size();) {
    uint32_t cp = 0;
    const size_t n = Utf8SequenceAt(text, i, &cp);
    if (n == 0 || MustEscape(cp)) return true;
    i += n;
  }
  return false;
}

}  // namespace lockstep
