#include "integration/plan_builder.h"

#include <fstream>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace lockstep::testing {

TomlValue::TomlValue(const std::string& s) : text_("\"") {
  for (char c : s) {
    if (c == '"' || c == '\\') text_ += '\\';
    text_ += c;
  }
  text_ += '"';
}

TomlValue::TomlValue(double d) : text_(absl::StrFormat("%.17g", d)) {
  if (text_.find_first_of(".eEn") == std::string::npos) text_ += ".0";  // TOML: 1.0, not 1
}

TomlValue::TomlValue(std::initializer_list<int64_t> list)
    : text_("[" + absl::StrJoin(list, ", ") + "]") {}

TomlValue TomlValue::Strings(std::initializer_list<const char*> list) {
  std::vector<std::string> items;
  for (const char* s : list) items.push_back(TomlValue(std::string(s)).text());
  TomlValue v;
  v.text_ = "[" + absl::StrJoin(items, ", ") + "]";
  return v;
}

TomlValue TomlValue::Bools(std::initializer_list<bool> list) {
  std::vector<std::string> items;
  for (bool b : list) items.push_back(b ? "true" : "false");
  TomlValue v;
  v.text_ = "[" + absl::StrJoin(items, ", ") + "]";
  return v;
}

TomlValue::TomlValue(const std::vector<std::string>& list) : text_("[") {
  for (size_t i = 0; i < list.size(); ++i) text_ += (i > 0 ? ", " : "") + TomlValue(list[i]).text();
  text_ += "]";
}

void TomlTable::Set(const std::string& key, TomlValue value) {
  for (auto& [k, v] : keys_) {
    if (k == key) {
      v = std::move(value);
      return;
    }
  }
  keys_.emplace_back(key, std::move(value));
}

std::string TomlTable::Lines() const {
  std::string s;
  for (const auto& [k, v] : keys_) s += k + " = " + v.text() + "\n";
  return s;
}

PlanPhase::PlanPhase(const std::string& name, const std::string& kind) {
  table_.Set("name", name);
  table_.Set("kind", kind);
  table_.Set("dir", "data");
}

PlanPhase FilePerProcess(const std::string& name, const std::string& kind,
                         TomlValue transfer_size, TomlValue block_size) {
  return PlanPhase(name, kind)
      .Set("file_per_process", true)
      .Set("transfer_size", std::move(transfer_size))
      .Set("block_size", std::move(block_size));
}

PlanBuilder& PlanBuilder::AddAgent(const std::string& address, const std::string& role) {
  TomlTable t;
  t.Set("address", address);
  if (!role.empty()) t.Set("role", role);
  agents_.push_back(std::move(t));
  return *this;
}

std::string PlanBuilder::Toml() const {
  std::string s;
  if (!run_.empty()) s += "[run]\n" + run_.Lines();
  for (const TomlTable& a : agents_) s += "[[agent]]\n" + a.Lines();
  for (const PlanPhase& p : phases_) s += p.Toml();
  return s;
}

std::string PlanBuilder::WriteTo(const std::string& path) const {
  std::ofstream(path) << Toml();
  return path;
}

}  // namespace lockstep::testing
