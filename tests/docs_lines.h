// The command lines of the README and docs/, for the tests that check them
// (unit/docs_test.cc: against the flag tables; integration/docs_commands_test.cc:
// run where they can run here).
#ifndef LOCKSTEP_TESTS_DOCS_LINES_H_
#define LOCKSTEP_TESTS_DOCS_LINES_H_

#include <dirent.h>

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/files.h"
#include "gtest/gtest.h"

namespace lockstep::testing {

struct Doc {
  std::string path;  // relative to the source tree
  std::string text;
};

// README.md and docs/*.md of the source tree, by path.
inline std::vector<Doc> ReadDocs() {
  std::vector<std::string> paths = {"README.md"};
  const std::string docs = std::string(LOCKSTEP_SOURCE_DIR) + "/docs";
  if (DIR* d = ::opendir(docs.c_str())) {
    while (const dirent* e = ::readdir(d)) {
      if (absl::EndsWith(e->d_name, ".md")) paths.push_back(absl::StrCat("docs/", e->d_name));
    }
    ::closedir(d);
  }
  std::sort(paths.begin(), paths.end());
  std::vector<Doc> out;
  for (const std::string& p : paths) {
    absl::StatusOr<std::string> text = ReadFileToString(std::string(LOCKSTEP_SOURCE_DIR) + "/" + p);
    EXPECT_TRUE(text.ok()) << p << ": " << text.status();
    if (text.ok()) out.push_back({p, *text});
  }
  return out;
}

// Words as a shell splits them (quotes removed); the rest of the line
// after an unquoted " #" is a comment.
inline std::vector<std::string> Words(const std::string& line) {
  std::vector<std::string> words;
  std::string w;
  bool have = false;
  char quote = 0;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quote != 0) {
      if (c == quote) quote = 0;
      else w += c;
      continue;
    }
    if (c == '\'' || c == '"') {
      quote = c;
      have = true;
    } else if (c == '#' && (i == 0 || line[i - 1] == ' ')) {
      break;
    } else if (c == ' ' || c == '\t') {
      if (have) words.push_back(w);
      w.clear();
      have = false;
    } else {
      w += c;
      have = true;
    }
  }
  if (have) words.push_back(w);
  return words;
}

struct CommandLine {
  std::string where;  // "docs/plans.md:12"
  std::vector<std::string> words;
};

inline bool IsOurProgram(const std::string& w) {
  return w == "lockstep" || w == "lockstep-agent" || absl::EndsWith(w, "/lockstep") ||
         absl::EndsWith(w, "/lockstep-agent");
}

// The command lines of fenced blocks (a trailing backslash joins lines) and
// of inline code spans that start with one of our programs.
inline std::vector<CommandLine> CommandLines(const Doc& doc) {
  std::vector<CommandLine> out;
  std::vector<std::string> lines = absl::StrSplit(doc.text, '\n');
  bool in_block = false, shell = false;
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string where = absl::StrCat(doc.path, ":", i + 1);
    if (absl::StartsWith(lines[i], "```")) {
      // ``` and ```sh blocks are shell; ```toml, ```text and others are not.
      shell = !in_block && (lines[i] == "```" || lines[i] == "```sh" || lines[i] == "```bash");
      in_block = !in_block;
      continue;
    }
    if (in_block && !shell) continue;
    if (in_block) {
      std::string line = lines[i];
      while (absl::EndsWith(line, "\\") && i + 1 < lines.size()) {
        line = absl::StrCat(line.substr(0, line.size() - 1), " ", lines[++i]);
      }
      std::vector<std::string> w = Words(line);
      if (!w.empty() && IsOurProgram(w[0])) out.push_back({where, w});
      continue;
    }
    // An inline span may go on on the next line of its paragraph.
    std::string text = lines[i];
    while (std::count(text.begin(), text.end(), '`') % 2 == 1 && i + 1 < lines.size() &&
           !lines[i + 1].empty() && !absl::StartsWith(lines[i + 1], "```")) {
      text = absl::StrCat(text, " ", lines[++i]);
    }
    std::vector<std::string> spans = absl::StrSplit(text, '`');
    for (size_t k = 1; k < spans.size(); k += 2) {
      std::vector<std::string> w = Words(spans[k]);
      if (w.size() > 1 && IsOurProgram(w[0])) out.push_back({where, w});
    }
  }
  return out;
}

}  // namespace lockstep::testing

#endif  // LOCKSTEP_TESTS_DOCS_LINES_H_
