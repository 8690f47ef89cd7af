#include "controller/service/service_pages.h"

#include <algorithm>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "controller/results/csv_cell.h"
#include "controller/results/report.h"
#include "controller/results/svg_plot.h"
#include "controller/results/system_description.h"

namespace lockstep {
namespace {

constexpr char kStyle[] =
    "<style>body{font:15px/1.4 system-ui,sans-serif;margin:0 auto;max-width:1280px;"
    "padding:0 12px;color:#222}nav{padding:8px 0;border-bottom:1px solid #ccc;margin-bottom:8px}"
    "nav a{margin-right:14px}.box{overflow-x:auto;max-width:100%}"
    "table{border-collapse:collapse;margin:6px 0 16px}td,th{border:1px solid #ccc;"
    "padding:3px 8px;text-align:left;white-space:nowrap}td.n{text-align:right}"
    "th{background:#f3f3f3}svg{max-width:100%;height:auto}.diff{background:#fff3cd}"
    ".muted{color:#666}</style>";

std::string Esc(std::string_view s) { return HtmlEscape(s); }

std::string Head(const std::string& title, const Viewer& v) {
  return absl::StrCat(
      "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">"
      "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">"
      "<title>", Esc(title), "</title>", kStyle, "</head><body><nav><a href=\"/\">sites</a>",
      "<span class=\"muted\">signed in as ", Esc(v.name), v.is_site ? " (site)" : " (reader)",
      "</span></nav><h1>", Esc(title), "</h1>");
}

std::string Mib(double v) { return absl::StrFormat("%.2f", v); }

std::string RunLink(const std::string& run_id) {
  return absl::StrCat("<a href=\"/runs/", UrlSegment(run_id), "\">", Esc(run_id), "</a>");
}

std::string VisibilityText(const RunRow& r) {
  if (r.visibility == "private") return "private";
  if (!r.embargo_until.empty()) return absl::StrCat("embargoed until ", r.embargo_until);
  return "shared";
}

}  // namespace

std::string UrlSegment(std::string_view s) {
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += absl::StrFormat("%%%02X", c);
    }
  }
  return out;
}

std::string IndexPage(const Viewer& v, const std::vector<SitePlanRow>& rows) {
  std::string out = Head("Sites and their plans", v);
  absl::StrAppend(&out, "<p><a href=\"/index.csv\">CSV</a></p><div class=\"box\"><table>"
                        "<tr><th>site</th><th>system</th><th>plan</th><th>runs</th>"
                        "<th>last run</th><th>workload class</th></tr>");
  for (const SitePlanRow& r : rows) {
    absl::StrAppend(&out, "<tr><td>", Esc(r.site), "</td><td>", Esc(r.system_name),
                    "</td><td><a href=\"/sites/", UrlSegment(r.site), "/plans/",
                    UrlSegment(r.plan), "\">", Esc(r.plan), "</a></td><td class=\"n\">", r.runs,
                    "</td><td>", Esc(r.last_started_at), "</td><td><a href=\"/classes/",
                    UrlSegment(r.workload_hash), "\">", Esc(r.workload_hash.substr(0, 12)),
                    "</a></td></tr>");
  }
  if (rows.empty()) absl::StrAppend(&out, "<tr><td colspan=\"6\">no runs yet</td></tr>");
  return absl::StrCat(out, "</table></div></body></html>\n");
}

std::string IndexCsv(const std::vector<SitePlanRow>& rows) {
  std::string out = "site,system,plan,runs,last_started_at,workload_hash\n";
  for (const SitePlanRow& r : rows) {
    absl::StrAppend(&out, CsvCell(r.site), ",", CsvCell(r.system_name), ",", CsvCell(r.plan), ",",
                    r.runs, ",", CsvCell(r.last_started_at), ",", CsvCell(r.workload_hash), "\n");
  }
  return out;
}

std::string TrendPage(const Viewer& v, const std::string& site, const std::string& plan,
                      const TrendData& data) {
  std::string out = Head(absl::StrCat(plan, " at ", site), v);
  // Oldest run is x = 1; one series per result key.
  std::map<std::string, int> index_of;
  const int n = static_cast<int>(data.runs.size());
  for (int i = 0; i < n; ++i) index_of[data.runs[i].run_id] = n - i;
  std::map<std::string, PlotSeries> series;
  for (const ResultRow& r : data.results) {
    PlotSeries& s = series[r.result_key];
    s.name = r.result_key;
    s.points.emplace_back(index_of[r.run_id], r.median_mib_s);
    s.ranges.emplace_back(r.min_mib_s, r.max_mib_s);
  }
  std::vector<PlotSeries> list;
  for (auto& [key, s] : series) {
    if (list.size() < 10) list.push_back(std::move(s));
  }
  PlotSpec spec{.title = absl::StrCat(plan, " at ", site, ": median per run"),
                .x_label = "run (oldest = 1)", .y_label = "MiB/s", .kind = "trend"};
  absl::StrAppend(&out, "<p><a href=\"/sites/", UrlSegment(site), "/plans/", UrlSegment(plan),
                  ".csv\">CSV</a></p>", LinePlot(spec, list));
  std::set<std::string> keys;
  for (const ResultRow& r : data.results) keys.insert(r.result_key);
  std::map<std::pair<std::string, std::string>, const ResultRow*> cell;
  for (const ResultRow& r : data.results) cell[{r.run_id, r.result_key}] = &r;
  absl::StrAppend(&out, "<div class=\"box\"><table><tr><th>run</th><th>started</th>"
                        "<th>status</th><th>visibility</th>");
  for (const std::string& k : keys) absl::StrAppend(&out, "<th>", Esc(k), " MiB/s</th>");
  absl::StrAppend(&out, "</tr>");
  for (const RunRow& r : data.runs) {
    absl::StrAppend(&out, "<tr data-run=\"", Esc(r.run_id), "\"><td>", RunLink(r.run_id),
                    "</td><td>", Esc(r.started_at), "</td><td>", Esc(r.status), "</td><td>",
                    Esc(VisibilityText(r)), "</td>");
    for (const std::string& k : keys) {
      auto it = cell.find({r.run_id, k});
      absl::StrAppend(&out, "<td class=\"n\">",
                      it == cell.end() ? "" : Mib(it->second->median_mib_s), "</td>");
    }
    absl::StrAppend(&out, "</tr>");
  }
  return absl::StrCat(out, "</table></div></body></html>\n");
}

std::string TrendCsv(const TrendData& data) {
  std::map<std::string, const RunRow*> run_of;
  for (const RunRow& r : data.runs) run_of[r.run_id] = &r;
  std::string out = "run_id,site,plan,started_at,status,result,operation,median_mib_s,"
                    "min_mib_s,max_mib_s,repetitions,tasks\n";
  for (const ResultRow& x : data.results) {
    const RunRow& r = *run_of[x.run_id];
    absl::StrAppend(&out, CsvCell(r.run_id), ",", CsvCell(r.site), ",", CsvCell(r.name), ",",
                    CsvCell(r.started_at), ",", CsvCell(r.status), ",", CsvCell(x.result_key),
                    ",", CsvCell(x.operation), ",", Mib(x.median_mib_s), ",", Mib(x.min_mib_s),
                    ",", Mib(x.max_mib_s), ",", x.repetitions, ",", x.num_tasks, "\n");
  }
  return out;
}

std::string RunPage(const Viewer& v, const RunRow& row, const v1::RunRecord& run) {
  std::string report = RenderHtml({run}, {.title = absl::StrCat(row.name, ": run ", row.run_id)});
  const std::string banner = absl::StrCat(
      "<nav style=\"font:15px system-ui,sans-serif\"><a href=\"/\">sites</a> · <a href=\"/sites/",
      UrlSegment(row.site), "/plans/", UrlSegment(row.name), "\">", Esc(row.name), " at ",
      Esc(row.site), "</a> · <a href=\"/classes/", UrlSegment(row.workload_hash),
      "\">workload class</a> · <a href=\"/runs/", UrlSegment(row.run_id),
      ".csv\">CSV</a> · <a href=\"/runs/", UrlSegment(row.run_id),
      ".lsbundle\">bundle</a> (lockstep verify) · site ", Esc(row.site), " · ",
      Esc(VisibilityText(row)), " · sha256 <code>", Esc(row.content_sha256),
      "</code> <span class=\"muted\">signed in as ", Esc(v.name), "</span></nav>");
  const size_t body = report.find("<body");
  if (body == std::string::npos) return banner + report;
  const size_t end = report.find('>', body);
  report.insert(end + 1, banner);
  return report;
}

std::string ClassPage(const Viewer& v, const ClassData& data) {
  std::string out = Head(absl::StrCat("Workload class ", data.workload_hash.substr(0, 12)), v);
  std::map<std::string, uint32_t> servers;
  for (size_t i = 0; i < data.sites.size(); ++i) {
    servers[data.sites[i]] = data.systems[i].site().server_nodes();
  }
  absl::StrAppend(&out, "<p>", Esc(data.workload_class), "</p><p class=\"muted\">Only runs of "
                  "this class (same workload hash: the same phases, sizes, counts, patterns "
                  "and cache barriers) are compared here, each site by its newest ",
                  kClassRunsPerSite, " runs of it. <a href=\"",
                  UrlSegment(data.workload_hash), ".csv\">CSV</a></p>");
  std::string key;
  for (const SiteResultRow& r : data.rows) {
    if (r.result_key != key) {
      if (!key.empty()) absl::StrAppend(&out, "</table></div>");
      key = r.result_key;
      absl::StrAppend(&out, "<h2>", Esc(key), "</h2><div class=\"box\"><table data-result=\"",
                      Esc(key), "\"><tr><th>site</th><th>median MiB/s</th><th>spread "
                      "(min–max of run medians)</th><th>runs</th><th>clients</th><th>tasks</th>"
                      "<th>MiB/s per client</th><th>MiB/s per server</th>"
                      "<th title=\"end to end / min(network, back end), from net and backend "
                      "phases\">efficiency</th></tr>");
    }
    const uint32_t nserv = servers[r.site];
    absl::StrAppend(&out, "<tr data-site=\"", Esc(r.site), "\"><td>", Esc(r.site),
                    "</td><td class=\"n median\">", Mib(r.median_mib_s), "</td><td class=\"n\">",
                    Mib(r.min_mib_s), "–", Mib(r.max_mib_s), "</td><td class=\"n\">", r.runs,
                    "</td><td class=\"n\">", r.client_agents, "</td><td class=\"n\">",
                    r.num_tasks, "</td><td class=\"n\">",
                    r.client_agents > 0 ? Mib(r.median_mib_s / r.client_agents) : "",
                    "</td><td class=\"n\">", nserv > 0 ? Mib(r.median_mib_s / nserv) : "",
                    "</td><td class=\"n efficiency\">",
                    r.efficiency ? absl::StrFormat("%.1f%%", 100 * *r.efficiency) : "",
                    "</td></tr>");
  }
  if (!key.empty()) absl::StrAppend(&out, "</table></div>");
  absl::StrAppend(&out, "<h2>Systems, differences first</h2><div class=\"box\"><table><tr>"
                        "<th></th>");
  for (const std::string& s : data.sites) absl::StrAppend(&out, "<th>", Esc(s), "</th>");
  absl::StrAppend(&out, "</tr>");
  for (const SystemRow& row : SystemTable(data.systems)) {
    absl::StrAppend(&out, "<tr", row.differs ? " class=\"diff\"" : "", "><th>", Esc(row.what),
                    "</th>");
    for (const std::string& val : row.values) absl::StrAppend(&out, "<td>", Esc(val), "</td>");
    absl::StrAppend(&out, "</tr>");
  }
  return absl::StrCat(out, "</table></div></body></html>\n");
}

std::string ClassCsv(const ClassData& data) {
  std::string out = "workload_hash,result,site,median_mib_s,min_mib_s,max_mib_s,runs,"
                    "client_agents,tasks,efficiency\n";
  for (const SiteResultRow& r : data.rows) {
    absl::StrAppend(&out, CsvCell(data.workload_hash), ",", CsvCell(r.result_key), ",",
                    CsvCell(r.site), ",",
                    Mib(r.median_mib_s), ",", Mib(r.min_mib_s), ",", Mib(r.max_mib_s), ",",
                    r.runs, ",", r.client_agents, ",", r.num_tasks, ",",
                    r.efficiency ? absl::StrFormat("%.4f", *r.efficiency) : "", "\n");
  }
  return out;
}

std::string ErrorPage(const std::string& title, const std::string& message) {
  return absl::StrCat("<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>",
                      Esc(title), "</title>", kStyle, "</head><body><h1>", Esc(title),
                      "</h1><p>", Esc(message), "</p></body></html>\n");
}

}  // namespace lockstep
