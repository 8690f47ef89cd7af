#include "common/flags.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/sizes.h"
#include "common/text_escape.h"
#include "common/utf8.h"

namespace lockstep {
namespace {

constexpr size_t kHelpWidth = 80;
constexpr size_t kFlagColumn = 28;  // where a flag's meaning starts in --help
constexpr char kNoBreak[] = "\x1f";  // a space Fill keeps within the line

std::string SeeHelp(const CommandSpec& command) {
  return absl::StrCat(" (see ", command.FullName(), " --help)");
}

absl::Status Bad(const CommandSpec& command, absl::string_view what, absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat(what, ": ", why, SeeHelp(command)));
}

// "--local 300" as the user wrote it, for error messages.
std::string Shown(const FlagSpec& spec, absl::string_view text) {
  return absl::StrCat("--", spec.name, " ", text);
}

std::string RangeText(const FlagSpec& spec) {
  const bool is_int = spec.kind == FlagKind::kInt;
  const std::string lo = is_int ? absl::StrCat(spec.min)
                                : absl::StrCat(static_cast<uint64_t>(std::max<int64_t>(spec.min, 0)));
  const std::string hi =
      is_int ? absl::StrCat(std::min<uint64_t>(spec.max, std::numeric_limits<int64_t>::max()))
             : absl::StrCat(spec.max);
  return absl::StrCat(lo, " to ", hi);
}

// Checks `text` against `spec` and fills `out`. Errors name "--flag text".
absl::Status ConvertValue(const CommandSpec& command, const FlagSpec& spec, absl::string_view text,
                          FlagValue* out) {
  out->spec = &spec;
  out->text = std::string(text);
  const uint64_t umin = static_cast<uint64_t>(std::max<int64_t>(spec.min, 0));
  switch (spec.kind) {
    case FlagKind::kBool: {
      const std::string t = absl::AsciiStrToLower(text);
      if (t == "true" || t == "1" || t == "yes" || t == "y" || t == "t") {
        out->b = true;
      } else if (t == "false" || t == "0" || t == "no" || t == "n" || t == "f") {
        out->b = false;
      } else {
        return Bad(command, absl::StrCat("--", spec.name, "=", text),
                   absl::StrFormat("expected true or false (--%s alone means true)", spec.name));
      }
      out->text = out->b ? "true" : "false";
      return absl::OkStatus();
    }
    case FlagKind::kInt: {
      int64_t v = 0;
      if (text.empty() || text[0] == '+' || !absl::SimpleAtoi(text, &v)) {
        return Bad(command, Shown(spec, text), "expected a whole number");
      }
      if (v < spec.min || (v >= 0 && static_cast<uint64_t>(v) > spec.max)) {
        return Bad(command, Shown(spec, text),
                   absl::StrCat("out of range; use ", RangeText(spec)));
      }
      out->i = v;
      return absl::OkStatus();
    }
    case FlagKind::kUint: {
      uint64_t v = 0;
      if (text.empty() || text[0] == '-' || text[0] == '+' || !absl::SimpleAtoi(text, &v)) {
        return Bad(command, Shown(spec, text), "expected a whole number");
      }
      if (v < umin || v > spec.max) {
        return Bad(command, Shown(spec, text),
                   absl::StrCat("out of range; use ", RangeText(spec)));
      }
      out->u = v;
      return absl::OkStatus();
    }
    case FlagKind::kSize: {
      auto v = ParseSize(std::string_view(text.data(), text.size()));
      if (!v.ok()) return Bad(command, Shown(spec, text), v.status().message());
      if (*v < umin || *v > spec.max) {
        return Bad(command, Shown(spec, text),
                   absl::StrCat("out of range; use ", RangeText(spec), " bytes"));
      }
      out->u = *v;
      return absl::OkStatus();
    }
    case FlagKind::kString:
      return absl::OkStatus();
    case FlagKind::kList:
      out->items.clear();
      if (spec.separator == '\0') {
        if (!text.empty()) out->items.emplace_back(text);
      } else {
        for (absl::string_view part :
             absl::StrSplit(text, spec.separator,
                            absl::SkipEmpty())) {
          out->items.emplace_back(part);
        }
      }
      return absl::OkStatus();
  }
  return absl::OkStatus();
}

size_t EditDistance(absl::string_view a, absl::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      const bool same = a[i - 1] == b[j - 1] || (a[i - 1] == '-' && b[j - 1] == '_') ||
                        (a[i - 1] == '_' && b[j - 1] == '-');
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (same ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

bool IsHelpWord(absl::string_view a) { return a == "--help" || a == "-h"; }

// ---- text layout ---------------------------------------------------------------

// Fills `text` into lines of at most `width` columns, the first starting at
// column `first_col` (already written by the caller), the others indented
// by `indent`.
std::string Fill(absl::string_view text, size_t indent, size_t first_col, size_t width) {
  std::string out;
  size_t col = first_col;
  bool line_start = true;
  for (absl::string_view word :
       absl::StrSplit(text, absl::ByAnyChar(" \n"),
                      absl::SkipEmpty())) {
    if (!line_start && col + 1 + word.size() > width) {
      absl::StrAppend(&out, "\n", std::string(indent, ' '));
      col = indent;
      line_start = true;
    }
    if (!line_start) {
      out += ' ';
      ++col;
    }
    absl::StrAppend(&out, word);
    col += word.size();
    line_start = false;
  }
  return out;
}

bool IsPreformatted(absl::string_view paragraph) {
  for (absl::string_view line : absl::StrSplit(paragraph, '\n')) {
    if (!line.empty() && !absl::StartsWith(line, "  ")) return false;
  }
  return true;
}

std::vector<std::string> Paragraphs(absl::string_view text) {
  std::vector<std::string> out;
  for (absl::string_view p : absl::StrSplit(text, "\n\n")) {
    std::string s(absl::StripTrailingAsciiWhitespace(p));
    while (!s.empty() && s.front() == '\n') s.erase(0, 1);
    if (!s.empty()) out.push_back(std::move(s));
  }
  return out;
}

// Paragraphs for a terminal: filled ones at `indent`, tables as written.
std::string FormatParagraphs(absl::string_view text, size_t indent) {
  std::string out;
  for (const std::string& p : Paragraphs(text)) {
    if (!out.empty()) out += "\n";
    if (IsPreformatted(p)) {
      for (absl::string_view line : absl::StrSplit(p, '\n')) {
        absl::StrAppend(&out, std::string(indent, ' '), line, "\n");
      }
    } else {
      absl::StrAppend(&out, std::string(indent, ' '), Fill(p, indent, indent, kHelpWidth), "\n");
    }
  }
  return out;
}

// "--local N", "--insecure"; "--history=false" for a bool that defaults to true.
std::string FlagUsage(const FlagSpec& f) {
  if (f.kind == FlagKind::kBool) {
    return f.default_value == "true" ? absl::StrCat("--", f.name, "=false")
                                     : absl::StrCat("--", f.name);
  }
  absl::string_view value = f.value_name.empty() ? absl::string_view("VALUE") : f.value_name;
  return absl::StrCat("--", f.name, " ", value);
}

// The meaning with its default and, for lists, how to give several.
std::string FlagMeaning(const FlagSpec& f) {
  std::string s(f.help);
  if (f.kind == FlagKind::kList) {
    absl::StrAppend(&s, f.separator == '\0' ? " Repeat for more." : " Repeat or comma-separate.");
  }
  // The default stays on one line: Fill does not break at kNoBreak.
  if (!f.default_value.empty()) absl::StrAppend(&s, " (default:", kNoBreak, f.default_value, ")");
  return s;
}

std::string Unbreak(std::string s) {
  std::replace(s.begin(), s.end(), kNoBreak[0], ' ');
  return s;
}

std::vector<const FlagSpec*> Visible(const CommandSpec& c) {
  std::vector<const FlagSpec*> out;
  for (const FlagSpec& f : c.flags) {
    if (!f.hidden) out.push_back(&f);
  }
  return out;
}

// ---- roff -----------------------------------------------------------------------

std::string RoffEscape(absl::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '\\') {
      out += "\\e";
    } else if (c == '-') {
      out += "\\-";
    } else {
      out += c;
    }
  }
  return out;
}

// One roff line per input line; a leading '.' or '\'' would be a request.
std::string RoffLines(absl::string_view text) {
  std::string out;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    std::string l = RoffEscape(line);
    if (!l.empty() && (l[0] == '.' || l[0] == '\'')) l = "\\&" + l;
    absl::StrAppend(&out, l, "\n");
  }
  return out;
}

std::string RoffParagraphs(absl::string_view text) {
  std::string out;
  for (const std::string& p : Paragraphs(text)) {
    if (IsPreformatted(p)) {
      absl::StrAppend(&out, ".PP\n.nf\n", RoffLines(p), ".fi\n");
    } else {
      absl::StrAppend(&out, ".PP\n", RoffLines(p));
    }
  }
  return out;
}

std::string RoffSynopsis(const CommandSpec& c) {
  std::string out;
  for (absl::string_view line : absl::StrSplit(c.synopsis, '\n', absl::SkipEmpty())) {
    absl::StrAppend(&out, ".B ", RoffEscape(c.FullName()), "\n", RoffLines(line), ".br\n");
  }
  if (c.synopsis.empty()) absl::StrAppend(&out, ".B ", RoffEscape(c.FullName()), "\n.br\n");
  return out;
}

std::string RoffFlags(const CommandSpec& c) {
  std::string out;
  for (const FlagSpec* f : Visible(c)) {
    absl::StrAppend(&out, ".TP\n.B ", RoffEscape(FlagUsage(*f)), "\n",
                    RoffLines(Unbreak(FlagMeaning(*f))));
  }
  return out;
}

}  // namespace

// ---- CommandSpec -------------------------------------------------------------------

std::string CommandSpec::FullName() const {
  return name.empty() ? std::string(program) : absl::StrCat(program, " ", name);
}

const FlagSpec* CommandSpec::Find(absl::string_view flag) const {
  for (const FlagSpec& f : flags) {
    if (f.name == flag) return &f;
  }
  return nullptr;
}

// ---- parsing ----------------------------------------------------------------------

std::string ClosestName(absl::string_view word, std::span<const std::string> candidates) {
  // An abbreviation of exactly one candidate ("hist" for "history").
  const std::string* prefix_of = nullptr;
  int prefixes = 0;
  for (const std::string& c : candidates) {
    if (word.size() >= 2 && absl::StartsWith(c, word)) {
      prefix_of = &c;
      ++prefixes;
    }
  }
  if (prefixes == 1) return *prefix_of;
  std::string best;
  size_t best_distance = std::numeric_limits<size_t>::max();
  for (const std::string& c : candidates) {
    const size_t d = EditDistance(word, c);
    if (d < best_distance) {
      best_distance = d;
      best = c;
    }
  }
  return best_distance <= std::max<size_t>(2, word.size() / 3) ? best : "";
}

absl::Status UnknownFlagError(absl::string_view word, const CommandSpec& command,
                              std::span<const absl::string_view> also_known) {
  std::string name(word.substr(0, word.find('=')));
  std::vector<std::string> known;
  for (const FlagSpec* f : Visible(command)) known.push_back(absl::StrCat("--", f->name));
  for (absl::string_view k : also_known) known.emplace_back(k);
  // "-local": someone used one dash.
  std::string bare = name;
  while (!bare.empty() && bare[0] == '-') bare.erase(0, 1);
  std::vector<std::string> bare_known;
  for (const std::string& k : known) bare_known.push_back(k.substr(2));
  const std::string best = ClosestName(bare, bare_known);
  const std::string what = name.size() >= 2 && name[1] != '-'
                               ? absl::StrCat("unknown flag (flags start with \"--\")")
                               : std::string("unknown flag");
  if (!best.empty()) {
    return Bad(command, name, absl::StrCat(what, "; did you mean --", best, "?"));
  }
  if (known.empty()) return Bad(command, name, absl::StrCat(what, "; this command takes no flags"));
  return Bad(command, name, absl::StrCat(what, "; known: ", absl::StrJoin(known, ", ")));
}

absl::StatusOr<std::optional<FlagValue>> ParseOneFlag(const std::vector<std::string>& args,
                                                      size_t* i, const CommandSpec& command) {
  const std::string& a = args[*i];
  if (a.size() <= 2 || !absl::StartsWith(a, "--")) return std::nullopt;
  const size_t eq = a.find('=');
  const std::string name = a.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
  const FlagSpec* spec = command.Find(name);
  if (spec == nullptr) return std::nullopt;
  FlagValue value;
  if (eq != std::string::npos) {
    absl::Status s = ConvertValue(command, *spec, absl::string_view(a).substr(eq + 1), &value);
    if (!s.ok()) return s;
    return value;
  }
  if (spec->kind == FlagKind::kBool) {
    value.spec = spec;
    value.b = true;
    value.text = "true";
    return value;
  }
  if (*i + 1 >= args.size()) {
    return Bad(command, absl::StrCat("--", name), "needs a value");
  }
  const std::string& next = args[*i + 1];
  if (absl::StartsWith(next, "--") && next.size() > 2) {
    return Bad(command, absl::StrCat("--", name),
               absl::StrFormat("needs a value, but the next word is the flag %s; write "
                               "--%s=%s if that is the value",
                               next, name, next));
  }
  absl::Status s = ConvertValue(command, *spec, next, &value);
  if (!s.ok()) return s;
  ++*i;
  return value;
}

absl::Status ArgumentsAreUtf8(const std::vector<std::string>& args) {
  for (size_t i = 0; i < args.size(); ++i) {
    if (IsUtf8(args[i])) continue;
    const std::string& a = args[i];
    std::string what = absl::StrCat("argument \"", EscapeForTerminal(a), "\"");
    if (const size_t eq = a.find('='); absl::StartsWith(a, "-") && eq != std::string::npos &&
                                       IsUtf8(std::string_view(a).substr(0, eq))) {
      what = absl::StrCat("the value of ", a.substr(0, eq), " (\"",
                          EscapeForTerminal(std::string_view(a).substr(eq + 1)), "\")");
    } else if (i > 0 && absl::StartsWith(args[i - 1], "-") && !absl::StartsWith(a, "-") &&
               IsUtf8(args[i - 1])) {
      absl::StrAppend(&what, " (after ", args[i - 1], ")");
    }
    return absl::InvalidArgumentError(absl::StrCat(
        what, " is not UTF-8; plans, results and the agents' messages are UTF-8 text: give it "
              "in UTF-8 (a path: rename what is not)"));
  }
  return absl::OkStatus();
}

absl::StatusOr<ParsedFlags> ParseFlags(const std::vector<std::string>& args,
                                       const CommandSpec& command) {
  ParsedFlags out;
  if (absl::Status s = ArgumentsAreUtf8(args); !s.ok()) return s;
  for (const std::string& a : args) {
    if (a == "--") break;
    if (IsHelpWord(a)) {
      out.help_ = true;
      return out;
    }
  }
  for (const FlagSpec& f : command.flags) {
    ParsedFlags::Slot& slot = out.slots_[std::string(f.name)];
    slot.value.spec = &f;
    if (f.default_value.empty()) continue;  // false, 0, "" or {}
    absl::Status s = ConvertValue(command, f, f.default_value, &slot.value);
    if (!s.ok()) {
      // A table with a default its own kind refuses: a bug in the table.
      std::fprintf(stderr, "%s: bad default of --%s: %s\n", command.FullName().c_str(),
                   std::string(f.name).c_str(), std::string(s.message()).c_str());
      std::abort();
    }
  }
  bool only_positional = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (only_positional || a == "-" || !absl::StartsWith(a, "-")) {
      out.positional_.push_back(a);
      continue;
    }
    if (a == "--") {
      only_positional = true;
      continue;
    }
    absl::StatusOr<std::optional<FlagValue>> v = ParseOneFlag(args, &i, command);
    if (!v.ok()) return v.status();
    if (!v->has_value()) return UnknownFlagError(a, command);
    FlagValue& value = **v;
    ParsedFlags::Slot& slot = out.slots_[std::string(value.spec->name)];
    if (value.spec->kind == FlagKind::kList && slot.given) {
      slot.value.items.insert(slot.value.items.end(), value.items.begin(), value.items.end());
    } else {
      slot.value = std::move(value);
    }
    slot.given = true;
  }
  return out;
}

// ---- ParsedFlags ----------------------------------------------------------------------

const ParsedFlags::Slot& ParsedFlags::Get(absl::string_view name, FlagKind kind,
                                          FlagKind alt) const {
  auto it = slots_.find(name);
  if (it == slots_.end() ||
      (it->second.value.spec->kind != kind && it->second.value.spec->kind != alt)) {
    std::fprintf(stderr, "bug: flag --%s is not declared with this kind in the command's table\n",
                 std::string(name).c_str());
    std::abort();
  }
  return it->second;
}

bool ParsedFlags::Has(absl::string_view name) const {
  auto it = slots_.find(name);
  if (it == slots_.end()) {
    std::fprintf(stderr, "bug: flag --%s is not declared in the command's table\n",
                 std::string(name).c_str());
    std::abort();
  }
  return it->second.given;
}

bool ParsedFlags::GetBool(absl::string_view name) const {
  return Get(name, FlagKind::kBool, FlagKind::kBool).value.b;
}
int64_t ParsedFlags::GetInt(absl::string_view name) const {
  return Get(name, FlagKind::kInt, FlagKind::kInt).value.i;
}
uint64_t ParsedFlags::GetUint(absl::string_view name) const {
  return Get(name, FlagKind::kUint, FlagKind::kSize).value.u;
}
const std::string& ParsedFlags::GetString(absl::string_view name) const {
  return Get(name, FlagKind::kString, FlagKind::kString).value.text;
}
const std::vector<std::string>& ParsedFlags::GetList(absl::string_view name) const {
  return Get(name, FlagKind::kList, FlagKind::kList).value.items;
}

// ---- help and man pages ----------------------------------------------------------------

std::string FormatUsage(const CommandSpec& command) {
  std::string out;
  bool first = true;
  const std::string full = command.FullName();
  for (absl::string_view line : absl::StrSplit(command.synopsis, '\n', absl::SkipEmpty())) {
    absl::StrAppend(&out, first ? "usage: " : "       ", full, " ", line, "\n");
    first = false;
  }
  if (first) absl::StrAppend(&out, "usage: ", full, "\n");
  return out;
}

std::string FormatCommandHelp(const CommandSpec& command) {
  std::string out = FormatUsage(command);
  if (!command.description.empty()) {
    absl::StrAppend(&out, "\n", FormatParagraphs(command.description, 0));
  }
  std::vector<const FlagSpec*> flags = Visible(command);
  if (!flags.empty()) {
    absl::StrAppend(&out, "\nflags:\n");
    for (const FlagSpec* f : flags) {
      std::string head = absl::StrCat("  ", FlagUsage(*f));
      if (head.size() + 2 > kFlagColumn) {
        absl::StrAppend(&out, head, "\n", std::string(kFlagColumn, ' '));
      } else {
        absl::StrAppend(&out, head, std::string(kFlagColumn - head.size(), ' '));
      }
      absl::StrAppend(&out, Unbreak(Fill(FlagMeaning(*f), kFlagColumn, kFlagColumn, kHelpWidth)),
                      "\n");
    }
    absl::StrAppend(&out, "  -h, --help                show this help\n");
  }
  if (!command.notes.empty()) absl::StrAppend(&out, "\n", FormatParagraphs(command.notes, 0));
  return out;
}

std::string FormatProgramHelp(const ProgramSpec& program) {
  std::string out = absl::StrCat(program.name, ": ", program.summary, "\n\nusage:\n");
  for (const CommandSpec* c : program.commands) {
    for (absl::string_view line : absl::StrSplit(c->synopsis, '\n', absl::SkipEmpty())) {
      absl::StrAppend(&out, "  ", c->FullName(), " ", line, "\n");
    }
  }
  absl::StrAppend(&out, "\ncommands:\n");
  for (const CommandSpec* c : program.commands) {
    std::string head = absl::StrCat("  ", c->name);
    absl::StrAppend(&out, head, std::string(head.size() < 12 ? 12 - head.size() : 1, ' '),
                    Fill(c->summary, 12, 12, kHelpWidth), "\n");
  }
  if (!program.description.empty()) {
    absl::StrAppend(&out, "\n", FormatParagraphs(program.description, 0));
  }
  for (const ManSection& s : program.sections) {
    absl::StrAppend(&out, "\n", absl::AsciiStrToLower(s.title), ":\n", FormatParagraphs(s.text, 2));
  }
  return out;
}

std::string FormatManPage(const ProgramSpec& program, absl::string_view version) {
  std::string upper = absl::AsciiStrToUpper(program.name);
  std::string out = absl::StrFormat(".TH %s %d \"\" \"%s %s\" \"%s\"\n", RoffEscape(upper),
                                    program.man_section, RoffEscape(program.name), version,
                                    program.man_section == 8 ? "System Administration"
                                                             : "User Commands");
  absl::StrAppend(&out, ".SH NAME\n", RoffEscape(program.name), " \\- ",
                  RoffEscape(program.summary), "\n.SH SYNOPSIS\n");
  for (const CommandSpec* c : program.commands) absl::StrAppend(&out, RoffSynopsis(*c));
  if (!program.description.empty()) {
    absl::StrAppend(&out, ".SH DESCRIPTION\n", RoffParagraphs(program.description));
  }
  const bool several = program.commands.size() > 1;
  if (several) {
    absl::StrAppend(&out, ".SH COMMANDS\n");
    for (const CommandSpec* c : program.commands) {
      absl::StrAppend(&out, ".SS \"", RoffEscape(c->FullName()), "\"\n", RoffLines(c->summary),
                      RoffParagraphs(c->description), RoffParagraphs(c->notes));
    }
  } else if (!program.commands.empty()) {
    const CommandSpec* c = program.commands.front();
    if (!c->description.empty()) {
      if (program.description.empty()) absl::StrAppend(&out, ".SH DESCRIPTION\n");
      absl::StrAppend(&out, RoffParagraphs(c->description));
    }
  }
  absl::StrAppend(&out, ".SH OPTIONS\n");
  for (const CommandSpec* c : program.commands) {
    if (several) absl::StrAppend(&out, ".SS \"", RoffEscape(c->FullName()), "\"\n");
    absl::StrAppend(&out, RoffFlags(*c));
    if (!several) absl::StrAppend(&out, RoffParagraphs(c->notes));
  }
  for (const ManSection& s : program.sections) {
    absl::StrAppend(&out, ".SH ", RoffEscape(absl::AsciiStrToUpper(s.title)), "\n",
                    RoffParagraphs(s.text));
  }
  return out;
}

}  // namespace lockstep
