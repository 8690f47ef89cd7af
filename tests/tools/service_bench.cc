// service_bench: load for tests/bench/results_service.sh (issue 40, item 9).
// Makes signed bundles of many sites from one real run.json (each its own
// run id, night and figures), pushes them over HTTPS with many threads, and
// times the service's pages.
//
//   service_bench push  URL CA CREDS_ROOT TEMPLATE_RUN_JSON SITES RUNS_PER_SITE THREADS [DUP]
//     CREDS_ROOT/SITE/site-SITE.{pem,key} for SITE = site000..; every bundle
//     is pushed DUP times (default 1) by different threads at once. Prints
//     pushes, stored, already stored, failed and the rate.
//   service_bench pages URL CA TOKEN N PATH...
//     GETs each PATH N times (one connection per thread of 4) and prints
//     p50/p95/max ms per path; fails on any status but 200.
#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/files.h"
#include "controller/push/push_client.h"
#include "controller/results/bundle.h"
#include "controller/results/run_json.h"

namespace lockstep {
namespace {

using Clock = std::chrono::steady_clock;

v1::RunBundle MakeOne(const v1::RunRecord& base, const std::string& site, int n,
                      const SiteCredential& cred) {
  v1::RunRecord run = base;
  run.set_run_id(absl::StrFormat("%s-night-%05d", site, n));
  run.set_started_at(absl::StrFormat("20%02d-%02d-%02dT02:00:00Z", 20 + n / 336,
                                     1 + (n / 28) % 12, 1 + n % 28));
  const double scale = 0.8 + 0.4 * ((n * 7919 + site.size() * 31) % 100) / 100.0;
  for (v1::TestRecord& t : *run.mutable_tests()) {
    for (v1::SummaryRow& row : *t.mutable_summary()) {
      for (double& v : *row.mutable_bw_mib_per_rep()) v *= scale;
      row.set_bw_mean_mib(row.bw_mean_mib() * scale);
    }
  }
  v1::SystemDescription system;
  system.mutable_site()->set_site(site);
  system.mutable_site()->set_system(site + "-testbed");
  auto content = BundleContentFromRunJson(RunToJson(run), "bench", site, system);
  if (!content.ok()) {
    std::fprintf(stderr, "%s\n", content.status().ToString().c_str());
    std::exit(1);
  }
  auto bundle = SignBundle(*content, cred);
  if (!bundle.ok()) {
    std::fprintf(stderr, "%s\n", bundle.status().ToString().c_str());
    std::exit(1);
  }
  return *bundle;
}

int Push(char** argv, int argc) {
  const std::string url = argv[2], ca = argv[3], root = argv[4];
  auto base = ReadRunJson(argv[5]);
  if (!base.ok()) return std::fprintf(stderr, "%s\n", base.status().ToString().c_str()), 1;
  const int sites = std::atoi(argv[6]), per_site = std::atoi(argv[7]);
  const int threads = std::atoi(argv[8]), dup = argc > 9 ? std::atoi(argv[9]) : 1;
  std::atomic<int> next{0}, stored{0}, already{0}, failed{0};
  const int total = sites * per_site;
  std::vector<SiteCredential> creds(sites);
  for (int s = 0; s < sites; ++s) {
    const std::string name = absl::StrFormat("site%03d", s);
    auto c = ReadSiteCredentialDir(absl::StrCat(root, "/", name), name);
    if (!c.ok()) return std::fprintf(stderr, "%s\n", c.status().ToString().c_str()), 1;
    creds[s] = *c;
  }
  std::mutex mu;
  std::string first_error;
  const auto t0 = Clock::now();
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&] {
      for (int i; (i = next++) < total * dup;) {
        const int run = i / dup;  // the dup copies of one run go out together
        const int s = run % sites;
        const v1::RunBundle b = MakeOne(*base, absl::StrFormat("site%03d", s), run / sites,
                                        creds[s]);
        PushTarget target{.url = url, .cert_path = creds[s].cert_path,
                          .key_path = creds[s].key_path, .ca_path = ca};
        PushResult r = PushBundle(target, b, RunVisibility{});
        if (r.kind == PushResult::kStored) {
          ++stored;
        } else if (r.kind == PushResult::kAlreadyStored) {
          ++already;
        } else {
          ++failed;
          std::lock_guard<std::mutex> lock(mu);
          if (first_error.empty()) first_error = r.message;
        }
      }
    });
  }
  for (auto& t : pool) t.join();
  const double s = std::chrono::duration<double>(Clock::now() - t0).count();
  std::printf("pushes %d (runs %d x %d), stored %d, already %d, failed %d, %.1f s, %.1f pushes/s,"
              " %.2f ms per push per thread\n",
              total * dup, total, dup, stored.load(), already.load(), failed.load(), s,
              total * dup / s, 1000.0 * s * threads / (total * dup));
  if (!first_error.empty()) std::printf("first failure: %s\n", first_error.c_str());
  return failed == 0 ? 0 : 1;
}

int Pages(char** argv, int argc) {
  const std::string url = argv[2], ca = argv[3], token = argv[4];
  const int n = std::atoi(argv[5]);
  const std::string hostport = url.substr(8);
  const std::string host = hostport.substr(0, hostport.rfind(':'));
  const int port = std::atoi(hostport.substr(hostport.rfind(':') + 1).c_str());
  int bad = 0;
  for (int a = 6; a < argc; ++a) {
    const std::string path = argv[a];
    std::vector<double> ms;
    std::mutex mu;
    std::atomic<int> next{0};
    size_t bytes = 0;
    std::vector<std::thread> pool;
    for (int t = 0; t < 4; ++t) {
      pool.emplace_back([&] {
        httplib::SSLClient c(host, port);
        c.set_ca_cert_path(ca);
        c.enable_server_certificate_verification(true);
        c.set_read_timeout(60, 0);
        httplib::Headers h = {{"Authorization", "Bearer " + token}};
        while (next++ < n) {
          const auto t0 = Clock::now();
          auto res = c.Get(path.c_str(), h);
          const double d = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
          std::lock_guard<std::mutex> lock(mu);
          if (!res || res->status != 200) {
            ++bad;
            std::fprintf(stderr, "%s: %d %s\n", path.c_str(), res ? res->status : 0,
                         res ? res->body.substr(0, 200).c_str() : "no answer");
            continue;
          }
          bytes = res->body.size();
          ms.push_back(d);
        }
      });
    }
    for (auto& t : pool) t.join();
    std::sort(ms.begin(), ms.end());
    if (ms.empty()) continue;
    std::printf("%-60s n=%zu p50 %.1f ms p95 %.1f ms max %.1f ms (%zu bytes)\n", path.c_str(),
                ms.size(), ms[ms.size() / 2], ms[std::min(ms.size() - 1, ms.size() * 95 / 100)],
                ms.back(), bytes);
  }
  return bad == 0 ? 0 : 1;
}

}  // namespace
}  // namespace lockstep

int main(int argc, char** argv) {
  const std::string cmd = argc > 1 ? argv[1] : "";
  if (cmd == "push" && argc >= 9) return lockstep::Push(argv, argc);
  if (cmd == "pages" && argc >= 7) return lockstep::Pages(argv, argc);
  std::fprintf(stderr, "usage: service_bench push URL CA CREDS_ROOT RUN_JSON SITES RUNS THREADS [DUP]\n"
                       "       service_bench pages URL CA TOKEN N PATH...\n");
  return 2;
}
