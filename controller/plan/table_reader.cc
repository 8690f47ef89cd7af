#include "controller/plan/table_reader.h"

#include <algorithm>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/flags.h"
#include "common/sizes.h"
#include "common/status_macros.h"

namespace lockstep {

TableReader::TableReader(const toml::table& table, std::string source, std::string where,
                         std::vector<std::string> valid)
    : table_(table), source_(std::move(source)), where_(std::move(where)),
      valid_(std::move(valid)) {}

const toml::node* TableReader::Get(const std::string& key) const {
  auto it = overrides_.find(key);
  return it != overrides_.end() ? it->second : table_.get(key);
}

std::string TableReader::Pos(const toml::node& node) const {
  const auto& b = node.source().begin;
  return absl::StrFormat("%s:%d:%d", source_, b.line, b.column);
}

absl::Status TableReader::Error(const toml::node& node, const std::string& key,
                                const std::string& why) const {
  return absl::InvalidArgumentError(
      absl::StrFormat("%s: %s key '%s': %s", Pos(node), where_, key, why));
}

absl::Status TableReader::Missing(const std::string& key, const std::string& how) const {
  return absl::InvalidArgumentError(
      absl::StrFormat("%s: %s has no '%s'; %s", Pos(), where_, key, how));
}

absl::Status TableReader::CheckUnknown(const std::string& listed) const {
  for (const auto& [k, v] : table_) {
    std::string key(k.str());
    if (std::find(valid_.begin(), valid_.end(), key) == valid_.end()) {
      const std::string close = ClosestName(key, valid_);  // a typo: "transfersize"
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: unknown key '%s' in %s; %s%s", Pos(v), key, where_,
          close.empty() ? "" : absl::StrFormat("did you mean '%s'? ", close),
          listed.empty() ? "valid keys: " + absl::StrJoin(valid_, ", ") : listed));
    }
  }
  return absl::OkStatus();
}

absl::Status TableReader::String(const std::string& key, std::string* out) const {
  const toml::node* n = Get(key);
  if (n == nullptr) return absl::OkStatus();
  if (!n->is_string()) return Error(*n, key, absl::StrFormat("expected a string, got %s", TypeName(*n)));
  *out = n->as_string()->get();
  return absl::OkStatus();
}

namespace {

// The value as a refusal shows it: quoted, a NUL as \0.
std::string Quoted(const std::string& v) {
  std::string out = "\"";
  for (char c : v) out += c == '\0' ? std::string("\\0") : std::string(1, c);
  return out + "\"";
}

}  // namespace

absl::Status TableReader::FileName(const std::string& key, const std::string& example,
                                   std::string* out) const {
  std::string v = *out;
  RETURN_IF_ERROR(String(key, &v));
  const toml::node* n = Get(key);
  if (n == nullptr) return absl::OkStatus();
  const char* why = nullptr;
  if (v.empty()) why = "is empty";
  else if (v == "." || v == "..") why = "names a directory, not a file";
  else if (v.find('/') != std::string::npos) why = "has a '/'";
  else if (v.find('\0') != std::string::npos) why = "has a NUL byte";
  if (why != nullptr) {
    return Error(*n, key, absl::StrFormat("%s %s: it must be a plain file name (one path "
                                          "component, not . or .., no '/' or NUL), such as \"%s\"",
                                          Quoted(v), why, example));
  }
  *out = std::move(v);
  return absl::OkStatus();
}

absl::Status TableReader::Path(const std::string& key, std::string* out) const {
  RETURN_IF_ERROR(String(key, out));
  const toml::node* n = Get(key);
  if (n != nullptr && out->find('\0') != std::string::npos) {
    return Error(*n, key, absl::StrFormat("%s has a NUL byte; a path cannot hold one", Quoted(*out)));
  }
  return absl::OkStatus();
}

absl::Status TableReader::Bool(const std::string& key, bool* out) const {
  const toml::node* n = Get(key);
  if (n == nullptr) return absl::OkStatus();
  if (!n->is_boolean()) {
    return Error(*n, key, absl::StrFormat("expected true or false, got %s", TypeName(*n)));
  }
  *out = n->as_boolean()->get();
  return absl::OkStatus();
}

absl::Status TableReader::Uint(const std::string& key, uint64_t min, uint64_t max,
                               uint64_t* out) const {
  const toml::node* n = Get(key);
  if (n == nullptr) return absl::OkStatus();
  return UintNode(*n, key, min, max, out);
}

absl::Status TableReader::Uint32(const std::string& key, uint32_t min, uint32_t max,
                                 uint32_t* out) const {
  uint64_t v = *out;
  RETURN_IF_ERROR(Uint(key, min, max, &v));
  *out = static_cast<uint32_t>(v);
  return absl::OkStatus();
}

absl::Status TableReader::UintNode(const toml::node& n, const std::string& key, uint64_t min,
                                   uint64_t max, uint64_t* out) const {
  if (!n.is_integer()) {
    return Error(n, key, absl::StrFormat("expected an integer, got %s", TypeName(n)));
  }
  int64_t v = n.as_integer()->get();
  if (v < 0 || static_cast<uint64_t>(v) < min || static_cast<uint64_t>(v) > max) {
    return Error(n, key, absl::StrFormat("%d is out of range; use %u to %u", v, min, max));
  }
  *out = static_cast<uint64_t>(v);
  return absl::OkStatus();
}

absl::Status TableReader::Size(const std::string& key, uint64_t* out) const {
  const toml::node* n = Get(key);
  if (n == nullptr) return absl::OkStatus();
  uint64_t v = 0;
  if (n->is_integer()) {
    if (n->as_integer()->get() < 0) return Error(*n, key, "a size cannot be negative");
    v = static_cast<uint64_t>(n->as_integer()->get());
  } else if (n->is_string()) {
    auto parsed = ParseSize(n->as_string()->get());
    if (!parsed.ok()) return Error(*n, key, std::string(parsed.status().message()));
    v = *parsed;
  } else {
    return Error(*n, key, absl::StrFormat("expected a size such as \"1m\" or 1048576, got %s",
                                          TypeName(*n)));
  }
  if (v == 0) return Error(*n, key, "a size must be greater than zero");
  *out = v;
  return absl::OkStatus();
}

absl::Status TableReader::OneOf(const std::string& key, const std::vector<std::string>& choices,
                                std::string* out) const {
  RETURN_IF_ERROR(String(key, out));
  const toml::node* n = Get(key);
  if (n == nullptr || std::find(choices.begin(), choices.end(), *out) != choices.end()) {
    return absl::OkStatus();
  }
  return Error(*n, key,
               absl::StrFormat("\"%s\" is not one of %s", *out, absl::StrJoin(choices, ", ")));
}

std::string TableReader::TypeName(const toml::node& n) {
  switch (n.type()) {
    case toml::node_type::string: return "a string";
    case toml::node_type::integer: return "an integer";
    case toml::node_type::floating_point: return "a float";
    case toml::node_type::boolean: return "a boolean";
    case toml::node_type::array: return "an array";
    case toml::node_type::table: return "a table";
    default: return "a date/time";
  }
}

}  // namespace lockstep
