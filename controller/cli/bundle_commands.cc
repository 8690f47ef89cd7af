#include "controller/cli/bundle_commands.h"

#include <cstdio>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/files.h"
#include "common/pem.h"
#include "common/status_macros.h"
#include "controller/cli/command_specs.h"
#include "controller/cli/exit_codes.h"
#include "controller/results/bundle.h"
#include "controller/results/history.h"
#include "controller/results/run_ref.h"
#include "controller/results/site_compare.h"
#include "controller/results/site_file.h"
#include "controller/results/system_description.h"

namespace lockstep {
namespace {

int Fail(const char* cmd, const absl::Status& s) {
  std::fprintf(stderr, "lockstep %s: %s\n", cmd, std::string(s.message()).c_str());
  return s.code() == absl::StatusCode::kInvalidArgument ? kExitUsage : kExitFailure;
}

int Usage(const CommandSpec& command, const std::string& error) {
  std::fprintf(stderr, "%s: %s\n%s", command.FullName().c_str(), error.c_str(),
               FormatUsage(command).c_str());
  return kExitUsage;
}

absl::StatusOr<SiteCredential> CredentialFromFlags(const ParsedFlags& f) {
  const std::string& key = f.GetString("key");
  const std::string& cert = f.GetString("cert");
  const std::string& dir = f.GetString("credentials");
  if (!dir.empty()) {
    if (!key.empty() || !cert.empty()) {
      return absl::InvalidArgumentError("give --credentials DIR or --key and --cert, not both");
    }
    return ReadSiteCredentialDir(dir, f.GetString("site"));
  }
  if (key.empty() || cert.empty()) {
    return absl::InvalidArgumentError(
        "--bundle signs the run with the site's credential: give --key FILE and --cert FILE, "
        "or --credentials DIR");
  }
  return ReadSiteCredential(key, cert);
}

// The bundle content of the resolved run: its directory's files when it is
// a run directory (or a run.json in one), else its stored run.json alone.
absl::StatusOr<v1::BundleContent> ContentOf(const ResolvedRun& run, LazyHistory* db,
                                            const std::string& site,
                                            const v1::SystemDescription& system) {
  if (run.origin == ResolvedRun::Origin::kHistory) {
    ASSIGN_OR_RETURN(HistoryStore * store, db->Get());
    ASSIGN_OR_RETURN(std::string json, store->RunJsonText(run.record.run_id()));
    return BundleContentFromRunJson(json, absl::StrCat(store->path(), " (run ",
                                                       run.record.run_id(), ")"),
                                    site, system);
  }
  if (run.origin == ResolvedRun::Origin::kJournal) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "%s has no run.json; rebuild it with `lockstep report %s` first", run.path, run.path));
  }
  // A run.json file: its directory holds the run's other files when it is
  // named run.json (a run directory); otherwise the file alone.
  if (absl::EndsWith(run.path, "/run.json") || run.path == "run.json") {
    const size_t slash = run.path.rfind('/');
    const std::string dir = slash == std::string::npos ? "." : run.path.substr(0, slash);
    return BundleContentFromRunDir(dir.empty() ? "/" : dir, site, system);
  }
  ASSIGN_OR_RETURN(std::string json, ReadFileToString(run.path));
  return BundleContentFromRunJson(json, run.path, site, system);
}

}  // namespace

int ExportBundleCommand(const ParsedFlags& f) {
  const CommandSpec& spec = ExportCommandSpec();
  if (f.positional().size() != 2) {
    return Usage(spec, "--bundle takes a run and the bundle file to write: RUN FILE.lsbundle");
  }
  auto credential = CredentialFromFlags(f);
  if (!credential.ok()) return Fail("export", credential.status());
  auto cn = CertificateSite(credential->cert_pem, credential->cert_path);
  if (!cn.ok()) return Fail("export", cn.status());
  const std::string site = f.GetString("site").empty() ? *cn : f.GetString("site");
  v1::SiteDescription described;
  described.set_site(site);
  if (!f.GetString("site-file").empty()) {
    auto parsed = ReadSiteFile(f.GetString("site-file"));
    if (!parsed.ok()) return Fail("export", parsed.status());
    if (parsed->site() != site) {
      return Fail("export", absl::InvalidArgumentError(absl::StrFormat(
                                "%s names site \"%s\" but the bundle is signed for site \"%s\"; "
                                "fix its site key or give that site's credential",
                                f.GetString("site-file"), parsed->site(), site)));
    }
    described = *parsed;
  }
  LazyHistory db(f.GetString("db"));
  auto run = ResolveRunRef(f.positional()[0], &db, {.restore_telemetry = false});
  if (!run.ok()) {
    Fail("export", run.status());
    return ExitCodeForRunRef(run.status());
  }
  auto content = ContentOf(*run, &db, site, DescribeSystem(run->record, described));
  if (!content.ok()) return Fail("export", content.status());
  auto bundle = SignBundle(*content, *credential);
  if (!bundle.ok()) return Fail("export", bundle.status());
  const std::string& out = f.positional()[1];
  if (auto s = WriteBundleFile(out, *bundle); !s.ok()) return Fail("export", s);
  std::printf("wrote %s: run %s of site %s, sha256 %s, workload %.12s (%s)\n", out.c_str(),
              content->run_id().c_str(), site.c_str(), bundle->content_sha256().c_str(),
              content->workload_hash().c_str(), content->workload_class().c_str());
  return kExitOk;
}

int VerifyCommand(const std::vector<std::string>& args) {
  const CommandSpec& spec = VerifyCommandSpec();
  auto f = ParseFlags(args, spec);
  if (auto code = HelpOrUsageExit(spec, f)) return *code;
  if (f->positional().size() != 1) return Usage(spec, "give one bundle file");
  const std::string& path = f->positional()[0];
  auto bundle = ReadBundleFile(path);
  if (!bundle.ok()) return Fail("verify", bundle.status());
  std::string ca;
  if (!f->GetString("ca").empty()) {
    auto text = ReadFileToString(f->GetString("ca"));
    if (!text.ok()) return Fail("verify", text.status());
    // A --ca that holds no certificate is a bad command line (exit 2), not a
    // bundle whose chain failed (6).
    if (auto certs = ParseCertBundle(*text, "--ca " + f->GetString("ca")); !certs.ok()) {
      return Usage(spec, std::string(certs.status().message()));
    }
    ca = std::move(*text);
  }
  const BundleVerdict v = VerifyBundle(*bundle, ca, path);
  if (!v.ok()) {
    std::fprintf(stderr, "lockstep verify: %s\n", std::string(v.status.message()).c_str());
    return kExitVerify;
  }
  std::printf("%s: ok: run %s of site %s\n  sha256 %s\n  workload %s (%s)\n  %s\n", path.c_str(),
              v.content.run_id().c_str(), v.content.site().c_str(), v.content_sha256.c_str(),
              v.content.workload_hash().c_str(), v.content.workload_class().c_str(),
              v.chain_checked
                  ? "signed by the site's certificate, issued by the given CA"
                  : "signed by the key of the certificate it carries; the certificate's issuer "
                    "was NOT checked (give --ca CA.pem)");
  return kExitOk;
}

int CompareSitesCommand(const ParsedFlags& f, const std::string& db_file) {
  auto store = HistoryStore::Open(db_file, {.create_if_missing = false});
  if (!store.ok()) return Fail("compare", store.status());
  SiteCompareOptions options;
  options.sites = f.GetList("sites");
  options.plan = f.GetString("plan");
  options.runs_per_site = static_cast<int>(f.GetUint("runs"));
  options.force = f.GetBool("force");
  auto sides = LoadSiteRuns(**store, options);
  if (!sides.ok()) {
    std::fprintf(stderr, "lockstep compare: %s\n", std::string(sides.status().message()).c_str());
    return sides.status().code() == absl::StatusCode::kNotFound ? kExitFailure : kExitUsage;
  }
  std::printf("%s", FormatSiteComparison(*sides, CompareSites(*sides)).c_str());
  return kExitOk;
}

}  // namespace lockstep
