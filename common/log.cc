#include "common/log.h"

#include <unistd.h>

#include <atomic>
#include <cstdio>

#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/text_escape.h"

namespace lockstep {
namespace {

absl::Mutex g_mu;
std::string* g_tag ABSL_GUARDED_BY(g_mu) = nullptr;
std::atomic<int> g_min_level{0};

}  // namespace

void SetLogTag(std::string_view tag) {
  absl::MutexLock lock(&g_mu);
  delete g_tag;
  g_tag = new std::string(tag);
}

void SetMinLogLevel(LogLevel level) { g_min_level = static_cast<int>(level); }

void LogLine(LogLevel level, std::string_view message) {
  if (static_cast<int>(level) < g_min_level.load()) return;
  // One entry, one line: a newline or control in a name a request carries
  // (a plan's dir or file name) is escaped, never a forged line of its own.
  const std::string text = EscapeForTerminal(message);
  const char* sev = level == LogLevel::kInfo ? "I" : level == LogLevel::kWarning ? "W" : "E";
  std::string when = absl::FormatTime("%H:%M:%E3S", absl::Now(), absl::LocalTimeZone());
  absl::MutexLock lock(&g_mu);
  std::string line = absl::StrFormat("%s %s %s[%d] %s\n", sev, when,
                                     g_tag ? *g_tag : std::string("lockstep"), ::getpid(),
                                     text);
  std::fwrite(line.data(), 1, line.size(), stderr);
  std::fflush(stderr);
}

}  // namespace lockstep
