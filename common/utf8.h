// UTF-8 as Lockstep needs it: protobuf strings, run.json and the TOML plans
// are UTF-8 text, while a program's output, a file name or a command-line
// argument may be any bytes. One decoder for every place that must tell the
// two apart.
#ifndef LOCKSTEP_COMMON_UTF8_H_
#define LOCKSTEP_COMMON_UTF8_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace lockstep {

// The length of the UTF-8 sequence at text[i] (1 to 4), with its code point
// in `*code_point` when given; 0 when the bytes there are not UTF-8 (a stray
// continuation byte, a cut sequence, an overlong form, a surrogate or a code
// point above U+10FFFF). i < text.size().
size_t Utf8SequenceAt(std::string_view text, size_t i, uint32_t* code_point = nullptr);

// The offset of the first byte of `text` that does not begin a UTF-8
// sequence, or std::string_view::npos when the whole of it is UTF-8.
size_t FirstNonUtf8(std::string_view text);

// True when the whole of `text` is UTF-8.
bool IsUtf8(std::string_view text);

// The first character boundary at or after `i`: past at most three
// continuation bytes, so that text.substr(result) does not begin inside a
// character.
size_t Utf8BoundaryFrom(std::string_view text, size_t i);

// The last at most `max_bytes` of `bytes`, cut at a character boundary and
// with every invalid UTF-8 sequence replaced by '?': protobuf strings (and
// run.json) must be UTF-8, and a program prints what it likes.
std::string Utf8Tail(std::string_view bytes, size_t max_bytes);

}  // namespace lockstep

#endif  // LOCKSTEP_COMMON_UTF8_H_
