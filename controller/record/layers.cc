#include "controller/record/layers.h"

#include <algorithm>
#include <map>
#include <optional>

#include "absl/strings/str_format.h"
#include "controller/record/ior_math.h"
#include "controller/record/fold.h"

namespace lockstep {
namespace {

struct Figure {
  double median = 0;
  double spread = 0;
};

Figure FigureOf(std::vector<double> values) {
  if (values.empty()) return {};
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  const double median = n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
  return {median, values.back() - values.front()};
}


// The layers are told apart by their rows, not by phase kinds: a net phase's
// row is "net", a backend phase's "backend_write" and "backend_read", an
// end-to-end transfer's "write" or "read" (ior_math.h ReduceIteration).
bool IsEndToEnd(const std::string& access) { return access == "write" || access == "read"; }

// By repetition: the figure of the rows of `access` (a phase's row or one
// of its extra rows). Several phases with such a row in one repetition: the
// first.
std::map<uint32_t, double> ByRepetition(const v1::TestRecord& test, const std::string& access) {
  std::map<uint32_t, double> out;
  for (const v1::PhaseRecord& p : test.phases()) {
    if (!Counts(p)) continue;
    const v1::IterationRow* row = p.row().access() == access ? &p.row() : nullptr;
    for (const v1::IterationRow& r : p.extra_rows()) {
      if (row == nullptr && r.access() == access) row = &r;
    }
    if (row != nullptr && row->bw_mib() > 0) out.emplace(p.repetition(), row->bw_mib());
  }
  return out;
}

std::vector<double> Values(const std::map<uint32_t, double>& m) {
  std::vector<double> out;
  for (const auto& [rep, v] : m) out.push_back(v);
  return out;
}

// The smaller of the measured layers at one repetition (or their medians).
std::optional<double> Lower(std::optional<double> net, std::optional<double> backend) {
  if (net && backend) return std::min(*net, *backend);
  return net ? net : backend;
}

std::optional<double> At(const std::map<uint32_t, double>& m, uint32_t rep, bool per_rep,
                         const Figure& f) {
  if (m.empty()) return std::nullopt;
  if (!per_rep) return f.median;
  auto it = m.find(rep);
  return it == m.end() ? std::optional<double>(f.median) : std::optional<double>(it->second);
}

}  // namespace

namespace {

// The figures of one test that the rows are made of.
struct TestLayers {
  std::map<uint32_t, double> net, backend_write, backend_read;
  std::vector<std::string> names;  // end-to-end phases, plan order
  std::map<std::string, std::map<uint32_t, double>> e2e;
  std::map<std::string, std::string> access_of;
  bool any() const { return !net.empty() || !backend_write.empty() || !backend_read.empty(); }
  const std::map<uint32_t, double>& backend(const std::string& access) const {
    return access == "write" ? backend_write : backend_read;
  }
};

TestLayers Gather(const v1::TestRecord& test) {
  TestLayers t;
  t.net = ByRepetition(test, "net");
  t.backend_write = ByRepetition(test, "backend_write");
  t.backend_read = ByRepetition(test, "backend_read");
  for (const v1::PhaseRecord& p : test.phases()) {
    const std::string& access = p.row().access();
    if (!IsEndToEnd(access) || !Counts(p) || p.row().bw_mib() <= 0) continue;
    if (!t.e2e.count(p.phase())) t.names.push_back(p.phase());
    t.e2e[p.phase()].emplace(p.repetition(), p.row().bw_mib());
    t.access_of[p.phase()] = access;
  }
  return t;
}

// Per repetition of phase `name`: its figure over the smaller layer, of the
// same repetition where the layer ran in each one, else its median.
std::vector<double> Efficiencies(const TestLayers& t, const std::string& name) {
  std::vector<double> out;
  auto e2e = t.e2e.find(name);
  if (e2e == t.e2e.end()) return out;
  const std::map<uint32_t, double>& backend = t.backend(t.access_of.at(name));
  const Figure net_f = FigureOf(Values(t.net)), backend_f = FigureOf(Values(backend));
  const size_t reps = e2e->second.size();
  const bool net_per_rep = t.net.size() == reps, backend_per_rep = backend.size() == reps;
  for (const auto& [rep, value] : e2e->second) {
    const std::optional<double> lower = Lower(At(t.net, rep, net_per_rep, net_f),
                                              At(backend, rep, backend_per_rep, backend_f));
    if (lower && *lower > 0) out.push_back(value / *lower);
  }
  return out;
}

}  // namespace

std::vector<double> EfficienciesOf(const v1::TestRecord& test, const std::string& phase) {
  const TestLayers t = Gather(test);
  return t.any() ? Efficiencies(t, phase) : std::vector<double>{};
}

std::vector<v1::LayerRow> LayersOf(const v1::TestRecord& test) {
  const TestLayers t = Gather(test);
  std::vector<v1::LayerRow> rows;
  if (!t.any()) return rows;
  const Figure net_f = FigureOf(Values(t.net));
  for (const std::string& name : t.names) {
    const std::string& access = t.access_of.at(name);
    const Figure backend_f = FigureOf(Values(t.backend(access)));
    const Figure e2e_f = FigureOf(Values(t.e2e.at(name)));
    v1::LayerRow row;
    row.set_phase(name);
    row.set_access(access);
    row.set_client_agents(test.client_agents());
    row.set_end_to_end_mib(e2e_f.median);
    row.set_end_to_end_spread_mib(e2e_f.spread);
    row.set_net_mib(net_f.median);
    row.set_net_spread_mib(net_f.spread);
    row.set_backend_mib(backend_f.median);
    row.set_backend_spread_mib(backend_f.spread);
    row.set_repetitions(static_cast<uint32_t>(t.e2e.at(name).size()));
    const Figure eff = FigureOf(Efficiencies(t, name));
    row.set_efficiency(eff.median);
    row.set_efficiency_spread(eff.spread);
    if (net_f.median > 0 && (backend_f.median <= 0 || net_f.median <= backend_f.median)) {
      row.set_bound_by("network");
    } else if (backend_f.median > 0) {
      row.set_bound_by("back end");
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

std::vector<std::string> LayersLines(const std::vector<v1::LayerRow>& rows) {
  std::vector<std::string> out;
  auto figure = [](double v, double spread) {
    return v > 0 ? absl::StrFormat("%.2f MiB/s (spread %.2f)", v, spread) : std::string("not measured");
  };
  for (const v1::LayerRow& r : rows) {
    std::string line = absl::StrFormat(
        "layers: clients %u, %s \"%s\": end-to-end %s, network %s, back end %s", r.client_agents(),
        r.access(), r.phase(), figure(r.end_to_end_mib(), r.end_to_end_spread_mib()),
        figure(r.net_mib(), r.net_spread_mib()), figure(r.backend_mib(), r.backend_spread_mib()));
    if (r.efficiency() > 0) {
      absl::StrAppendFormat(&line, ": efficiency %.1f%% (spread %.1f), bound by the %s",
                            100 * r.efficiency(), 100 * r.efficiency_spread(), r.bound_by());
    } else {
      line += ": no efficiency (no lower layer measured in this direction)";
    }
    absl::StrAppendFormat(&line, ", %u repetition%s", r.repetitions(), r.repetitions() == 1 ? "" : "s");
    out.push_back(std::move(line));
  }
  return out;
}

}  // namespace lockstep
