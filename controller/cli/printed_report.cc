#include "controller/cli/printed_report.h"

#include <unistd.h>

#include <cstdio>
#include <functional>

namespace lockstep {

void PrintToStdout(const std::string& text) {
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::fflush(stdout);
}

PrintedReport::PrintedReport(const v1::RunRecord& fields, bool to_stdout)
    : text_(to_stdout ? std::function<void(const std::string&)>(PrintToStdout) : nullptr),
      observers_(fields, &text_) {}

void PrintedReport::Attach(RunOptions* options) {
  options->observer = observer();
  options->report = &text_;
}

void ShowProgress(RunOptions* options, bool lines_otherwise) {
  if (::isatty(2)) {
    options->progress = [](const std::string& s) {
      std::fprintf(stderr, "\r\033[K%s", s.c_str());
      std::fflush(stderr);
    };
  } else if (lines_otherwise) {
    options->print_progress_lines = [](const std::string& s) {
      std::fprintf(stderr, "progress: %s\n", s.c_str());
    };
  }
}

}  // namespace lockstep
