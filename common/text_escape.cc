#include "common/text_escape.h"

#include <cstdint>

#include "absl/strings/str_format.h"

namespace lockstep {
namespace {

// The length of the UTF-8 sequence at text[i] and its code point; 0 when
// the bytes there are not UTF-8 (overlong forms and surrogates included).
size_t DecodeUtf8(std::string_view text, size_t i, uint32_t* cp) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(text[i + k]); };
  const unsigned char c = b(0);
  size_t n = 0;
  uint32_t v = 0;
  if (c < 0x80) {
    *cp = c;
    return 1;
  } else if (c >= 0xc2 && c <= 0xdf) {
    n = 2, v = c & 0x1f;
  } else if (c >= 0xe0 && c <= 0xef) {
    n = 3, v = c & 0x0f;
  } else if (c >= 0xf0 && c <= 0xf4) {
    n = 4, v = c & 0x07;
  } else {
    return 0;
  }
  if (i + n > text.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((b(k) & 0xc0) != 0x80) return 0;
    v = (v << 6) | (b(k) & 0x3f);
  }
  if ((n == 3 && (v < 0x800 || (v >= 0xd800 && v <= 0xdfff))) || (n == 4 && (v < 0x10000 || v > 0x10ffff))) {
    return 0;
  }
  *cp = v;
  return n;
}

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
    const size_t n = DecodeUtf8(text, i, &cp);
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
    const size_t n = DecodeUtf8(*text, i, &cp);
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
    const size_t n = DecodeUtf8(text, i, &cp);
    if (n == 0 || MustEscape(cp)) return true;
    i += n;
  }
  return false;
}

}  // namespace lockstep
