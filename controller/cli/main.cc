// lockstep: the controller CLI. Finds the subcommand's CommandSpec
// (controller/cli/command_specs.cc) and calls its handler
// (controller/cli/command_handlers.h); owns the process-wide parts: the
// SIGINT/SIGTERM flag and the out-of-memory boundary.
#include <malloc.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <new>
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "common/build_info.h"
#include "common/flags.h"
#include "common/log.h"
#include "controller/cli/command_handlers.h"
#include "controller/cli/command_specs.h"
#include "controller/cli/exit_codes.h"

namespace lockstep {
namespace {

std::atomic<bool> g_interrupted{false};

// The first SIGINT/SIGTERM asks the run to stop: it aborts the phase,
// removes files for at most a few hundred ms, writes run.json and exits 130
// within a second. A second one exits at once; the agents then remove the
// run's files when its lease expires.
void OnSignal(int) {
  if (!g_interrupted.exchange(true)) return;
  static constexpr char kMessage[] =
      "\nlockstep: interrupted again: exiting now; the agents remove the run's files when its "
      "lease expires\n";
  (void)!::write(2, kMessage, sizeof(kMessage) - 1);
  ::_exit(kExitInterrupted);
}

void HandleSignals() {
  struct sigaction sa = {};
  sa.sa_handler = OnSignal;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

int Main(int argc, char** argv) {
  SetLogTag("lockstep");
  std::vector<std::string> words(argv, argv + argc);
  std::string command_line = absl::StrJoin(words, " ");
  if (argc < 2) {
    std::fputs(FormatProgramHelp(LockstepProgram()).c_str(), stderr);
    return kExitUsage;
  }
  const std::string cmd = argv[1];
  const std::vector<std::string> rest(argv + 2, argv + argc);
  if (cmd == "--help" || cmd == "-h") return HelpCommand(CommandCall{.args = rest});
  if (cmd == "--version") {
    std::printf("%s\n", VersionLine("lockstep").c_str());
    return kExitOk;
  }
  const CommandSpec* spec = FindLockstepCommand(cmd);
  if (spec == nullptr) {
    std::fprintf(stderr, "lockstep: %s\n", UnknownCommand(cmd).c_str());
    return kExitUsage;
  }
  if (spec->handler == nullptr) {
    std::fprintf(stderr, "lockstep: command %s has a table but no handler\n", cmd.c_str());
    return kExitFailure;
  }
  return spec->handler(CommandCall{.args = rest,
                                   .command_line = command_line,
                                   .interrupted = &g_interrupted,
                                   .watch_signals = HandleSignals});
}

constexpr char kOutOfMemory[] =
    "lockstep: out of memory (std::bad_alloc): this host (or its ulimit -v) cannot hold what "
    "was asked; lower the plan's sizes, phases or sweep, or raise the memory limit\n";

// A std::bad_alloc on another thread than main's ends here too, with the
// same message and code, not as an abort (exit 134).
[[noreturn]] void OnTerminate() {
  if (std::exception_ptr e = std::current_exception()) {
    try {
      std::rethrow_exception(e);
    } catch (const std::bad_alloc&) {
      (void)!::write(2, kOutOfMemory, sizeof(kOutOfMemory) - 1);
      ::_exit(kExitOutOfMemory);
    } catch (...) {
    }
  }
  std::abort();
}

// glibc gives a thread that meets contention in malloc an arena of its own,
// up to 8 per core, and the controller's gRPC threads each fill and keep one:
// free memory no other thread reuses. Four arenas cut the RSS after 10 phases
// at 1,024 agents from 148-155 MB to 123-124 MB on 2 cores, the CPU per phase
// unchanged within noise (tests/bench/README.md, section 26). MALLOC_ARENA_MAX
// or a glibc.malloc.arena_max tunable in the environment still decides.
constexpr int kMallocArenas = 4;

void LimitMallocArenas() {
  const char* tunables = std::getenv("GLIBC_TUNABLES");
  if (std::getenv("MALLOC_ARENA_MAX") != nullptr ||
      (tunables != nullptr && std::strstr(tunables, "arena_max") != nullptr)) {
    return;
  }
  ::mallopt(M_ARENA_MAX, kMallocArenas);
}

// main's boundary: no std::bad_alloc escapes (our code does not throw;
// allocation can).
int GuardedMain(int argc, char** argv) {
  std::set_terminate(OnTerminate);
  // A peer that closes (a results service answering 413, a reader of
  // stdout such as `head`) makes a write fail with EPIPE, handled where it
  // happens, instead of killing the process before it spools or cleans up.
  ::signal(SIGPIPE, SIG_IGN);
  LimitMallocArenas();
  try {
    return Main(argc, argv);
  } catch (const std::bad_alloc&) {
    (void)!::write(2, kOutOfMemory, sizeof(kOutOfMemory) - 1);
    return kExitOutOfMemory;
  }
}

}  // namespace
}  // namespace lockstep

int main(int argc, char** argv) { return lockstep::GuardedMain(argc, argv); }
