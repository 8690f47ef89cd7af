// The results service's web view (issue 7 of issue 40): server-rendered
// HTML, no script and nothing fetched from elsewhere (inline CSS and SVG),
// readable at 1300 px and on a laptop (tables scroll inside their box), and
// a CSV of every table. Pure functions of what service_queries.h read.
//
//   /                         sites, their systems and plans
//   /sites/SITE/plans/PLAN    a plan's runs at a site as a trend, each point
//                             and row a link to its run (.csv: the table)
//   /runs/RUN                 the run's report (report.h's RenderHtml), its
//                             hash, site and visibility (.csv, .lsbundle)
//   /classes/HASH             one workload class across sites: each site's
//                             median, spread, runs, clients, per client;
//                             the systems side by side, differences first
#ifndef LOCKSTEP_CONTROLLER_SERVICE_SERVICE_PAGES_H_
#define LOCKSTEP_CONTROLLER_SERVICE_SERVICE_PAGES_H_

#include <string>
#include <string_view>
#include <vector>

#include "controller/service/service_queries.h"
#include "lockstep/v1/results.pb.h"

namespace lockstep {

// A path segment percent-encoded (unreserved characters kept).
std::string UrlSegment(std::string_view s);

std::string IndexPage(const Viewer& v, const std::vector<SitePlanRow>& rows);
std::string IndexCsv(const std::vector<SitePlanRow>& rows);
std::string TrendPage(const Viewer& v, const std::string& site, const std::string& plan,
                      const TrendData& data);
std::string TrendCsv(const TrendData& data);
std::string RunPage(const Viewer& v, const RunRow& row, const v1::RunRecord& run);
std::string ClassPage(const Viewer& v, const ClassData& data);
std::string ClassCsv(const ClassData& data);
// A page that says what went wrong (status code chosen by the caller).
std::string ErrorPage(const std::string& title, const std::string& message);

}  // namespace lockstep

#endif  // LOCKSTEP_CONTROLLER_SERVICE_SERVICE_PAGES_H_
