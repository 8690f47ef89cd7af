// libFuzzer target for the IOR and mdtest option translators
// (controller/ior/ior_cli.h, controller/mdtest/mdtest_cli.h). The input is split into
// argv words (on spaces/newlines, as a shell would without quoting); every
// input must produce a translation or an error status, never a crash. No
// file is read (--hostfile gets NotFound). Seeds: tests/fuzz/corpus/ior_cli/.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "controller/ior/ior_cli.h"
#include "controller/mdtest/mdtest_cli.h"

namespace {

void FuzzIorCli(const std::vector<std::string>& argv) {
  lockstep::FileReader no_files = [](const std::string& path) -> absl::StatusOr<std::string> {
    return absl::NotFoundError(path);
  };
  (void)lockstep::ParseIorCommandLine(argv, no_files);
  (void)lockstep::ParseMdtestCommandLine(argv, no_files);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<std::string> argv;
  std::string word;
  for (size_t i = 0; i < size; ++i) {
    char c = static_cast<char>(data[i]);
    if (c == ' ' || c == '\n' || c == '\t') {
      if (!word.empty()) argv.push_back(word);
      word.clear();
    } else {
      word += c;
    }
  }
  if (!word.empty()) argv.push_back(word);
  FuzzIorCli(argv);
  return 0;
}
