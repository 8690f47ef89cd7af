#include "controller/results/site_file.h"

#include <cmath>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/files.h"
#include "common/status_macros.h"
#include "controller/plan/table_reader.h"

#include <toml++/toml.h>

namespace lockstep {
namespace {

const std::vector<std::string> kSiteKeys = {
    "site",          "system",       "interconnect", "interconnect_speed", "storage_media",
    "server_nodes",  "client_nodes", "file_system",  "notes",              "extra"};

constexpr char kRateUnits[] = "b/s, Kb/s, Mb/s, Gb/s or Tb/s (bits), e.g. \"100Gb/s\"";

absl::StatusOr<toml::table> ParseSiteTable(std::string_view text, const std::string& origin) {
  try {
    return toml::parse(text, std::string(origin));
  } catch (const toml::parse_error& e) {
    const auto& b = e.source().begin;
    return absl::InvalidArgumentError(absl::StrFormat("%s:%d:%d: malformed TOML: %s", origin,
                                                      b.line, b.column,
                                                      std::string(e.description())));
  }
}

// A required string key.
absl::Status Required(const TableReader& r, const std::string& key, const std::string& example,
                      std::string* out) {
  if (r.Get(key) == nullptr) {
    return r.Missing(key, absl::StrFormat("add %s = \"%s\"", key, example));
  }
  RETURN_IF_ERROR(r.String(key, out));
  if (out->empty()) return r.Error(*r.Get(key), key, "must not be empty");
  return absl::OkStatus();
}

absl::Status ReadExtra(const toml::table& root, const std::string& origin,
                       v1::SiteDescription* site) {
  const toml::node* n = root.get("extra");
  if (n == nullptr) return absl::OkStatus();
  const toml::table* t = n->as_table();
  if (t == nullptr) {
    TableReader r(root, origin, "site.toml", kSiteKeys);
    return r.Error(*n, "extra", "must be a table: [extra] with the site's own keys");
  }
  TableReader r(*t, origin, "[extra]", {});
  for (const auto& [k, v] : *t) {
    const std::string key(k.str());
    if (const auto* s = v.as_string()) {
      (*site->mutable_extra())[key] = s->get();
    } else if (const auto* i = v.as_integer()) {
      (*site->mutable_extra())[key] = absl::StrCat(i->get());
    } else if (const auto* f = v.as_floating_point()) {
      (*site->mutable_extra())[key] = absl::StrCat(f->get());
    } else if (const auto* b = v.as_boolean()) {
      (*site->mutable_extra())[key] = b->get() ? "true" : "false";
    } else {
      return r.Error(v, key, absl::StrCat("is ", TableReader::TypeName(v),
                                          "; [extra] keys take a string, number or boolean"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<uint64_t> ParseBitRate(std::string_view text) {
  std::string s(absl::StripAsciiWhitespace(absl::string_view(text.data(), text.size())));
  size_t i = 0;
  while (i < s.size() && (absl::ascii_isdigit(s[i]) || s[i] == '.')) ++i;
  double number = 0;
  std::string unit = std::string(absl::StripAsciiWhitespace(s.substr(i)));
  if (i == 0 || !absl::SimpleAtod(s.substr(0, i), &number) || !(number > 0)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("\"%s\" is not a bit rate: a positive number and %s", s, kRateUnits));
  }
  double scale = 0;
  if (unit == "b/s" || unit == "bit/s") scale = 1;
  if (unit == "Kb/s" || unit == "kb/s" || unit == "Kbit/s" || unit == "kbit/s") scale = 1e3;
  if (unit == "Mb/s" || unit == "Mbit/s") scale = 1e6;
  if (unit == "Gb/s" || unit == "Gbit/s") scale = 1e9;
  if (unit == "Tb/s" || unit == "Tbit/s") scale = 1e12;
  if (scale == 0) {
    const bool bytes = absl::StrContains(unit, "B/s");
    return absl::InvalidArgumentError(absl::StrFormat(
        "\"%s\": unit \"%s\" is %s; use %s", s, unit,
        unit.empty() ? "missing" : bytes ? "bytes per second, not bits" : "not a bit rate",
        kRateUnits));
  }
  const double v = std::round(number * scale);
  if (v > 1.8e19) return absl::InvalidArgumentError(absl::StrFormat("\"%s\" is too large", s));
  return static_cast<uint64_t>(v);
}

std::string FormatBitRate(uint64_t bits_per_s) {
  const char* units[] = {"b/s", "Kb/s", "Mb/s", "Gb/s", "Tb/s"};
  double v = static_cast<double>(bits_per_s);
  int u = 0;
  while (v >= 1000 && u < 4) {
    v /= 1000;
    ++u;
  }
  return absl::StrFormat("%g%s", v, units[u]);
}

absl::StatusOr<v1::SiteDescription> ParseSiteToml(std::string_view text,
                                                  const std::string& origin) {
  ASSIGN_OR_RETURN(toml::table root, ParseSiteTable(text, origin));
  TableReader r(root, origin, "site.toml", kSiteKeys);
  RETURN_IF_ERROR(r.CheckUnknown());
  v1::SiteDescription site;
  RETURN_IF_ERROR(Required(r, "site", "hlrs", site.mutable_site()));
  RETURN_IF_ERROR(Required(r, "system", "testbed-a", site.mutable_system()));
  RETURN_IF_ERROR(Required(r, "interconnect", "HDR InfiniBand", site.mutable_interconnect()));
  std::string speed;
  RETURN_IF_ERROR(Required(r, "interconnect_speed", "200Gb/s", &speed));
  auto rate = ParseBitRate(speed);
  if (!rate.ok()) return r.Error(*r.Get("interconnect_speed"), "interconnect_speed",
                                 std::string(rate.status().message()));
  site.set_interconnect_bits_per_s(*rate);
  RETURN_IF_ERROR(Required(r, "storage_media", "NVMe", site.mutable_storage_media()));
  for (const char* key : {"server_nodes", "client_nodes"}) {
    if (r.Get(key) == nullptr) return r.Missing(key, absl::StrFormat("add %s = N", key));
  }
  uint32_t servers = 0, clients = 0;
  RETURN_IF_ERROR(r.Uint32("server_nodes", 0, 1u << 20, &servers));
  RETURN_IF_ERROR(r.Uint32("client_nodes", 1, 1u << 20, &clients));
  site.set_server_nodes(servers);
  site.set_client_nodes(clients);
  RETURN_IF_ERROR(r.String("file_system", site.mutable_file_system()));
  RETURN_IF_ERROR(r.String("notes", site.mutable_notes()));
  RETURN_IF_ERROR(ReadExtra(root, origin, &site));
  return site;
}

absl::StatusOr<v1::SiteDescription> ReadSiteFile(const std::string& path) {
  ASSIGN_OR_RETURN(std::string text, ReadFileToString(path));
  return ParseSiteToml(text, path);
}

}  // namespace lockstep
