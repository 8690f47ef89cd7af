#include "controller/cli/push_command.h"

#include "controller/cli/command_handlers.h"

#include <array>
#include <cstdio>
#include <optional>
#include <set>

#include <toml++/toml.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/files.h"
#include "common/status_macros.h"
#include "controller/cli/command_specs.h"
#include "controller/cli/exit_codes.h"
#include "controller/push/push_client.h"
#include "controller/results/bundle.h"
#include "controller/results/history.h"
#include "controller/results/run_ref.h"
#include "controller/results/site_file.h"
#include "controller/results/system_description.h"

namespace lockstep {
namespace {

constexpr std::array<FlagSpec, 10> kPushFlags = {{
    {.name = "to", .value_name = "URL",
     .help = "the results service, https://HOST:PORT"},
    {.name = "credentials", .value_name = "DIR",
     .help = "the site's certificate and key as `lockstep-service admit` wrote them "
             "(site-NAME.pem and .key)"},
    {.name = "ca", .value_name = "FILE",
     .help = "the service's CA certificate: the service must present a certificate it issued"},
    {.name = "site-file", .value_name = "FILE",
     .help = "the site's site.toml, put in each bundle's system description"},
    {.name = "spool", .value_name = "DIR", .default_value = "lockstep-results/spool",
     .help = "where bundles wait while the service cannot take them"},
    {.name = "pending", .kind = FlagKind::kBool,
     .help = "list the spooled bundles; with --to, send them"},
    {.name = "all", .kind = FlagKind::kBool,
     .help = "push every run of the history db (--db), keeping its run ids"},
    {.name = "db", .value_name = "FILE", .default_value = "lockstep-results/history.db",
     .help = "the history db that names runs by id (and that --all reads)"},
    {.name = "site", .value_name = "NAME",
     .help = "the site (default: the certificate's CN; must be it)"},
    {.name = "visibility", .value_name = "WHO", .default_value = "shared",
     .help = "who else sees the runs pushed now: shared, private or \"embargo YYYY-MM-DD\" "
             "(stored with the run; a spooled run keeps it)"},
}};

// A CA file: a few certificates, a few KB each.
constexpr uint64_t kMaxCaFileBytes = 1 << 20;

int Fail(const absl::Status& s) {
  std::fprintf(stderr, "lockstep push: %s\n", std::string(s.message()).c_str());
  return s.code() == absl::StatusCode::kInvalidArgument ? kExitUsage : kExitFailure;
}

struct Pusher {
  PushTarget target;
  std::string spool;
  SiteCredential credential;
  std::string site;
  v1::SiteDescription described;
  RunVisibility visibility;  // --visibility, for the runs named now
  bool visibility_given = false;  // and set on a run the service has already
  int stored = 0, already = 0, spooled = 0, refused = 0, lost = 0;
  std::set<std::string> sent;  // content hashes tried by this push

  // Sends `bundle` unless this push has tried its content already (a run
  // named that waited in the spool too). The result, or nullopt when skipped.
  std::optional<PushResult> Send(const v1::RunBundle& bundle, const std::string& what,
                                 const RunVisibility& as) {
    if (!sent.insert(Sha256Hex(bundle.content())).second) {
      std::printf("%s: sent from the spool above\n", what.c_str());
      return std::nullopt;
    }
    PushResult r = PushOrSpool(target, spool, bundle, as);
    const char* verdict = r.kind == PushResult::kStored          ? "stored"
                          : r.kind == PushResult::kAlreadyStored ? "already stored"
                          : r.kind == PushResult::kUnreachable   ? "NOT delivered"
                                                                 : "REFUSED";
    (r.kind == PushResult::kStored          ? stored
     : r.kind == PushResult::kAlreadyStored ? already
     : r.kind == PushResult::kUnreachable   ? (r.spooled ? spooled : lost)
                                            : refused)++;
    std::printf("%s: %s: %s\n", what.c_str(), verdict, r.message.c_str());
    return r;
  }

  // A run named now: sent, and when the service had it already and
  // --visibility was given, its visibility set as asked.
  void SendNamed(const v1::RunBundle& bundle, const std::string& what) {
    std::optional<PushResult> r = Send(bundle, what, visibility);
    if (!r || r->kind != PushResult::kAlreadyStored || !visibility_given) return;
    v1::BundleContent content;
    content.ParseFromString(bundle.content());
    absl::Status s = SetRunVisibility(target, content.run_id(), visibility);
    if (s.ok()) {
      std::printf("%s: visibility set to %s\n", what.c_str(),
                  RunVisibilityText(visibility).c_str());
    } else {
      std::printf("%s: visibility NOT set: %s\n", what.c_str(), std::string(s.message()).c_str());
      ++refused;
    }
  }

  int ExitCode() const {
    std::printf("pushed: %d stored, %d already stored, %d spooled, %d refused", stored, already,
                spooled, refused);
    std::printf(lost > 0 ? ", %d neither delivered nor spooled\n" : "\n", lost);
    if (refused > 0 || lost > 0) return kExitFailure;
    return spooled > 0 ? kExitConnect : kExitOk;
  }

  absl::StatusOr<v1::RunBundle> FromRef(const std::string& ref, LazyHistory* db) {
    if (absl::EndsWith(ref, kBundleExtension)) return ReadBundleFile(ref);
    ASSIGN_OR_RETURN(ResolvedRun run, ResolveRunRef(ref, db, {.restore_telemetry = false}));
    const v1::SystemDescription system = DescribeSystem(run.record, described);
    absl::StatusOr<v1::BundleContent> content;
    if (run.origin == ResolvedRun::Origin::kHistory) {
      ASSIGN_OR_RETURN(HistoryStore * store, db->Get());
      ASSIGN_OR_RETURN(std::string json, store->RunJsonText(run.record.run_id()));
      content = BundleContentFromRunJson(json, absl::StrCat(store->path(), " (run ", ref, ")"),
                                         site, system);
    } else if (absl::EndsWith(run.path, "run.json")) {
      const size_t slash = run.path.rfind('/');
      content = BundleContentFromRunDir(slash == std::string::npos ? "." : run.path.substr(0, slash),
                                        site, system);
    } else {
      return absl::InvalidArgumentError(absl::StrCat(ref, ": not a run with a run.json"));
    }
    if (!content.ok()) return content.status();
    return SignBundle(*content, credential);
  }
};

absl::Status Setup(const PushSettings& f, Pusher* p) {
  p->spool = f.spool;
  p->visibility = f.visibility;
  p->visibility_given = f.visibility_given;
  p->target.url = f.url;
  RETURN_IF_ERROR(CheckServiceUrl(p->target.url));
  if (f.credentials.empty() || f.ca.empty()) {
    return absl::InvalidArgumentError(
        "give --credentials DIR (the site's certificate and key) and --ca FILE (the service's "
        "CA), as `lockstep-service admit SITE` wrote them");
  }
  ASSIGN_OR_RETURN(p->credential, ReadSiteCredentialDir(f.credentials, f.site));
  ASSIGN_OR_RETURN(std::string cn, CertificateSite(p->credential.cert_pem,
                                                   p->credential.cert_path));
  p->site = f.site.empty() ? cn : f.site;
  p->described.set_site(p->site);
  if (!f.site_file.empty()) {
    ASSIGN_OR_RETURN(p->described, ReadSiteFile(f.site_file));
  }
  p->target.cert_path = p->credential.cert_path;
  p->target.key_path = p->credential.key_path;
  p->target.ca_path = f.ca;
  // Before any push: a CA that cannot be read is a bad command line, not a
  // service that cannot be reached (whose runs would be spooled).
  if (absl::StatusOr<std::string> ca = ReadFileAtMost(f.ca, kMaxCaFileBytes, "a CA file");
      !ca.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("--ca: ", ca.status().message()));
  }
  return absl::OkStatus();
}

void SendSpool(Pusher* p) {
  for (const std::string& path : SpooledBundles(p->spool)) {
    auto bundle = ReadBundleFile(path);
    if (!bundle.ok()) {
      std::fprintf(stderr, "lockstep push: %s (left in the spool)\n",
                   std::string(bundle.status().message()).c_str());
      continue;
    }
    std::optional<PushResult> r =
        p->Send(*bundle, absl::StrCat("spooled ", path), SpooledVisibility(path));
    if (r && r->kind == PushResult::kRefused) {
      absl::StatusOr<std::string> kept = SetAsideRefused(path);
      std::printf("  %s\n", kept.ok() ? absl::StrCat("moved to ", *kept,
                                                     ": kept, and not sent again").c_str()
                                      : std::string(kept.status().message()).c_str());
    }
  }
}

int ListSpool(const std::string& spool) {
  const std::vector<std::string> files = SpooledBundles(spool);
  for (const std::string& path : files) {
    auto bundle = ReadBundleFile(path);
    v1::BundleContent content;
    if (bundle.ok()) content.ParseFromString(bundle->content());
    std::printf("%s  run %s  site %s\n", path.c_str(), content.run_id().c_str(),
                content.site().c_str());
  }
  std::printf("%zu bundle(s) waiting in %s\n", files.size(), spool.c_str());
  return kExitOk;
}

}  // namespace

const CommandSpec kPushCommandSpec = {
    .program = "lockstep",
    .name = "push",
    .synopsis = "RUN...|FILE.lsbundle... --to URL --credentials DIR --ca FILE\n"
                "--all --db FILE --to URL --credentials DIR --ca FILE\n"
                "--pending [--to URL --credentials DIR --ca FILE]",
    .summary = "send runs to a shared results service (spooled while it is unreachable)",
    .description =
        "Signs each run as a bundle with the site's credential and sends it to the results "
        "service (lockstep-service). Spooled bundles are sent first. A run the service cannot "
        "take now is kept in the spool and sent by the next push (exit 3); the same run twice "
        "is stored once. --all moves a whole history db over, keeping its run ids.",
    .flags = kPushFlags,
    .handler = PushHandler,
};

int PushCommand(const std::vector<std::string>& args) {
  auto f = ParseFlags(args, kPushCommandSpec);
  if (auto code = HelpOrUsageExit(kPushCommandSpec, f)) return *code;
  if (f->GetBool("pending") && f->GetString("to").empty()) return ListSpool(f->GetString("spool"));
  Pusher p;
  auto visibility = ParseRunVisibility(f->GetString("visibility"));
  if (!visibility.ok()) return Fail(visibility.status());
  if (absl::Status s = CheckChosenVisibility(*visibility, absl::ToUnixSeconds(absl::Now()));
      !s.ok()) {
    return Fail(s);
  }
  const PushSettings settings{.url = f->GetString("to"), .credentials = f->GetString("credentials"),
                              .ca = f->GetString("ca"), .site = f->GetString("site"),
                              .site_file = f->GetString("site-file"),
                              .spool = f->GetString("spool"), .db = f->GetString("db"),
                              .visibility = *visibility,
                              .visibility_given = f->Has("visibility")};
  if (absl::Status s = Setup(settings, &p); !s.ok()) return Fail(s);
  std::vector<std::string> refs = f->positional();
  LazyHistory db(f->GetString("db"));
  if (f->GetBool("all")) {
    auto store = db.Get();
    if (!store.ok()) return Fail(store.status());
    auto runs = (*store)->List({.limit = 0});
    if (!runs.ok()) return Fail(runs.status());
    for (auto it = runs->rbegin(); it != runs->rend(); ++it) refs.push_back(it->run_id);
  } else if (refs.empty() && !f->GetBool("pending")) {
    return Fail(absl::InvalidArgumentError("name runs or bundle files, or give --all or --pending"));
  }
  SendSpool(&p);
  for (const std::string& ref : refs) {
    auto bundle = p.FromRef(ref, &db);
    if (!bundle.ok()) {
      std::printf("%s: REFUSED here: %s\n", ref.c_str(),
                  std::string(bundle.status().message()).c_str());
      ++p.refused;
      continue;
    }
    p.SendNamed(*bundle, ref);
  }
  return p.ExitCode();
}

std::string PlanRunString(const std::string& plan_text, const char* key) {
  try {
    toml::table t = toml::parse(plan_text);
    return t["run"][key].value_or(std::string());
  } catch (const std::exception&) {
    return "";
  }
}

int PushRunDirectory(const PushSettings& settings, const std::string& run_dir) {
  Pusher p;
  if (absl::Status s = Setup(settings, &p); !s.ok()) return Fail(s);
  SendSpool(&p);
  LazyHistory db(settings.db);
  auto bundle = p.FromRef(run_dir, &db);
  if (!bundle.ok()) return Fail(bundle.status());
  p.SendNamed(*bundle, run_dir);
  return p.ExitCode();
}

}  // namespace lockstep
