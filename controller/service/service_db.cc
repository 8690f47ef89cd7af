#include "controller/service/service_db.h"

#include <google/protobuf/util/message_differencer.h>

#include <libpq-fe.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <pqxx/pqxx>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "controller/record/layers.h"
#include "controller/results/compare.h"
#include "controller/results/history.h"
#include "controller/results/run_json.h"
#include "controller/service/service_input.h"

namespace lockstep {
namespace {

// Migration N brings the schema from version N-1 to N.
constexpr const char* kMigrations[] = {
    // 1: principals, runs, results and the indexes the pages use.
    R"sql(
CREATE TABLE principals (
  name text PRIMARY KEY,
  role text NOT NULL CHECK (role IN ('site', 'reader')),
  token_sha256 text UNIQUE,
  admitted_unix_s bigint NOT NULL,
  revoked_unix_s bigint);
CREATE TABLE runs (
  id bigserial PRIMARY KEY,
  run_id text NOT NULL UNIQUE,
  content_sha256 text NOT NULL UNIQUE,
  site text NOT NULL REFERENCES principals(name),
  name text NOT NULL,
  plan_sha256 text NOT NULL,
  workload_hash text NOT NULL,
  workload_class text NOT NULL,
  system_name text NOT NULL,
  system_pb bytea NOT NULL,
  started_at timestamptz,
  started_text text NOT NULL,
  status text NOT NULL,
  client_agents integer NOT NULL,
  visibility text NOT NULL DEFAULT 'shared' CHECK (visibility IN ('shared', 'private')),
  embargo_until timestamptz,
  pushed_at timestamptz NOT NULL DEFAULT now(),
  bundle_bytes integer NOT NULL,
  bundle bytea NOT NULL);
CREATE INDEX runs_site_plan ON runs (site, name, started_at DESC);
CREATE INDEX runs_workload ON runs (workload_hash, site, started_at DESC);
CREATE TABLE results (
  run bigint NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  result_key text NOT NULL,
  operation text NOT NULL,
  median_mib_s double precision NOT NULL,
  min_mib_s double precision NOT NULL,
  max_mib_s double precision NOT NULL,
  repetitions integer NOT NULL,
  num_tasks integer NOT NULL,
  PRIMARY KEY (run, result_key));
)sql",
    // 2: a write or read result's efficiency beside its layers (issue 42:
    // end to end / min(network, back end), the median over its repetitions);
    // NULL where the run measured no lower layer.
    R"sql(
ALTER TABLE results ADD COLUMN efficiency double precision;
)sql",
    // 3: the certificate a site was admitted with (SHA-256 of its DER): a
    // site revoked and admitted again is its new certificate only.
    R"sql(
ALTER TABLE principals ADD COLUMN cert_sha256 text;
)sql",
};
static_assert(std::size(kMigrations) == kSchemaVersion);

absl::Status Unreachable(const std::string& conninfo, const std::string& why) {
  return absl::UnavailableError(absl::StrCat(
      "the results database (", conninfo, ") cannot be reached: ", why,
      "; the service connects again by itself on the next request, nothing was stored"));
}

struct ResultRowData {
  std::string key, operation;
  double median = 0, min = 0, max = 0;
  int reps = 0, tasks = 0;
  std::optional<double> efficiency;  // with net or backend phases in its test
};

std::vector<ResultRowData> ResultRowsOf(const v1::RunRecord& run, int* client_agents) {
  std::vector<ResultRowData> rows;
  *client_agents = 0;
  for (const v1::TestRecord& test : run.tests()) {
    *client_agents = std::max<int>(*client_agents, static_cast<int>(test.client_agents()));
    for (const v1::SummaryRow& row : test.summary()) {
      std::vector<double> values = RepValues(row);
      if (values.empty()) continue;
      ResultRowData d;
      d.key = KeyOf(row, test).ToString();
      d.operation = row.operation();
      d.min = *std::min_element(values.begin(), values.end());
      d.max = *std::max_element(values.begin(), values.end());
      d.median = Median(values);
      d.reps = static_cast<int>(values.size());
      d.tasks = static_cast<int>(row.num_tasks());
      if (std::vector<double> eff = EfficienciesOf(test, row.phase()); !eff.empty()) {
        d.efficiency = Median(eff);
      }
      rows.push_back(std::move(d));
    }
  }
  return rows;
}

// The run's text that goes into text columns: UTF-8 (protobuf saw to it)
// without NUL, which PostgreSQL's text cannot hold and libpq would cut at
// ("night\0ly" stored as "night").
absl::Status CheckTextColumns(const v1::BundleContent& content, const v1::RunRecord& run,
                              const std::vector<ResultRowData>& rows) {
  const std::pair<const char*, const std::string*> fields[] = {
      {"run.json name", &run.name()},
      {"run.json plan_sha256", &run.plan_sha256()},
      {"run.json started_at", &run.started_at()},
      {"run.json status", &run.status()},
      {"the bundle's workload_hash", &content.workload_hash()},
      {"the bundle's workload_class", &content.workload_class()},
      {"site.toml system", &content.system().site().system()}};
  for (const auto& [what, text] : fields) {
    if (absl::Status s = CheckStorableText(what, *text); !s.ok()) return s;
  }
  for (const ResultRowData& r : rows) {
    if (absl::Status s = CheckStorableText(
            "a result's key (run.json's phase, operation, API and sweep)", r.key);
        !s.ok()) {
      return s;
    }
    if (absl::Status s = CheckStorableText("run.json summary operation", r.operation); !s.ok()) {
      return s;
    }
  }
  return absl::OkStatus();
}

}  // namespace

namespace {

// `conninfo` as libpq reads it (keywords or a URI), each set option but the
// password as KEYWORD=VALUE: what a message or log line may show.
std::string WithoutPassword(const std::string& conninfo) {
  char* error = nullptr;
  PQconninfoOption* options = PQconninfoParse(conninfo.c_str(), &error);
  if (options == nullptr) {
    PQfreemem(error);
    return "(a connection string libpq cannot parse)";
  }
  std::string shown;
  for (const PQconninfoOption* o = options; o->keyword != nullptr; ++o) {
    if (o->val == nullptr || o->val[0] == '\0' || std::string_view(o->keyword) == "password") {
      continue;
    }
    absl::StrAppend(&shown, shown.empty() ? "" : " ", o->keyword, "=", o->val);
  }
  PQconninfoFree(options);
  return shown;
}

}  // namespace

ServiceDb::ServiceDb(std::string conninfo, int max_idle_connections, int max_connections)
    : conninfo_(std::move(conninfo)),
      shown_conninfo_(WithoutPassword(conninfo_)),
      max_idle_(max_idle_connections),
      max_in_use_(std::max(1, max_connections)) {}

ServiceDb::~ServiceDb() = default;

absl::Status ServiceDb::With(const std::function<void(pqxx::connection&)>& body) {
  {
    std::unique_lock<std::mutex> lock(mu_);
    if (!slot_free_.wait_for(lock, std::chrono::seconds(30),
                             [this] { return in_use_ < max_in_use_; })) {
      return absl::UnavailableError(absl::StrCat(
          "the results database is busy: all ", max_in_use_, " connections of this service "
          "were in use for 30 s; nothing was stored, try again"));
    }
    ++in_use_;
  }
  absl::Status s = OnConnection(body);
  {
    std::lock_guard<std::mutex> lock(mu_);
    --in_use_;
  }
  slot_free_.notify_one();
  return s;
}

absl::Status ServiceDb::OnConnection(const std::function<void(pqxx::connection&)>& body) {
  // A pooled connection may have died with a restarted server: then every
  // idle one has, so they are dropped and the body runs once more on a new
  // connection. Running it again is safe: a transaction that broke did not
  // commit, and one whose commit's answer was lost is a push, which is
  // idempotent on the content hash.
  for (int attempt = 0;; ++attempt) {
    std::unique_ptr<pqxx::connection> c;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!idle_.empty()) {
        c = std::move(idle_.back());
        idle_.pop_back();
      }
    }
    const bool reused = c != nullptr;
    bool broken = false;
    std::string why;
    try {
      if (c == nullptr || !c->is_open()) c = std::make_unique<pqxx::connection>(conninfo_);
      body(*c);
    } catch (const pqxx::broken_connection& e) {
      broken = true;
      why = e.what();
    } catch (const pqxx::sql_error& e) {
      // A connection that died inside a statement reports SQLSTATE class 08
      // (or 57P: the server shutting down): unreachable, not a bug.
      const std::string state = e.sqlstate();
      if (state.rfind("08", 0) != 0 && state.rfind("57P", 0) != 0) {
        return absl::InternalError(absl::StrCat("results database: ", e.what(), " (query: ",
                                                e.query().substr(0, 200), ")"));
      }
      broken = true;
      why = e.what();
    } catch (const std::exception& e) {
      if (c != nullptr && c->is_open()) {
        return absl::InternalError(absl::StrCat("results database: ", e.what()));
      }
      broken = true;
      why = e.what();
    }
    if (!broken) {
      std::lock_guard<std::mutex> lock(mu_);
      if (static_cast<int>(idle_.size()) < max_idle_) idle_.push_back(std::move(c));
      return absl::OkStatus();
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      idle_.clear();
    }
    if (!reused || attempt > 0) return Unreachable(shown_conninfo_, why);
  }
}

absl::StatusOr<int> ServiceDb::Version() {
  int version = 0;
  absl::Status s = With([&](pqxx::connection& c) {
    pqxx::work w(c);
    pqxx::result exists = w.exec("SELECT to_regclass('schema_version') IS NOT NULL");
    if (!exists[0][0].as<bool>()) return;
    pqxx::result r = w.exec("SELECT version FROM schema_version");
    if (!r.empty()) version = r[0][0].as<int>();
  });
  if (!s.ok()) return s;
  return version;
}

absl::Status ServiceDb::Migrate() {
  int found = 0;
  absl::Status s = With([&](pqxx::connection& c) {
    pqxx::work w(c);
    // Serialises migrations of services started together (lock ends with
    // the transaction).
    w.exec("SELECT pg_advisory_xact_lock(4040404040)");
    w.exec("CREATE TABLE IF NOT EXISTS schema_version (version integer NOT NULL)");
    pqxx::result r = w.exec("SELECT version FROM schema_version");
    if (r.empty()) w.exec("INSERT INTO schema_version VALUES (0)");
    found = r.empty() ? 0 : r[0][0].as<int>();
    if (found > kSchemaVersion) return;
    for (int v = found; v < kSchemaVersion; ++v) w.exec(kMigrations[v]);
    w.exec_params("UPDATE schema_version SET version = $1", kSchemaVersion);
    w.commit();
  });
  if (!s.ok()) return s;
  if (found > kSchemaVersion) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "the results database has schema version %d, newer than this lockstep-service's %d; "
        "run a newer lockstep-service", found, kSchemaVersion));
  }
  return absl::OkStatus();
}

absl::Status ServiceDb::Admit(const std::string& name, const std::string& role,
                              const std::string& token_sha256, const std::string& cert_sha256) {
  if (absl::Status s = CheckPrincipalName(name); !s.ok()) return s;
  bool already = false;
  absl::Status s = With([&](pqxx::connection& c) {
    pqxx::work w(c);
    pqxx::result r = w.exec_params(
        "SELECT role, revoked_unix_s IS NULL FROM principals WHERE name = $1 FOR UPDATE", name);
    const int64_t now_s = absl::ToUnixSeconds(absl::Now());
    const char* token = token_sha256.empty() ? nullptr : token_sha256.c_str();
    const char* cert = cert_sha256.empty() ? nullptr : cert_sha256.c_str();
    if (r.empty()) {
      w.exec_params("INSERT INTO principals (name, role, token_sha256, admitted_unix_s, "
                    "cert_sha256) VALUES ($1, $2, $3, $4, $5)", name, role, token, now_s, cert);
    } else if (r[0][1].as<bool>()) {
      already = true;
      return;
    } else {
      w.exec_params("UPDATE principals SET role = $2, token_sha256 = $3, admitted_unix_s = $4, "
                    "revoked_unix_s = NULL, cert_sha256 = $5 WHERE name = $1",
                    name, role, token, now_s, cert);
    }
    w.commit();
  });
  if (!s.ok()) return s;
  if (already) {
    return absl::AlreadyExistsError(absl::StrCat(
        "\"", name, "\" is admitted already; revoke it first (lockstep-service revoke ", name,
        ") to issue a new credential"));
  }
  return absl::OkStatus();
}

absl::Status ServiceDb::Revoke(const std::string& name) {
  int changed = 0;
  absl::Status s = With([&](pqxx::connection& c) {
    pqxx::work w(c);
    pqxx::result r = w.exec_params(
        "UPDATE principals SET revoked_unix_s = $2 WHERE name = $1 AND revoked_unix_s IS NULL",
        name, absl::ToUnixSeconds(absl::Now()));
    changed = static_cast<int>(r.affected_rows());
    w.commit();
  });
  if (!s.ok()) return s;
  if (changed == 0) {
    return absl::NotFoundError(absl::StrCat("no admitted site or reader is named \"", name, "\""));
  }
  return absl::OkStatus();
}

namespace {
absl::StatusOr<Principal> OnePrincipal(ServiceDb* db, const char* where, const std::string& value,
                                       const std::string& what) {
  std::optional<Principal> found;
  absl::Status s = db->With([&](pqxx::connection& c) {
    pqxx::read_transaction w(c);
    pqxx::result r = w.exec_params(
        absl::StrCat("SELECT name, role, admitted_unix_s, coalesce(revoked_unix_s, 0), "
                     "coalesce(cert_sha256, '') FROM principals WHERE ", where, " = $1"),
        value);
    if (r.empty()) return;
    found = Principal{.name = r[0][0].as<std::string>(),
                      .role = r[0][1].as<std::string>(),
                      .admitted_unix_s = r[0][2].as<int64_t>(),
                      .revoked_unix_s = r[0][3].as<int64_t>(),
                      .cert_sha256 = r[0][4].as<std::string>()};
  });
  if (!s.ok()) return s;
  if (!found) return absl::NotFoundError(what);
  return *found;
}
}  // namespace

absl::StatusOr<Principal> ServiceDb::FindPrincipal(const std::string& name) {
  return OnePrincipal(this, "name", name,
                      absl::StrCat("\"", name, "\" is not admitted to this results service"));
}

absl::StatusOr<Principal> ServiceDb::FindReaderByToken(const std::string& token_sha256) {
  return OnePrincipal(this, "token_sha256", token_sha256, "the token is not a reader's token");
}

namespace {
// True when `stored_bundle` (a serialised RunBundle) holds the run of
// `content`: the same site and an equal run record (`run`, parsed).
bool IsSameRun(const std::string& stored_bundle, const v1::BundleContent& content,
               const v1::RunRecord& run) {
  v1::RunBundle stored;
  v1::BundleContent stored_content;
  if (!stored.ParseFromString(stored_bundle) ||
      !stored_content.ParseFromString(stored.content()) ||
      stored_content.site() != content.site()) {
    return false;
  }
  auto stored_run = ParseRunJson(stored_content.run_json(), "the stored run");
  return stored_run.ok() &&
         google::protobuf::util::MessageDifferencer::Equals(*stored_run, run);
}

// The runs table's visibility and embargo_until (null unless an embargo)
// of `v`: an embargoed run is 'shared' from its embargo's end.
const char* VisibilityColumn(const RunVisibility& v) {
  return v.kind == RunVisibility::kPrivate ? "private" : "shared";
}
std::optional<double> EmbargoColumn(const RunVisibility& v) {
  if (v.kind != RunVisibility::kEmbargo) return std::nullopt;
  return static_cast<double>(v.until_unix_s);
}
}  // namespace

absl::StatusOr<PushOutcome> ServiceDb::StoreRun(const v1::RunBundle& bundle,
                                                const v1::BundleContent& content,
                                                const RunVisibility& visibility) {
  auto run = ParseRunJson(content.run_json(), absl::StrCat("bundle ", bundle.content_sha256()));
  if (!run.ok()) return run.status();
  // The id the run is stored and listed under is its record's own, and one
  // that is safe as a URL segment and a file name wherever it goes next.
  if (content.run_id() != run->run_id()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "the bundle names run %s but its run.json is run %s; nothing was stored",
        content.run_id(), run->run_id()));
  }
  if (!IsSafeRunId(content.run_id())) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "run id \"%s\" is not 1 to 128 of A-Z a-z 0-9 . _ -; nothing was stored",
        absl::CEscape(content.run_id())));
  }
  int client_agents = 0;
  const std::vector<ResultRowData> rows = ResultRowsOf(*run, &client_agents);
  if (absl::Status s = CheckTextColumns(content, *run, rows); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(s.message(), "; nothing was stored"));
  }
  auto started_ns = ParseDateOrTime(run->started_at());
  const std::string bytes = bundle.SerializeAsString();
  PushOutcome outcome = PushOutcome::kStored;
  std::string other_sha, other_site;
  absl::Status s = With([&](pqxx::connection& c) {
    pqxx::work w(c);
    // The run stored under this id, if any: this run (already stored), or
    // another (other_sha and other_site say whose).
    const auto stored_already = [&] {
      pqxx::result existing = w.exec_params(
          "SELECT content_sha256, bundle, site FROM runs WHERE run_id = $1", content.run_id());
      if (existing.empty()) return false;
      other_sha = existing[0][0].as<std::string>();
      other_site = existing[0][2].as<std::string>();
      outcome = PushOutcome::kAlreadyStored;
      // The same run packed from another source (its run directory, then
      // its history db: `push --all`) is that run, already stored: same
      // site, same run record. The copy stored first is kept.
      if (other_sha != bundle.content_sha256() &&
          IsSameRun(pqxx::binarystring(existing[0][1]).str(), content, *run)) {
        other_sha.clear();
      }
      return true;
    };
    if (stored_already()) return;
    const std::string system_pb = content.system().SerializeAsString();
    std::optional<double> started_s;
    if (started_ns.ok()) started_s = static_cast<double>(*started_ns) / 1e9;
    pqxx::result id = w.exec_params(
        "INSERT INTO runs (run_id, content_sha256, site, name, plan_sha256, workload_hash, "
        "workload_class, system_name, system_pb, started_at, started_text, status, "
        "client_agents, bundle_bytes, bundle, visibility, embargo_until) VALUES ($1, $2, $3, "
        "$4, $5, $6, $7, $8, $9, to_timestamp($10), $11, $12, $13, $14, $15, $16, "
        "to_timestamp($17)) ON CONFLICT DO NOTHING RETURNING id",
        content.run_id(), bundle.content_sha256(), content.site(), run->name(),
        run->plan_sha256(), content.workload_hash(), content.workload_class(),
        content.system().site().system(), pqxx::binarystring(system_pb), started_s,
        run->started_at(), run->status(), client_agents, static_cast<int64_t>(bytes.size()),
        pqxx::binarystring(bytes), VisibilityColumn(visibility), EmbargoColumn(visibility));
    if (id.empty()) {  // a concurrent push of this run id won (now committed)
      if (!stored_already()) outcome = PushOutcome::kAlreadyStored;
      return;
    }
    const int64_t run_pk = id[0][0].as<int64_t>();
    for (const ResultRowData& r : rows) {
      w.exec_params("INSERT INTO results (run, result_key, operation, median_mib_s, min_mib_s, "
                    "max_mib_s, repetitions, num_tasks, efficiency) VALUES ($1, $2, $3, $4, $5, "
                    "$6, $7, $8, $9) ON CONFLICT DO NOTHING",
                    run_pk, r.key, r.operation, r.median, r.min, r.max, r.reps, r.tasks,
                    r.efficiency);
    }
    w.commit();
  });
  if (!s.ok()) return s;
  if (!other_sha.empty() && other_sha != bundle.content_sha256() &&
      other_site != content.site()) {
    // Another site's run, perhaps private: neither its site nor its hash.
    return absl::AlreadyExistsError(absl::StrFormat(
        "run id %s names another site's run on this service: a run id names one run, so this "
        "one cannot be stored under it; nothing was stored", content.run_id()));
  }
  if (!other_sha.empty() && other_sha != bundle.content_sha256()) {
    return absl::AlreadyExistsError(absl::StrFormat(
        "run %s is stored already with content sha256 %s, and this bundle's is %s: a run id "
        "names one run; nothing was stored", content.run_id(), other_sha,
        bundle.content_sha256()));
  }
  return outcome;
}

absl::Status ServiceDb::SetVisibility(const std::string& site, const std::string& run_id,
                                      const RunVisibility& visibility) {
  std::string owner;
  absl::Status s = With([&](pqxx::connection& c) {
    pqxx::work w(c);
    pqxx::result r = w.exec_params("SELECT site FROM runs WHERE run_id = $1 FOR UPDATE", run_id);
    if (r.empty()) return;
    owner = r[0][0].as<std::string>();
    if (owner != site) return;
    w.exec_params("UPDATE runs SET visibility = $2, embargo_until = to_timestamp($3) "
                  "WHERE run_id = $1",
                  run_id, VisibilityColumn(visibility), EmbargoColumn(visibility));
    w.commit();
  });
  if (!s.ok()) return s;
  // Another site's run is answered as one that does not exist: it may be
  // private, and neither its owner nor its existence is this site's to learn.
  if (owner != site) {
    return absl::NotFoundError(absl::StrCat("site ", site, " has no run ", run_id,
                                            " on this service; a site changes only its own runs"));
  }
  return absl::OkStatus();
}

}  // namespace lockstep
