#include "common/net.h"

#include <unistd.h>

#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"

namespace lockstep {

absl::StatusOr<std::pair<std::string, int>> SplitHostPort(std::string_view address) {
  std::string a(address);
  auto bad = [&](const char* why) {
    return absl::InvalidArgumentError(
        absl::StrFormat("address \"%s\" %s; write HOST:PORT, e.g. node01:7070 or [::1]:7070", a,
                        why));
  };
  std::string host;
  std::string port;
  if (!a.empty() && a[0] == '[') {
    size_t close = a.find(']');
    if (close == std::string::npos || close + 1 >= a.size() || a[close + 1] != ':') {
      return bad("has an unclosed [ or no port");
    }
    host = a.substr(1, close - 1);
    port = a.substr(close + 2);
  } else {
    size_t colon = a.rfind(':');
    if (colon == std::string::npos) return bad("has no port");
    host = a.substr(0, colon);
    port = a.substr(colon + 1);
    if (host.find(':') != std::string::npos) return bad("is IPv6 without brackets");
  }
  int p = 0;
  if (host.empty()) return bad("has no host");
  if (!absl::SimpleAtoi(port, &p) || p < 0 || p > 65535) return bad("has a bad port");
  return std::make_pair(host, p);
}

std::string JoinHostPort(const std::string& host, int port) {
  if (host.find(':') != std::string::npos) return absl::StrFormat("[%s]:%d", host, port);
  return absl::StrFormat("%s:%d", host, port);
}

std::string LocalHostName() {
  char host[256] = {0};
  if (::gethostname(host, sizeof(host) - 1) != 0) return "";
  return host;
}

}  // namespace lockstep
