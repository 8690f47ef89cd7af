// Text from a plan (names, paths, commands, notes) on its way to a terminal or
// a text file: control characters escaped, so that a phase named
// "\x1b[2J..." cannot clear the screen and one with U+202E (right-to-left
// override) cannot make a line read backwards. JSON output needs none of
// this: its writer escapes controls (\u001b) and keeps bidi characters as
// data, which a JSON reader shows as what they are.
#ifndef LOCKSTEP_COMMON_TEXT_ESCAPE_H_
#define LOCKSTEP_COMMON_TEXT_ESCAPE_H_

#include <string>
#include <string_view>

namespace lockstep {

// `text` with each of these replaced by an escape: C0 controls (tab and
// newline included) and DEL as \xNN ("\x1b", "\x7f"); C1 controls
// (U+0080..U+009F) and the bidirectional overrides, embeddings and isolates
// (U+202A..U+202E, U+2066..U+2069) as \uNNNN ("\u202e"); bytes that are not
// UTF-8 as \xNN. A backslash stays a backslash. Other text is unchanged.
std::string EscapeForTerminal(std::string_view text);

// EscapeForTerminal, but newlines and tabs stay as they are: a program's
// output, a multi-line message. Carriage returns and the rest are escaped.
std::string EscapeForTerminalKeepingLines(std::string_view text);

// True when EscapeForTerminal(text) would change something.
bool HasControlCharacters(std::string_view text);

// Escapes `*text` in place (EscapeForTerminalKeepingLines), copying only
// when something must change: text from an agent or a program, escaped
// where it enters the controller.
void EscapeInPlaceKeepingLines(std::string* text);

}  // namespace lockstep

#endif  // LOCKSTEP_COMMON_TEXT_ESCAPE_H_
