#include "conformance/conformance.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <regex>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/files.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"

namespace lockstep::conformance {
namespace {

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> out = absl::StrSplit(text, '\n');
  if (!out.empty() && out.back().empty()) out.pop_back();
  return out;
}

std::string Collapse(const std::string& s) {
  std::string out;
  bool blank = false;
  for (char c : s) {
    if (c == ' ' || c == '\t') {
      blank = true;
      continue;
    }
    if (blank && !out.empty()) out += ' ';
    blank = false;
    out += c;
  }
  return out;
}

// Which kind of line a golden line is, for the unmasked (parameter) checks.
enum class Section { kHeader, kOptions, kResults, kSummary, kMdtest };

// Indices of the fields of a table row that are parameters, not
// measurements (compared unmasked).
std::vector<size_t> ParameterFields(const std::string& golden_line, Section section) {
  if (section == Section::kResults &&
      (absl::StartsWith(golden_line, "write ") || absl::StartsWith(golden_line, "read "))) {
    return {0, 4, 5, 10};  // access, block(KiB), xfer(KiB), iter
  }
  if (section == Section::kSummary &&
      (absl::StartsWith(golden_line, "write ") || absl::StartsWith(golden_line, "read "))) {
    // Test# #Tasks tPN reps fPP reord reordoff reordrand seed segcnt blksiz
    // xsize (aggs(MiB) is what moved: a measurement with a stonewall) API RefNum.
    return {0, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 25, 26};
  }
  return {};
}

bool IsTableRow(const std::string& golden_line, Section section) {
  if (section == Section::kResults) {
    return absl::StartsWith(golden_line, "access ") || absl::StartsWith(golden_line, "------") ||
           absl::StartsWith(golden_line, "write ") || absl::StartsWith(golden_line, "read ") ||
           absl::StartsWith(golden_line, "remove ");
  }
  if (section == Section::kSummary) {
    return absl::StartsWith(golden_line, "Operation") ||
           absl::StartsWith(golden_line, "write ") || absl::StartsWith(golden_line, "read ");
  }
  if (section == Section::kMdtest) return absl::StartsWith(golden_line, "   ");
  return false;
}

// Lines compared unmasked: they describe the test, not its measurements.
bool IsParameterLine(const std::string& golden_line, Section section) {
  if (section == Section::kOptions) return golden_line.find(" : ") != std::string::npos;
  if (section == Section::kHeader) {
    return absl::StartsWith(golden_line, "Command line") || absl::StartsWith(golden_line, "Path") ||
           absl::StartsWith(golden_line, "TestID") || absl::StartsWith(golden_line, "Nodemap") ||
           absl::StrContains(golden_line, " was launched with ") ||
           std::regex_search(golden_line, std::regex("^[0-9]+ tasks, [0-9]+ "));
  }
  return absl::StartsWith(golden_line, "SUMMARY ");
}

Section Advance(Section s, const std::string& golden_line) {
  if (absl::StartsWith(golden_line, "Options:")) return Section::kOptions;
  if (absl::StartsWith(golden_line, "Results:")) return Section::kResults;
  if (absl::StartsWith(golden_line, "Summary of all tests:")) return Section::kSummary;
  if (absl::StartsWith(golden_line, "SUMMARY ")) return Section::kMdtest;
  if (absl::StartsWith(golden_line, "Finished") || absl::StartsWith(golden_line, "-- finished")) {
    return Section::kHeader;
  }
  return s;
}

}  // namespace

std::string MaskLine(const std::string& line) {
  static const std::regex kCtime(
      "[A-Z][a-z]{2} [A-Z][a-z]{2} +[0-9]{1,2} [0-9]{2}:[0-9]{2}:[0-9]{2} [0-9]{4}");
  static const std::regex kMdtestTime("[0-9]{2}/[0-9]{2}/[0-9]{4} [0-9]{2}:[0-9]{2}:[0-9]{2}");
  static const std::regex kMachine("^(Machine +: ).*$");
  static const std::regex kFsUnit("^(FS +: [0-9.]+ )(GiB|TiB)");
  static const std::regex kNumber("[0-9]+(\\.[0-9]+)?");
  std::string s = std::regex_replace(line, kCtime, "<date>");
  s = std::regex_replace(s, kMdtestTime, "<date>");
  s = std::regex_replace(s, kMachine, "$1<host>");
  s = std::regex_replace(s, kFsUnit, "$1<unit>");
  s = std::regex_replace(s, kNumber, "#");
  return Collapse(s);
}

bool LooksLikeIorResultLine(const std::string& line) {
  for (const char* prefix : {"write", "read", "remove", "Max ", "Operation"}) {
    if (absl::StartsWith(line, prefix)) return true;
  }
  for (const char* inner : {"Summary of all tests", "SUMMARY rate", "SUMMARY time"}) {
    if (absl::StrContains(line, inner)) return true;
  }
  return false;
}

bool IsLockstepLine(const std::string& line) { return absl::StartsWith(line, "#"); }

std::vector<Field> SplitFields(const std::string& line) {
  std::vector<Field> out;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && line[i] == ' ') ++i;
    if (i >= line.size()) break;
    size_t start = i;
    while (i < line.size() && line[i] != ' ') ++i;
    out.push_back({start, i, line.substr(start, i - start)});
  }
  return out;
}

std::string CompareColumns(const std::string& golden, const std::string& lockstep) {
  std::vector<Field> g = SplitFields(golden), l = SplitFields(lockstep);
  if (g.size() != l.size()) {
    return absl::StrFormat("%u fields where IOR has %u", l.size(), g.size());
  }
  for (size_t i = 0; i < g.size(); ++i) {
    if (g[i].start != l[i].start && g[i].end != l[i].end) {
      return absl::StrFormat(
          "field %u (\"%s\") spans columns %u-%u where IOR's (\"%s\") spans %u-%u", i + 1,
          l[i].text, l[i].start, l[i].end, g[i].text, g[i].start, g[i].end);
    }
  }
  return "";
}

std::vector<std::string> CompareOutputs(const std::string& golden, const std::string& lockstep,
                                        const std::vector<KnownDifference>& known) {
  std::vector<std::string> diffs;
  const std::vector<std::string> g = Lines(golden), all = Lines(lockstep);
  std::vector<std::pair<size_t, std::string>> l;  // (line number, text) without '#' lines
  for (size_t i = 0; i < all.size(); ++i) {
    if (!IsLockstepLine(all[i])) l.emplace_back(i + 1, all[i]);
  }
  Section section = Section::kHeader;
  size_t li = 0;
  for (size_t gi = 0; gi < g.size(); ++gi) {
    section = Advance(section, g[gi]);
    const std::string gm = MaskLine(g[gi]);
    if (li >= l.size()) {
      diffs.push_back(absl::StrFormat("IOR line %u is missing: \"%s\"", gi + 1, g[gi]));
      continue;
    }
    const auto& [lno, text] = l[li];
    const std::string lm = MaskLine(text);
    bool accepted = gm == lm;
    for (const KnownDifference& k : known) {
      if (!accepted && k.golden_masked == gm && k.lockstep_masked == lm) accepted = true;
    }
    if (!accepted) {
      diffs.push_back(absl::StrFormat("line %u: \"%s\"\n    IOR line %u: \"%s\"\n    (masked: \"%s\" vs \"%s\")",
                                      lno, text, gi + 1, g[gi], lm, gm));
      // Resynchronise: if the golden line appears later, skip Lockstep's
      // extra lines; otherwise count it missing and stay.
      size_t j = li + 1;
      while (j < l.size() && MaskLine(l[j].second) != gm) ++j;
      if (j < l.size()) {
        li = j + 1;
      }
      continue;
    }
    if (IsParameterLine(g[gi], section) && Collapse(g[gi]) != Collapse(text) && gm == lm) {
      diffs.push_back(absl::StrFormat("line %u: \"%s\"\n    IOR line %u: \"%s\" (a parameter, compared unmasked)",
                                      lno, text, gi + 1, g[gi]));
    }
    if (IsTableRow(g[gi], section)) {
      std::string col = CompareColumns(g[gi], text);
      if (!col.empty()) {
        diffs.push_back(absl::StrFormat("line %u: %s\n    ours: \"%s\"\n    IOR:  \"%s\"", lno,
                                        col, text, g[gi]));
      }
      std::vector<Field> gf = SplitFields(g[gi]), lf = SplitFields(text);
      for (size_t f : ParameterFields(g[gi], section)) {
        if (f < gf.size() && f < lf.size() && gf[f].text != lf[f].text) {
          diffs.push_back(absl::StrFormat("line %u: field %u is \"%s\" where IOR has \"%s\"", lno,
                                          f + 1, lf[f].text, gf[f].text));
        }
      }
    }
    ++li;
  }
  for (; li < l.size(); ++li) {
    if (LooksLikeIorResultLine(l[li].second)) {
      diffs.push_back(absl::StrFormat(
          "line %u: \"%s\" after everything IOR prints, and an IOR parser would take it for a "
          "result; start it with '#'",
          l[li].first, l[li].second));
    }
  }
  return diffs;
}

std::string ListFilesWithSizes(const std::string& dir) {
  std::vector<std::string> rows;
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(dir, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    if (!it->is_regular_file(ec)) continue;
    rows.push_back(absl::StrFormat("%s %u",
                                   std::filesystem::relative(it->path(), dir, ec).string(),
                                   it->file_size(ec)));
  }
  std::sort(rows.begin(), rows.end());
  std::string out;
  for (const std::string& r : rows) out += r + "\n";
  return out;
}

std::vector<std::string> CompareFiles(const std::string& golden, const std::string& lockstep,
                                      bool sizes_vary) {
  std::vector<std::string> diffs;
  auto parse = [](const std::string& text) {
    std::map<std::string, std::string> m;
    for (const std::string& line : Lines(text)) {
      size_t sp = line.rfind(' ');
      if (sp != std::string::npos) m[line.substr(0, sp)] = line.substr(sp + 1);
    }
    return m;
  };
  auto g = parse(golden), l = parse(lockstep);
  std::set<std::string> sizes;
  for (const auto& [name, size] : g) {
    auto it = l.find(name);
    if (it == l.end()) {
      diffs.push_back(absl::StrFormat("file %s (%s bytes) is missing", name, size));
    } else if (!sizes_vary && it->second != size) {
      diffs.push_back(
          absl::StrFormat("file %s has %s bytes where IOR left %s", name, it->second, size));
    }
  }
  for (const auto& [name, size] : l) {
    if (!g.count(name)) {
      diffs.push_back(absl::StrFormat("file %s (%s bytes) is left behind; IOR leaves none", name,
                                      size));
    }
    sizes.insert(size);
  }
  if (sizes_vary && sizes.size() > 1) {
    diffs.push_back(absl::StrFormat("files differ in size (%s); wear-out evens them out",
                                    absl::StrJoin(sizes, ", ")));
  }
  return diffs;
}

namespace {

void CompareValues(const google::protobuf::Value& g, const google::protobuf::Value& l,
                   const std::string& path, std::vector<std::string>* diffs) {
  if (g.has_struct_value()) {
    if (!l.has_struct_value()) {
      diffs->push_back(path + ": an object in IOR's JSON, not in ours");
      return;
    }
    for (const auto& [key, value] : g.struct_value().fields()) {
      auto it = l.struct_value().fields().find(key);
      std::string sub = path.empty() ? key : path + "." + key;
      if (it == l.struct_value().fields().end()) {
        diffs->push_back(absl::StrFormat("key %s is missing", sub));
      } else {
        CompareValues(value, it->second, sub, diffs);
      }
    }
  } else if (g.has_list_value()) {
    if (!l.has_list_value()) {
      diffs->push_back(path + ": an array in IOR's JSON, not in ours");
      return;
    }
    const auto& gv = g.list_value().values();
    const auto& lv = l.list_value().values();
    if (gv.size() != lv.size()) {
      diffs->push_back(absl::StrFormat("%s has %d elements where IOR's has %d", path, lv.size(),
                                       gv.size()));
    }
    for (int i = 0; i < std::min(gv.size(), lv.size()); ++i) {
      CompareValues(gv[i], lv[i], absl::StrFormat("%s[%d]", path, i), diffs);
    }
  } else if (g.kind_case() != l.kind_case() && !l.has_null_value()) {
    diffs->push_back(absl::StrFormat("%s: a different JSON type from IOR's", path));
  }
}

}  // namespace

std::vector<std::string> CompareJsonKeys(const std::string& golden, const std::string& lockstep) {
  std::vector<std::string> diffs;
  google::protobuf::Value g, l;
  auto gs = google::protobuf::util::JsonStringToMessage(golden, &g);
  if (!gs.ok()) return {"IOR's JSON does not parse: " + gs.ToString()};
  auto ls = google::protobuf::util::JsonStringToMessage(lockstep, &l);
  if (!ls.ok()) return {"Lockstep's output is not JSON: " + ls.ToString()};
  CompareValues(g, l, "", &diffs);
  return diffs;
}

std::vector<std::string> CompareCsv(const std::string& golden, const std::string& lockstep) {
  std::vector<std::string> diffs;
  std::vector<std::string> g = Lines(golden), l = Lines(lockstep);
  if (g.empty()) return {"IOR's CSV is empty"};
  if (l.empty()) return {"Lockstep printed no CSV"};
  std::vector<std::string> gh = absl::StrSplit(g[0], ','), lh = absl::StrSplit(l[0], ',');
  for (const std::string& k : gh) {
    if (std::find(lh.begin(), lh.end(), k) == lh.end()) {
      diffs.push_back(absl::StrFormat("CSV column \"%s\" is missing (ours: %s)", k, l[0]));
    }
  }
  if (g.size() != l.size()) {
    diffs.push_back(
        absl::StrFormat("%u CSV rows where IOR prints %u", l.size() - 1, g.size() - 1));
  }
  for (size_t i = 1; i < l.size(); ++i) {
    if (std::count(l[i].begin(), l[i].end(), ',') != std::count(l[0].begin(), l[0].end(), ',')) {
      diffs.push_back(absl::StrFormat("CSV row %u has a different field count: %s", i, l[i]));
    }
  }
  return diffs;
}

std::string Read(const std::string& path) {
  auto s = ReadFileToString(path);
  return s.ok() ? *s : "";
}

std::vector<std::string> CaseNames(const std::string& parent) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(parent, ec)) {
    if (e.is_directory()) names.push_back(e.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace lockstep::conformance
