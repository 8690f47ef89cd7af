// Minimal logging to stderr. This Debian abseil (20220623) has no absl/log;
// when it does, replace these with LOG(INFO) and friends.
#ifndef LOCKSTEP_COMMON_LOG_H_
#define LOCKSTEP_COMMON_LOG_H_

#include <string>
#include <string_view>

#include "absl/strings/str_format.h"

namespace lockstep {

enum class LogLevel { kInfo, kWarning, kError };

// Sets the program name shown in each line ("lockstep-agent").
void SetLogTag(std::string_view tag);
// Lines below `level` are dropped (default kInfo).
void SetMinLogLevel(LogLevel level);
void LogLine(LogLevel level, std::string_view message);

template <typename... Args>
void LogInfo(const absl::FormatSpec<Args...>& format, const Args&... args) {
  LogLine(LogLevel::kInfo, absl::StrFormat(format, args...));
}
template <typename... Args>
void LogWarning(const absl::FormatSpec<Args...>& format, const Args&... args) {
  LogLine(LogLevel::kWarning, absl::StrFormat(format, args...));
}
template <typename... Args>
void LogError(const absl::FormatSpec<Args...>& format, const Args&... args) {
  LogLine(LogLevel::kError, absl::StrFormat(format, args...));
}

}  // namespace lockstep

#endif  // LOCKSTEP_COMMON_LOG_H_
