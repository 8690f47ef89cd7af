#include "controller/run/run_printer.h"

#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace lockstep {

RunPrinter::RunPrinter(std::function<void(const std::string&)> print, bool ior_text,
                       bool ior_verbose)
    : print_(std::move(print)), ior_text_(ior_text), ior_(ior_verbose) {}

void RunPrinter::Header(const v1::RunRecord& run) { PrintIor(ior_.Header(run)); }

void RunPrinter::AgentsReady(const v1::RunRecord& run) { PrintIor(ior_.AgentsReady(run)); }

void RunPrinter::TestStarted(const v1::TestRecord& test, const v1::PhaseRecord& first) {
  PrintIor(ior_.TestStarted(test, first));
}

void RunPrinter::PhaseDone(const v1::PhaseRecord& phase) { PrintIor(ior_.PhaseDone(phase)); }

void RunPrinter::FilesRemoved(double seconds, uint32_t iter) {
  PrintIor(IorReport::FilesRemoved(seconds, iter));
}

void RunPrinter::TestDone(const v1::TestRecord& test) { PrintIor(ior_.TestDone(test)); }

void RunPrinter::Footer(const v1::RunRecord& run, const std::string& run_dir) {
  PrintIor(ior_.Footer(run, run_dir));
}

void RunPrinter::Note(const std::string& text) { Print(IorReport::Note(text)); }

void RunPrinter::Print(const std::string& text) {
  text_ += text;
  if (print_) print_(text);
}

void RunPrinter::PrintIor(const std::string& text) {
  if (ior_text_) return Print(text);
  std::string own;
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    if (absl::StartsWith(line, "#")) absl::StrAppend(&own, line, "\n");
  }
  if (!own.empty()) Print(own);
}

}  // namespace lockstep
