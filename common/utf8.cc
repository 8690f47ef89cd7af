#include "common/utf8.h"

namespace lockstep {

size_t Utf8SequenceAt(std::string_view text, size_t i, uint32_t* code_point) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(text[i + k]); };
  const unsigned char c = b(0);
  size_t n = 0;
  uint32_t v = 0;
  if (c < 0x80) {
    if (code_point != nullptr) *code_point = c;
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
  const bool overlong = (n == 3 && v < 0x800) || (n == 4 && v < 0x10000);
  if (overlong || (v >= 0xd800 && v <= 0xdfff) || v > 0x10ffff) return 0;
  if (code_point != nullptr) *code_point = v;
  return n;
}

size_t FirstNonUtf8(std::string_view text) {
  for (size_t i = 0; i < text.size();) {
    const size_t n = Utf8SequenceAt(text, i);
    if (n == 0) return i;
    i += n;
  }
  return std::string_view::npos;
}

bool IsUtf8(std::string_view text) { return FirstNonUtf8(text) == std::string_view::npos; }

size_t Utf8BoundaryFrom(std::string_view text, size_t i) {
  for (int k = 0; k < 3 && i > 0 && i < text.size() &&
                  (static_cast<unsigned char>(text[i]) & 0xc0) == 0x80;
       ++k) {
    ++i;
  }
  return i;
}

std::string Utf8Tail(std::string_view bytes, size_t max_bytes) {
  const size_t from =
      Utf8BoundaryFrom(bytes, bytes.size() > max_bytes ? bytes.size() - max_bytes : 0);
  // A character cut by the window is dropped, not replaced.
  std::string out;
  out.reserve(bytes.size() - from);
  for (size_t i = from; i < bytes.size();) {
    const size_t len = Utf8SequenceAt(bytes, i);
    if (len == 0) {
      out += '?';
      ++i;
    } else {
      out.append(bytes.substr(i, len));
      i += len;
    }
  }
  return out;
}

}  // namespace lockstep
