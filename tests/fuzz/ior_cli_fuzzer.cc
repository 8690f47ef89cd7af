// SLOT: libFuzzer target for the IOR/mdtest option translator
// (controller/ior_cli.h), which a colleague is writing and is not in the tree
// yet. tests/fuzz/CMakeLists.txt builds this file only once that header
// exists; until then the target, its ctest entry and run.sh skip it.
//
// When ior_cli lands: call its entry point in FuzzIorCli below. The input is
// split into argv words (on spaces/newlines, as a shell would without
// quoting); every input must produce a translation or an error status, never
// a crash. Seeds are in tests/fuzz/corpus/ior_cli/.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "controller/ior_cli.h"

namespace {

void FuzzIorCli(const std::vector<std::string>& argv) {
  // TODO(ior_cli): e.g. (void)lockstep::TranslateIorCommandLine(argv);
  (void)argv;
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
