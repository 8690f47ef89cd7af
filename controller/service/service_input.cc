#include "controller/service/service_input.h"

#include <algorithm>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/net.h"
#include "common/utf8.h"

namespace lockstep {

absl::Status CheckPrincipalName(std::string_view name) {
  const bool plain = std::all_of(name.begin(), name.end(), [](char c) {
    return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' ||
           c == '-';
  });
  if (plain && !name.empty() && name.size() <= 64 && name != "." && name != "..") {
    return absl::OkStatus();
  }
  std::string why = "it is empty";
  if (name.size() > 64) {
    why = absl::StrCat("it has ", name.size(), " bytes");
  } else if (!plain) {
    const auto bad = std::find_if(name.begin(), name.end(), [](char c) {
      return !absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' &&
             c != '-';
    });
    const unsigned char b = static_cast<unsigned char>(*bad);
    why = absl::ascii_isgraph(b) || b == ' '
              ? absl::StrFormat("it holds '%c'", static_cast<char>(b))
              : absl::StrFormat("it holds the byte 0x%02x", b);
  } else if (!name.empty()) {
    why = "it is a directory's name";
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "the name \"", absl::CHexEscape(std::string(name)), "\" cannot name a site or reader: ", why,
      "; a name is 1 to 64 of A-Z a-z 0-9 . _ - (it becomes the certificate's CN and the files "
      "site-NAME.pem and site-NAME.key)"));
}

absl::Status CheckStorableText(std::string_view what, std::string_view text) {
  const size_t bad = FirstNonUtf8(text);
  if (bad != std::string_view::npos) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s is not UTF-8 text (byte 0x%02x at offset %d)", std::string(what),
        static_cast<unsigned char>(text[bad]), bad));
  }
  const size_t nul = text.find('\0');
  if (nul != std::string_view::npos) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s holds a NUL byte (at offset %d), which a name or text here cannot hold",
        std::string(what), nul));
  }
  return absl::OkStatus();
}

absl::Status CheckRequestText(std::string_view path,
                              const std::multimap<std::string, std::string>& params) {
  if (absl::Status s = CheckStorableText("the path", path); !s.ok()) return s;
  for (const auto& [name, value] : params) {
    if (absl::Status s = CheckStorableText("a query parameter's name", name); !s.ok()) return s;
    if (absl::Status s = CheckStorableText(
            absl::StrCat("the query parameter ", absl::CHexEscape(name)), value);
        !s.ok()) {
      return s;
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<int> ParseRunsLimit(std::string_view text) {
  int limit = 0;
  if (!absl::SimpleAtoi(absl::string_view(text.data(), text.size()), &limit) || limit < 1 ||
      limit > kMaxRunsListed) {
    return absl::InvalidArgumentError(
        absl::StrCat("the query parameter limit is \"", absl::CHexEscape(std::string(text)),
                     "\": give a number of runs from 1 to ", kMaxRunsListed));
  }
  return limit;
}

absl::StatusOr<ListenAddress> ParseListenAddress(std::string_view text) {
  std::string address(text);
  // An IPv6 address without brackets ("::1:8443", the form --listen took
  // first): split at its last colon.
  if (!address.empty() && address[0] != '[' &&
      std::count(address.begin(), address.end(), ':') > 1) {
    const size_t colon = address.rfind(':');
    address = absl::StrCat("[", address.substr(0, colon), "]", address.substr(colon));
  }
  auto split = SplitHostPort(address);
  if (!split.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--listen ", std::string(text),
                     ": give HOST:PORT, e.g. 127.0.0.1:8443, 0.0.0.0:8443 or [::1]:8443"));
  }
  return ListenAddress{.host = std::move(split->first), .port = split->second};
}

}  // namespace lockstep
