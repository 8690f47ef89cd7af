// A plain main() for compilers without libFuzzer (g++): runs a fuzz target's
// LLVMFuzzerTestOneInput over every file named on the command line or found
// in the directories named, so the seed corpus is exercised in every build.
//
// With --mutate N it is a small mutation fuzzer of its own (no coverage
// feedback): N inputs made from the corpus by random edits (byte flips,
// deletions, duplications, splices, dictionary tokens and edge numbers),
// each run in a forked child with a 10 s alarm; a child killed by a signal
// is a crash, one killed by the alarm a hang. Crashers are written to
// --crashers DIR (crash-N, hang-N) for the corpus. Prints
// "N mutated input(s): C crash(es), H hang(s)" and exits 1 when C + H > 0.
//
//   dlio_fuzzer --mutate 1000 --seed 1 --dict tests/fuzz/dlio.dict \
//       --crashers /tmp/crashers tests/fuzz/corpus/dlio
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

std::string ReadAll(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// libFuzzer's dictionary format: one "token" (or name="token") a line.
std::vector<std::string> ReadDict(const std::string& path) {
  std::vector<std::string> out;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    const size_t a = line.find('"'), b = line.rfind('"');
    if (line.empty() || line[0] == '#' || a == std::string::npos || b <= a) continue;
    out.push_back(line.substr(a + 1, b - a - 1));
  }
  return out;
}

class Mutator {
 public:
  Mutator(uint64_t seed, std::vector<std::string> corpus, std::vector<std::string> dict)
      : rng_(seed), corpus_(std::move(corpus)), dict_(std::move(dict)) {
    for (const char* edge : {"0", "-1", "4294967295", "18446744073709551615", "9223372036854775807",
                             "8p", "1g", "\"..\"", "\".\"", "\"\"", "\"\\u0000\"", "1e308", "[]",
                             "[1, 2, 3]", "\n", " ", "'", "\"", "{", "}", "-", ":", "="}) {
      dict_.push_back(edge);
    }
  }

  std::string Next() {
    std::string s = corpus_[Pick(corpus_.size())];
    const size_t edits = 1 + Pick(8);
    for (size_t i = 0; i < edits; ++i) Edit(&s);
    return s;
  }

 private:
  size_t Pick(size_t n) { return n == 0 ? 0 : std::uniform_int_distribution<size_t>(0, n - 1)(rng_); }

  void Edit(std::string* s) {
    const size_t at = Pick(s->size() + 1);
    switch (Pick(6)) {
      case 0:  // flip a byte
        if (!s->empty()) (*s)[Pick(s->size())] ^= static_cast<char>(1u << Pick(8));
        break;
      case 1:  // delete a range
        if (!s->empty()) s->erase(at > 0 ? at - 1 : 0, 1 + Pick(32));
        break;
      case 2:  // duplicate a range
        if (!s->empty()) s->insert(at, s->substr(Pick(s->size()), 1 + Pick(64)));
        break;
      case 3:  // splice another input
        s->insert(at, corpus_[Pick(corpus_.size())].substr(0, 1 + Pick(256)));
        break;
      default:  // a dictionary token or an edge value
        s->insert(at, dict_[Pick(dict_.size())]);
        break;
    }
  }

  std::mt19937_64 rng_;
  std::vector<std::string> corpus_;
  std::vector<std::string> dict_;
};

// 0 ran, 1 crashed, 2 hung.
int RunForked(const std::string& input) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::alarm(10);
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(input.data()), input.size());
    ::_exit(0);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
  }
  if (WIFSIGNALED(status)) return WTERMSIG(status) == SIGALRM ? 2 : 1;
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}

int Mutate(uint64_t runs, uint64_t seed, const std::string& dict, const std::string& crashers,
           const std::vector<std::filesystem::path>& files) {
  std::vector<std::string> corpus;
  for (const auto& f : files) corpus.push_back(ReadAll(f));
  Mutator m(seed, corpus, dict.empty() ? std::vector<std::string>{} : ReadDict(dict));
  uint64_t crashes = 0, hangs = 0;
  for (uint64_t i = 0; i < runs; ++i) {
    const std::string input = m.Next();
    const int r = RunForked(input);
    if (r == 0) continue;
    (r == 1 ? crashes : hangs)++;
    if (!crashers.empty()) {
      std::filesystem::create_directories(crashers);
      std::ofstream(std::filesystem::path(crashers) /
                        ((r == 1 ? "crash-" : "hang-") + std::to_string(i)),
                    std::ios::binary)
          << input;
    }
  }
  std::printf("%llu mutated input(s) (seed %llu): %llu crash(es), %llu hang(s)\n",
              static_cast<unsigned long long>(runs), static_cast<unsigned long long>(seed),
              static_cast<unsigned long long>(crashes), static_cast<unsigned long long>(hangs));
  return crashes + hangs > 0 ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::filesystem::path> files;
  uint64_t mutate = 0, seed = 1;
  std::string dict, crashers;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 < argc && (a == "--mutate" || a == "--seed" || a == "--dict" || a == "--crashers")) {
      const std::string v = argv[++i];
      if (a == "--mutate") mutate = std::strtoull(v.c_str(), nullptr, 10);
      if (a == "--seed") seed = std::strtoull(v.c_str(), nullptr, 10);
      if (a == "--dict") dict = v;
      if (a == "--crashers") crashers = v;
      continue;
    }
    std::filesystem::path p(a);
    if (std::filesystem::is_directory(p)) {
      for (const auto& e : std::filesystem::recursive_directory_iterator(p)) {
        if (e.is_regular_file()) files.push_back(e.path());
      }
    } else {
      files.push_back(p);
    }
  }
  if (files.empty()) {
    std::fprintf(stderr, "usage: %s [--mutate N [--seed S] [--dict F] [--crashers DIR]] "
                         "CORPUS_DIR|FILE...: no input found\n", argv[0]);
    return 2;
  }
  if (mutate > 0) return Mutate(mutate, seed, dict, crashers, files);
  for (const auto& f : files) {
    const std::string data = ReadAll(f);
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(data.data()), data.size());
  }
  std::printf("%zu input(s) ran without a crash\n", files.size());
  return 0;
}
