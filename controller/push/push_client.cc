#include "controller/push/push_client.h"

#include <httplib.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <memory>
#include <regex>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/strip.h"
#include "common/files.h"
#include "common/status_macros.h"
#include "common/text_escape.h"
#include "controller/results/bundle.h"

namespace lockstep {
namespace {

struct HostPort {
  std::string host;
  int port = 443;
};

absl::StatusOr<HostPort> ParseUrl(const std::string& url) {
  static const std::regex kUrl(R"(^https://([^/:\[\]]+|\[([0-9A-Fa-f:.]+)\])(:([0-9]+))?/?$)");
  std::smatch m;
  if (!std::regex_match(url, m, kUrl)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "service URL \"", url,
        "\": give https://HOST[:PORT] or https://[IPv6]:PORT (the service speaks HTTPS only)"));
  }
  // An IPv6 address without its brackets: what the resolver takes.
  HostPort hp{.host = m[2].matched ? m[2].str() : m[1].str()};
  if (m[4].matched && (!absl::SimpleAtoi(m[4].str(), &hp.port) || hp.port < 1 || hp.port > 65535)) {
    return absl::InvalidArgumentError(
        absl::StrCat("service URL \"", url, "\": port ", m[4].str(), " is not 1 to 65535"));
  }
  return hp;
}

// A client of the service as the site of `target`, its certificate checked
// against target.ca_path.
std::unique_ptr<httplib::SSLClient> ClientFor(const PushTarget& target, const HostPort& hp) {
  auto client =
      std::make_unique<httplib::SSLClient>(hp.host, hp.port, target.cert_path, target.key_path);
  client->set_ca_cert_path(target.ca_path);
  client->enable_server_certificate_verification(true);
  client->set_connection_timeout(target.connect_timeout_s, 0);
  client->set_read_timeout(target.read_timeout_s, 0);
  client->set_write_timeout(target.read_timeout_s, 0);
  return client;
}

// The service's answer to a GET or POST that got one, as a status: OK on
// 200; Unavailable for 5xx; NotFound, PermissionDenied or InvalidArgument
// with its text.
absl::Status AnswerStatus(const PushTarget& target, const std::string& path,
                          const httplib::Response& res) {
  if (res.status == 200) return absl::OkStatus();
  const std::string what =
      absl::StrCat(target.url, path, ": ", res.status, " ",
                   EscapeForTerminal(std::string(absl::StripTrailingAsciiWhitespace(res.body))));
  if (res.status >= 500) return absl::UnavailableError(what);
  if (res.status == 404) return absl::NotFoundError(what);
  if (res.status == 401 || res.status == 403) return absl::PermissionDeniedError(what);
  return absl::InvalidArgumentError(what);
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
  if (bundle.ByteSizeLong() > kMaxBundleBytes) {
    // The service would answer 413 and close while the upload goes on.
    out.kind = PushResult::kRefused;
    out.message = absl::StrCat("the bundle is ", bundle.ByteSizeLong() >> 20,
                               " MiB, more than the ", kMaxBundleBytes >> 20,
                               " MiB a results service takes");
    return out;
  }
  std::string path = "/api/v1/runs";
  if (visibility.kind != RunVisibility::kShared) {
    // Letters, digits, '-', ':' and one space: only the space needs escaping.
    absl::StrAppend(&path, "?visibility=",
                    absl::StrReplaceAll(RunVisibilityText(visibility), {{" ", "%20"}}));
  }
  auto res = ClientFor(target, *hp)->Post(path, bundle.SerializeAsString(),
                                         "application/x-lockstep-bundle");
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
  auto res = ClientFor(target, *hp)->Get(path.c_str());
  if (!res) {
    return absl::UnavailableError(absl::StrCat(target.url, " cannot be reached: ",
                                               httplib::to_string(res.error())));
  }
  RETURN_IF_ERROR(AnswerStatus(target, path, *res));
  return res->body;
}

absl::Status SetRunVisibility(const PushTarget& target, const std::string& run_id,
                              const RunVisibility& visibility) {
  auto hp = ParseUrl(target.url);
  if (!hp.ok()) return hp.status();
  const std::string path = absl::StrCat("/api/v1/runs/", run_id, "/visibility");
  auto res = ClientFor(target, *hp)->Post(path, RunVisibilityText(visibility), "text/plain");
  if (!res) {
    return absl::UnavailableError(absl::StrCat(target.url, " cannot be reached: ",
                                               httplib::to_string(res.error())));
  }
  return AnswerStatus(target, path, *res);
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
    r.spooled = s.ok();
    absl::StrAppend(&r.message, s.ok() ? absl::StrCat("; spooled as ", path,
                                                      " (the next push or run sends it)")
                                       : absl::StrCat("; and NOT spooled: ", s.message()));
  }
  return r;
}

absl::StatusOr<std::string> SetAsideRefused(const std::string& spooled_path) {
  const std::filesystem::path from(spooled_path);
  const std::filesystem::path dir = from.parent_path() / kRefusedSpoolDir;
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  const std::filesystem::path to = dir / from.filename();
  if (!ec) std::filesystem::rename(from, to, ec);
  if (ec) {
    return absl::UnavailableError(
        absl::StrCat("cannot move ", spooled_path, " to ", dir.string(), ": ", ec.message()));
  }
  return to.string();
}

}  // namespace lockstep
