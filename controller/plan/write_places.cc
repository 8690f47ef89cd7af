#include "controller/plan/write_places.h"

#include <filesystem>
#include <system_error>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/files.h"
#include <toml++/toml.h>

namespace lockstep {
namespace {

std::string Normal(const std::string& path) {
  std::string s = std::filesystem::path(path).lexically_normal().string();
  while (s.size() > 1 && s.back() == '/') s.pop_back();
  return s;
}

// The line of phase `index`'s dir key in the plan's TOML, 0 if unknown.
int DirLine(const Plan& plan, size_t index) {
  try {
    toml::table root = toml::parse(std::string_view(plan.text), std::string(plan.source));
    const toml::array* phases = root["phase"].as_array();
    if (phases == nullptr || index >= phases->size()) return 0;
    const toml::table* t = (*phases)[index].as_table();
    const toml::node* dir = t == nullptr ? nullptr : t->get("dir");
    return dir == nullptr ? 0 : static_cast<int>(dir->source().begin.line);
  } catch (const toml::parse_error&) {
    return 0;
  }
}

}  // namespace

LocalWritePlaces CommandLineWritePlaces(std::vector<std::string> roots) {
  LocalWritePlaces places;
  std::error_code ec;
  places.cwd = std::filesystem::current_path(ec).string();
  places.roots = std::move(roots);
  places.named_on_command_line = true;
  return places;
}

std::string WhereItLands(const std::string& dir, const std::string& cwd) {
  std::filesystem::path p = Normal(dir.empty() || dir[0] != '/' ? cwd + "/" + dir : dir);
  // The longest existing prefix, its symlinks resolved; the rest as written.
  std::filesystem::path rest;
  std::error_code ec;
  while (!p.empty() && p != p.root_path() && !std::filesystem::exists(p, ec)) {
    rest = rest.empty() ? p.filename() : p.filename() / rest;
    p = p.parent_path();
  }
  std::filesystem::path real = std::filesystem::canonical(p, ec);
  if (ec) real = p;
  return Normal((rest.empty() ? real : real / rest).string());
}

absl::Status CheckLocalWritePlace(const std::string& dir, const LocalWritePlaces& places,
                                  const std::string& what) {
  const std::string lands = WhereItLands(dir, places.cwd);
  for (const std::string& r : places.roots) {
    if (PathIsUnder(lands, WhereItLands(r, places.cwd))) return absl::OkStatus();
  }
  std::string written = dir;
  while (written.size() > 1 && written.back() == '/') written.pop_back();
  const std::string shown =
      lands == written ? std::string() : absl::StrFormat(" (it resolves to %s)", lands);
  if (IsSystemDirectory(lands)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s \"%s\"%s is a system directory: local agents would create, write and remove files "
        "there; use a directory of your own, or name it with --root %s if that is meant",
        what, dir, shown, lands));
  }
  if (places.named_on_command_line) return absl::OkStatus();
  std::vector<std::string> allowed = {places.cwd};
  if (!places.local_root.empty()) allowed.push_back(places.local_root);
  allowed.insert(allowed.end(), {"/tmp", "/dev/shm"});
  for (const std::string& a : allowed) {
    if (PathIsUnder(lands, WhereItLands(a, places.cwd))) return absl::OkStatus();
  }
  return absl::InvalidArgumentError(absl::StrFormat(
      "%s \"%s\"%s is outside the places local agents write without being told (%s); move the "
      "phase's dir below one of them, or allow it with --root %s",
      what, dir, shown, absl::StrJoin(allowed, ", "), lands));
}

absl::Status CheckLocalWritePlaces(const Plan& plan, const LocalWritePlaces& places) {
  for (size_t i = 0; i < plan.phases.size(); ++i) {
    const PhasePlan& p = plan.phases[i];
    if (p.dir.empty()) continue;
    // A relative dir goes below --local_root, or below a new directory in
    // /tmp when there is none.
    std::string dir = p.dir;
    if (dir[0] != '/') {
      if (places.local_root.empty()) continue;
      dir = places.local_root + "/" + dir;
    }
    if (CheckLocalWritePlace(dir, places, "dir").ok()) continue;
    // Refused: the message names the dir's line, found by parsing the plan
    // again (once, not per phase: a 10,000-phase plan took minutes so).
    const int line = DirLine(plan, i);
    const std::string what =
        line > 0 ? absl::StrFormat("%s:%d: phase '%s': dir", plan.source, line, p.name)
                 : absl::StrFormat("%s: phase '%s': dir", plan.source, p.name);
    return CheckLocalWritePlace(dir, places, what);
  }
  return absl::OkStatus();
}

}  // namespace lockstep
