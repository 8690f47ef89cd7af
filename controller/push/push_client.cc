#include "controller/push/push_client.h"

#include <httplib.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <regex>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/strip.h"
#include "common/files.h"
#include "common/text_escape.h"
#include "controller/results/bundle.h"

namespace lockstep {
namespace {

struct HostPort {
  std::string host;
  int port = 443;
};

absl::StatusOr<HostPort> ParseUrl(const std::string& url) {
  static const std::regex kUrl(R"(^https://([^/:]+|\[[^\]]+\])(:([0-9]+))?/?$)");
  std::smatch m;
  if (!std::regex_match(url, m, kUrl)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "service URL \"", url, "\": give https://HOST[:PORT] (the service speaks HTTPS only)"));
  }
  HostPort hp{.host = m[1]};
  if (m[3].matched && !absl::SimpleAtoi(m[3].str(), &hp.port)) {
    return absl::InvalidArgumentError(absl::StrCat("service URL \"", url, "\": bad port"));
  }
  return hp;
}

// Named by the hash of the content as computed here, never by the bundle's
// own content_sha256 field: a bundle file is input, and that field (say
// "../../.ssh/authorized_keys" with a NUL) would otherwise pick where the
// spool writes, and which file a delivered push removes.
std::string SpoolPath(const std::string& dir, const v1::RunBundle& bundle,
                      const RunVisibility& visibility) {
  std::string tag;
  if (visibility.kind != RunVisibility::kShared) {
    tag = absl::StrCat(".", absl::StrReplaceAll(RunVisibilityText(visibility),
                                                {{" ", "_"}, {":", "-"}}));
  }
  return absl::StrCat(dir, "/", Sha256Hex(bundle.content()), tag, kBundleExtension);
}

}  // namespace

absl::Status CheckServiceUrl(const std::string& url) { return ParseUrl(url).status(); }

PushResult PushBundle(const PushTarget& target, const v1::RunBundle& bundle,
                      const RunVisibility& visibility) {
  PushResult out;
  auto hp = ParseUrl(target.url);
  if (!hp.ok()) {
    out.kind = PushResult::kRefused;
    out.message = std::string(hp.status().message());
    return out;
  }
  httplib::SSLClient client(hp->host, hp->port, target.cert_path, target.key_path);
  client.set_ca_cert_path(target.ca_path);
  client.enable_server_certificate_verification(true);
  client.set_connection_timeout(target.connect_timeout_s, 0);
  client.set_read_timeout(target.read_timeout_s, 0);
  client.set_write_timeout(target.read_timeout_s, 0);
  std::string path = "/api/v1/runs";
  if (visibility.kind != RunVisibility::kShared) {
    // Letters, digits, '-', ':' and one space: only the space needs escaping.
    absl::StrAppend(&path, "?visibility=",
                    absl::StrReplaceAll(RunVisibilityText(visibility), {{" ", "%20"}}));
  }
  auto res = client.Post(path, bundle.SerializeAsString(), "application/x-lockstep-bundle");
  if (!res) {
    out.message = absl::StrCat(target.url, " cannot be reached: ",
                               httplib::to_string(res.error()));
    if (res.error() == httplib::Error::SSLServerVerification) {
      out.kind = PushResult::kRefused;
      absl::StrAppend(&out.message, " (the service's certificate does not chain to ",
                      target.ca_path, ")");
    }
    return out;
  }
  out.http_status = res->status;
  // The service's words, for a terminal: its controls escaped.
  out.message = EscapeForTerminal(std::string(absl::StripTrailingAsciiWhitespace(res->body)));
  if (res->status == 201) {
    out.kind = PushResult::kStored;
  } else if (res->status == 200) {
    out.kind = PushResult::kAlreadyStored;
  } else if (res->status >= 500) {
    out.kind = PushResult::kUnreachable;
  } else {
    out.kind = PushResult::kRefused;
  }
  return out;
}

absl::StatusOr<std::string> ServiceGet(const PushTarget& target, const std::string& path) {
  auto hp = ParseUrl(target.url);
  if (!hp.ok()) return hp.status();
  httplib::SSLClient client(hp->host, hp->port, target.cert_path, target.key_path);
  client.set_ca_cert_path(target.ca_path);
  client.enable_server_certificate_verification(true);
  client.set_connection_timeout(target.connect_timeout_s, 0);
  client.set_read_timeout(target.read_timeout_s, 0);
  auto res = client.Get(path.c_str());
  if (!res) {
    return absl::UnavailableError(absl::StrCat(target.url, " cannot be reached: ",
                                               httplib::to_string(res.error())));
  }
  if (res->status == 200) return res->body;
  const std::string what =
      absl::StrCat(target.url, path, ": ", res->status, " ",
                   EscapeForTerminal(std::string(absl::StripTrailingAsciiWhitespace(res->body))));
  if (res->status >= 500) return absl::UnavailableError(what);
  if (res->status == 404) return absl::NotFoundError(what);
  if (res->status == 401 || res->status == 403) return absl::PermissionDeniedError(what);
  return absl::InvalidArgumentError(what);
}

absl::Status SpoolBundle(const std::string& spool_dir, const v1::RunBundle& bundle,
                         const RunVisibility& visibility) {
  std::error_code ec;
  std::filesystem::create_directories(spool_dir, ec);
  if (ec) {
    return absl::UnavailableError(absl::StrCat("cannot create the spool ", spool_dir, ": ",
                                               ec.message()));
  }
  return WriteBundleFile(SpoolPath(spool_dir, bundle, visibility), bundle);
}

RunVisibility SpooledVisibility(const std::string& path) {
  // SHA256[.TAG].lsbundle, TAG as SpoolPath writes it.
  const std::string name = std::filesystem::path(path).filename().string();
  const size_t first = name.find('.');
  const size_t ext = name.size() - std::min(name.size(), std::strlen(kBundleExtension));
  if (first == std::string::npos || first >= ext) return RunVisibility{};
  std::string tag = name.substr(first + 1, ext - first - 1);
  // "embargo_2027-03-01T12-00-00Z": the space and the time's colons back.
  tag = absl::StrReplaceAll(tag, {{"_", " "}});
  if (const size_t t = tag.find('T'); t != std::string::npos) {
    for (size_t i = t; i < tag.size(); ++i) {
      if (tag[i] == '-') tag[i] = ':';
    }
  }
  auto parsed = ParseRunVisibility(tag);
  return parsed.ok() ? *parsed : RunVisibility{};
}

std::vector<std::string> SpooledBundles(const std::string& spool_dir) {
  std::vector<std::pair<std::filesystem::file_time_type, std::string>> found;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(spool_dir, ec)) {
    if (e.path().extension() == kBundleExtension) {
      found.emplace_back(e.last_write_time(ec), e.path().string());
    }
  }
  std::sort(found.begin(), found.end());
  std::vector<std::string> out;
  for (auto& [t, p] : found) out.push_back(std::move(p));
  return out;
}

PushResult PushOrSpool(const PushTarget& target, const std::string& spool_dir,
                       const v1::RunBundle& bundle, const RunVisibility& visibility) {
  PushResult r = PushBundle(target, bundle, visibility);
  const std::string path = SpoolPath(spool_dir, bundle, visibility);
  std::error_code ec;
  if (r.delivered()) {
    std::filesystem::remove(path, ec);
  } else if (r.kind == PushResult::kUnreachable) {
    absl::Status s = SpoolBundle(spool_dir, bundle, visibility);
    absl::StrAppend(&r.message, s.ok() ? absl::StrCat("; spooled as ", path,
                                                      " (the next push or run sends it)")
                                       : absl::StrCat("; and NOT spooled: ", s.message()));
  }
  return r;
}

}  // namespace lockstep
