// FormatBashCompletion (common/flags.h): a bash completion script rendered
// from a program's command tables, like its help and man page.
#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/flags.h"

namespace lockstep {
namespace {

bool IsPlainWord(absl::string_view w) {
  if (w.empty()) return false;
  for (char c : w) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '.' && c != '-') {
      return false;
    }
  }
  return true;
}

bool IsLowerWord(absl::string_view w) {
  return IsPlainWord(w) && absl::ascii_islower(static_cast<unsigned char>(w[0])) &&
         std::none_of(w.begin(), w.end(),
                      [](char c) { return absl::ascii_isupper(static_cast<unsigned char>(c)); });
}

// How a flag's value completes: 'd' directories, 'f' files, 'w' the words
// put in *words, 0 nothing (a number, a name, a date).
char ValueCompletion(const FlagSpec& f, std::vector<std::string>* words) {
  const absl::string_view v = f.value_name;
  if (absl::EndsWith(v, "DIR")) return 'd';
  if (absl::EndsWith(v, "FILE") || absl::EndsWith(v, ".toml") || absl::EndsWith(v, ".json")) {
    return 'f';
  }
  std::vector<std::string> parts = absl::StrSplit(v, '|');
  if (parts.size() > 1 && std::all_of(parts.begin(), parts.end(), IsLowerWord)) {
    *words = std::move(parts);
    return 'w';
  }
  return 0;
}

// The key a command has in the script: its name, or the program's for the
// one unnamed command of a program without subcommands.
std::string CompletionKey(const ProgramSpec& program, const CommandSpec& c) {
  return std::string(c.name.empty() ? program.name : c.name);
}

// "run --out"|"run --tls_dir"|...: the case pattern of (command, flag) pairs.
std::string CasePattern(const std::vector<std::string>& pairs) {
  std::vector<std::string> quoted;
  for (const std::string& p : pairs) quoted.push_back(absl::StrCat("\"", p, "\""));
  return absl::StrJoin(quoted, "|");
}

// The literal first words of the synopsis lines ("init", "issue"), and
// whether a positional word is a command name ("[COMMAND]").
std::vector<std::string> SynopsisWords(const CommandSpec& c, bool* takes_command) {
  std::vector<std::string> out;
  *takes_command = false;
  for (absl::string_view line : absl::StrSplit(c.synopsis, '\n', absl::SkipEmpty())) {
    std::vector<absl::string_view> tokens = absl::StrSplit(line, ' ', absl::SkipEmpty());
    for (absl::string_view t : tokens) {
      if (absl::StripSuffix(absl::StripPrefix(t, "["), "]") == "COMMAND") *takes_command = true;
    }
    if (!tokens.empty() && IsLowerWord(tokens[0]) &&
        std::find(out.begin(), out.end(), tokens[0]) == out.end()) {
      out.emplace_back(tokens[0]);
    }
  }
  return out;
}

std::string CompletionValueFunction(const ProgramSpec& program, const std::string& fn) {
  std::vector<std::string> pairs;
  for (const CommandSpec* c : program.commands) {
    for (const FlagSpec& f : c->flags) {
      if (f.kind != FlagKind::kBool && IsPlainWord(f.name)) {
        pairs.push_back(absl::StrCat(CompletionKey(program, *c), " --", f.name));
      }
    }
  }
  std::string out = absl::StrCat("# Does flag $2 of command $1 take a value?\n", fn,
                                 "_takes_value() {\n");
  if (!pairs.empty()) {
    absl::StrAppend(&out, "  case \"$1 $2\" in\n    ", CasePattern(pairs), ") return 0 ;;\n",
                    "  esac\n");
  }
  absl::StrAppend(&out, "  return 1\n}\n\n");
  return out;
}

// The case branches that complete the value of the flag in $prev.
std::string CompletionValueCases(const ProgramSpec& program) {
  std::vector<std::string> dirs, files, branches;
  for (const CommandSpec* c : program.commands) {
    for (const FlagSpec& f : c->flags) {
      if (f.kind == FlagKind::kBool || f.hidden || !IsPlainWord(f.name)) continue;
      const std::string pair = absl::StrCat(CompletionKey(program, *c), " --", f.name);
      std::vector<std::string> words;
      switch (ValueCompletion(f, &words)) {
        case 'd': dirs.push_back(pair); break;
        case 'f': files.push_back(pair); break;
        case 'w':
          branches.push_back(absl::StrCat("      \"", pair, "\") COMPREPLY=($(compgen -W \"",
                                          absl::StrJoin(words, " "), "\" -- \"$cur\")) ;;\n"));
          break;
        default: break;
      }
    }
  }
  std::string out;
  if (!dirs.empty()) {
    absl::StrAppend(&out, "      ", CasePattern(dirs), ")\n",
                    "        compopt -o filenames 2>/dev/null\n",
                    "        mapfile -t COMPREPLY < <(compgen -d -- \"$cur\") ;;\n");
  }
  if (!files.empty()) {
    absl::StrAppend(&out, "      ", CasePattern(files), ")\n",
                    "        compopt -o filenames 2>/dev/null\n",
                    "        mapfile -t COMPREPLY < <(compgen -f -- \"$cur\") ;;\n");
  }
  for (const std::string& b : branches) absl::StrAppend(&out, b);
  return out;
}

// The case branches that list each command's flags, and those that
// complete its first positional word.
std::string CompletionFlagCases(const ProgramSpec& program, std::string* positional_cases) {
  std::vector<std::string> command_names;
  for (const CommandSpec* c : program.commands) {
    if (IsPlainWord(c->name)) command_names.emplace_back(c->name);
  }
  std::string out;
  for (const CommandSpec* c : program.commands) {
    const std::string key = CompletionKey(program, *c);
    if (!IsPlainWord(key)) continue;
    std::vector<std::string> flags;
    for (const FlagSpec& f : c->flags) {
      if (!f.hidden && IsPlainWord(f.name)) flags.push_back(absl::StrCat("--", f.name));
    }
    flags.push_back("--help");
    absl::StrAppend(&out, "      \"", key, "\") COMPREPLY=($(compgen -W \"",
                    absl::StrJoin(flags, " "), "\" -- \"$cur\")) ;;\n");
    bool takes_command = false;
    std::vector<std::string> words = SynopsisWords(*c, &takes_command);
    if (takes_command) words.insert(words.end(), command_names.begin(), command_names.end());
    if (!words.empty()) {
      absl::StrAppend(positional_cases, "    \"", key, " 0\")\n      COMPREPLY=($(compgen -W \"",
                      absl::StrJoin(words, " "), "\" -- \"$cur\"))\n      return 0 ;;\n");
    }
  }
  return out;
}

}  // namespace

std::string FormatBashCompletion(const ProgramSpec& program) {
  const std::string name(program.name);
  std::string fn = "_" + name;
  std::replace_if(fn.begin(), fn.end(), [](char c) { return c == '-' || c == '.'; }, '_');
  const bool subcommands = !(program.commands.size() == 1 && program.commands[0]->name.empty());
  std::vector<std::string> command_names;
  for (const CommandSpec* c : program.commands) {
    if (IsPlainWord(c->name)) command_names.emplace_back(c->name);
  }
  std::string positional_cases;
  const std::string flag_cases = CompletionFlagCases(program, &positional_cases);
  std::string out = absl::StrCat(
      "# bash completion for ", name, ", generated from its command tables (common/flags.h,\n",
      "# FormatBashCompletion); do not edit. Source it, or install it as\n",
      "# /usr/share/bash-completion/completions/", name, ".\n\n");
  absl::StrAppend(&out, CompletionValueFunction(program, fn));
  absl::StrAppend(&out, fn, "() {\n",
                  "  local cur=${COMP_WORDS[COMP_CWORD]} prev= cmd=",
                  subcommands ? "" : name, " w i npos=0\n",
                  "  COMPREPLY=()\n",
                  "  ((COMP_CWORD > 0)) && prev=${COMP_WORDS[COMP_CWORD-1]}\n",
                  "  # --flag=VALUE: bash splits the word at '=' (COMP_WORDBREAKS).\n",
                  "  [[ $cur == \"=\" ]] && cur=\n",
                  "  [[ $prev == \"=\" ]] && ((COMP_CWORD > 1)) && prev=${COMP_WORDS[COMP_CWORD-2]}\n",
                  "  for ((i = 1; i < COMP_CWORD; i++)); do\n",
                  "    w=${COMP_WORDS[i]}\n",
                  "    if [[ -z $cmd ]]; then\n",
                  "      [[ $w != -* ]] && cmd=$w\n",
                  "    elif [[ $w == -* ]]; then\n",
                  "      if ", fn, "_takes_value \"$cmd\" \"$w\"; then\n",
                  "        i=$((i + 1))\n",
                  "        [[ ${COMP_WORDS[i]} == \"=\" ]] && i=$((i + 1))\n",
                  "      fi\n",
                  "    else\n",
                  "      npos=$((npos + 1))\n",
                  "    fi\n",
                  "  done\n");
  absl::StrAppend(&out, "  if [[ -z $cmd ]]; then\n",
                  "    COMPREPLY=($(compgen -W \"", absl::StrJoin(command_names, " "),
                  " --help\" -- \"$cur\"))\n",
                  "    return 0\n",
                  "  fi\n",
                  "  if [[ $prev == -* ]] && ", fn, "_takes_value \"$cmd\" \"$prev\"; then\n",
                  "    case \"$cmd $prev\" in\n", CompletionValueCases(program),
                  "    esac\n",
                  "    return 0\n",
                  "  fi\n",
                  "  if [[ $cur == -* ]]; then\n",
                  "    case \"$cmd\" in\n", flag_cases,
                  "    esac\n",
                  "    return 0\n",
                  "  fi\n");
  if (!positional_cases.empty()) {
    absl::StrAppend(&out, "  case \"$cmd $npos\" in\n", positional_cases, "  esac\n");
  }
  absl::StrAppend(&out, "  compopt -o filenames 2>/dev/null\n",
                  "  mapfile -t COMPREPLY < <(compgen -f -- \"$cur\")\n",
                  "}\n",
                  "complete -F ", fn, " ", name, "\n");
  return out;
}

}  // namespace lockstep
