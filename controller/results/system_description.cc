#include "controller/results/system_description.h"

#include <algorithm>
#include <functional>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/sizes.h"
#include "controller/results/site_file.h"

namespace lockstep {

v1::SystemDescription DescribeSystem(const v1::RunRecord& run, const v1::SiteDescription& site) {
  v1::SystemDescription d;
  *d.mutable_site() = site;
  for (const auto& a : run.agents()) {
    v1::HostFacts* f = d.add_hosts();
    *f = a.facts();
    if (f->role() == v1::ROLE_UNSPECIFIED) f->set_role(a.role());
  }
  return d;
}

namespace {

std::string RoleWord(v1::Role r) {
  switch (r) {
    case v1::OSS: return "oss";
    case v1::MDS: return "mds";
    default: return "client";
  }
}

// Distinct values with counts when more than one host: "2x a, 1x b"; a
// single distinct value over all hosts is shown bare.
std::string Tally(const std::vector<std::string>& values) {
  std::map<std::string, int> count;
  for (const auto& v : values) {
    if (!v.empty()) ++count[v];
  }
  if (count.empty()) return "";
  if (count.size() == 1) {
    const auto& [v, n] = *count.begin();
    return n > 1 ? absl::StrFormat("%dx %s", n, v) : v;
  }
  std::vector<std::string> parts;
  for (const auto& [v, n] : count) parts.push_back(absl::StrFormat("%dx %s", n, v));
  return absl::StrJoin(parts, ", ");
}

using HostValue = std::function<std::string(const v1::HostFacts&)>;

std::string NicsOf(const v1::HostFacts& f) {
  std::vector<std::string> parts;
  for (const auto& n : f.nics()) {
    std::string speed = n.speed_mbit_per_s() > 0
                            ? FormatBitRate(n.speed_mbit_per_s() * 1000000ull)
                            : std::string("speed ?");
    parts.push_back(absl::StrFormat("%s %s mtu %u", n.kind().empty() ? "nic" : n.kind(), speed,
                                    n.mtu()));
  }
  std::sort(parts.begin(), parts.end());
  return absl::StrJoin(parts, " + ");
}

std::string DisksOf(const v1::HostFacts& f) {
  std::vector<std::string> parts;
  for (const auto& b : f.block_devices()) {
    parts.push_back(absl::StrFormat("%s %s%s", b.model().empty() ? b.name() : b.model(),
                                    HumanBytes(b.size_bytes()), b.rotational() ? " HDD" : ""));
  }
  std::sort(parts.begin(), parts.end());
  return absl::StrJoin(parts, " + ");
}

std::string FileSystemsOf(const v1::HostFacts& f) {
  std::vector<std::string> parts;
  for (const auto& r : f.roots()) {
    std::string name = r.fs_name().empty() ? r.fs_type() : r.fs_name();
    if (!r.fs_version().empty()) absl::StrAppend(&name, " ", r.fs_version());
    if (!name.empty()) parts.push_back(name);
  }
  if (parts.empty() && !f.lustre_version().empty()) parts.push_back("lustre " + f.lustre_version());
  std::sort(parts.begin(), parts.end());
  parts.erase(std::unique(parts.begin(), parts.end()), parts.end());
  return absl::StrJoin(parts, ", ");
}

std::string DaemonsOf(const v1::HostFacts& f) {
  std::map<std::string, int> kinds;  // "osd 16.2.15" -> count
  for (const auto& d : f.daemons()) {
    std::string kind = d.name().substr(0, d.name().find('.'));
    ++kinds[d.version().empty() ? kind : absl::StrCat(kind, " ", d.version())];
  }
  std::vector<std::string> parts;
  for (const auto& [k, n] : kinds) parts.push_back(absl::StrFormat("%dx %s", n, k));
  return absl::StrJoin(parts, ", ");
}

struct HostProperty {
  const char* what;
  HostValue value;
};

const std::vector<HostProperty>& HostProperties() {
  static const std::vector<HostProperty> props = {
      {"cpu model", [](const auto& f) { return f.cpu_model(); }},
      {"cores", [](const auto& f) { return f.cores() ? absl::StrCat(f.cores()) : ""; }},
      {"memory", [](const auto& f) { return f.memory_bytes() ? HumanBytes(f.memory_bytes()) : ""; }},
      {"nics", NicsOf},
      {"block devices", DisksOf},
      {"file systems", FileSystemsOf},
      {"daemons", DaemonsOf},
      {"kernel", [](const auto& f) { return f.kernel(); }},
      {"os", [](const auto& f) { return f.os(); }},
      {"lockstep", [](const auto& f) { return f.agent_version(); }},
  };
  return props;
}

void AddSiteRows(const std::vector<v1::SystemDescription>& systems, std::vector<SystemRow>* rows) {
  using Site = v1::SiteDescription;
  const std::vector<std::pair<const char*, std::function<std::string(const Site&)>>> props = {
      {"site", [](const Site& s) { return s.site(); }},
      {"system", [](const Site& s) { return s.system(); }},
      {"interconnect", [](const Site& s) { return s.interconnect(); }},
      {"interconnect speed",
       [](const Site& s) {
         return s.interconnect_bits_per_s() ? FormatBitRate(s.interconnect_bits_per_s()) : "";
       }},
      {"storage media", [](const Site& s) { return s.storage_media(); }},
      {"server nodes", [](const Site& s) { return s.server_nodes() ? absl::StrCat(s.server_nodes()) : ""; }},
      {"client nodes", [](const Site& s) { return s.client_nodes() ? absl::StrCat(s.client_nodes()) : ""; }},
      {"file system", [](const Site& s) { return s.file_system(); }},
      {"notes", [](const Site& s) { return s.notes(); }},
  };
  for (const auto& [what, get] : props) {
    SystemRow row{what, {}, false};
    for (const auto& sys : systems) row.values.push_back(get(sys.site()));
    rows->push_back(std::move(row));
  }
  std::map<std::string, int> extra_keys;
  for (const auto& sys : systems) {
    for (const auto& [k, v] : sys.site().extra()) extra_keys[k] = 1;
  }
  for (const auto& [k, unused] : extra_keys) {
    SystemRow row{absl::StrCat("site ", k), {}, false};
    for (const auto& sys : systems) {
      auto it = sys.site().extra().find(k);
      row.values.push_back(it == sys.site().extra().end() ? "" : it->second);
    }
    rows->push_back(std::move(row));
  }
}

}  // namespace

std::vector<SystemRow> SystemTable(const std::vector<v1::SystemDescription>& systems) {
  std::vector<SystemRow> rows;
  AddSiteRows(systems, &rows);
  for (v1::Role role : {v1::CLIENT, v1::OSS, v1::MDS}) {
    SystemRow hosts{absl::StrCat(RoleWord(role), " hosts"), {}, false};
    for (const auto& sys : systems) {
      int n = 0;
      for (const auto& h : sys.hosts()) n += RoleWord(h.role()) == RoleWord(role) ? 1 : 0;
      hosts.values.push_back(n ? absl::StrCat(n) : "");
    }
    rows.push_back(hosts);
    for (const HostProperty& p : HostProperties()) {
      SystemRow row{absl::StrCat(RoleWord(role), " ", p.what), {}, false};
      for (const auto& sys : systems) {
        std::vector<std::string> values;
        for (const auto& h : sys.hosts()) {
          if (RoleWord(h.role()) == RoleWord(role)) values.push_back(p.value(h));
        }
        row.values.push_back(Tally(values));
      }
      rows.push_back(std::move(row));
    }
  }
  std::vector<SystemRow> kept;
  for (auto& row : rows) {
    bool any = false;
    for (const auto& v : row.values) any = any || !v.empty();
    if (!any) continue;
    for (const auto& v : row.values) row.differs = row.differs || v != row.values[0];
    kept.push_back(std::move(row));
  }
  std::stable_partition(kept.begin(), kept.end(), [](const SystemRow& r) { return r.differs; });
  return kept;
}

std::string FormatSystems(const std::vector<std::string>& labels,
                          const std::vector<v1::SystemDescription>& systems) {
  const std::vector<SystemRow> rows = SystemTable(systems);
  size_t what_w = 4;
  std::vector<size_t> col_w(systems.size(), 0);
  for (size_t i = 0; i < systems.size(); ++i) {
    col_w[i] = i < labels.size() ? labels[i].size() : 1;
  }
  for (const auto& r : rows) {
    what_w = std::max(what_w, r.what.size());
    for (size_t i = 0; i < r.values.size(); ++i) col_w[i] = std::max(col_w[i], r.values[i].size());
  }
  auto line = [&](const std::string& what, const std::vector<std::string>& cells) {
    std::string out = absl::StrFormat("  %-*s", static_cast<int>(what_w), what);
    for (size_t i = 0; i < cells.size(); ++i) {
      absl::StrAppend(&out, absl::StrFormat("  %-*s", static_cast<int>(col_w[i]), cells[i]));
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    return out + "\n";
  };
  std::vector<std::string> header = labels;
  header.resize(systems.size());
  std::string out = line("", header);
  bool in_differs = true;
  absl::StrAppend(&out, "differs:\n");
  bool any_differs = false;
  for (const auto& r : rows) {
    if (in_differs && !r.differs) {
      if (!any_differs) absl::StrAppend(&out, "  (nothing)\n");
      absl::StrAppend(&out, "same:\n");
      in_differs = false;
    }
    any_differs = any_differs || r.differs;
    std::vector<std::string> cells = r.values;
    for (auto& c : cells) {
      if (c.empty()) c.push_back('-');  // not c = "-": GCC 12 -Wrestrict false positive
    }
    absl::StrAppend(&out, line(r.what, cells));
  }
  if (in_differs && !any_differs) absl::StrAppend(&out, "  (nothing)\n");
  return out;
}

}  // namespace lockstep
