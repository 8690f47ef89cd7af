#!/bin/bash
# The results service at scale (issue 40, item 9), not a timed test:
#   results_service.sh BUILD_DIR [SITES [RUNS_PER_SITE [THREADS]]]
# (defaults 100 sites x 1000 runs = 10^5 runs, 8 pushing threads). Starts a
# private PostgreSQL and lockstep-service, admits SITES sites, makes one real
# run (lockstep run --local 2) and pushes SITES x RUNS signed bundles made
# from it (service_bench: each its own run id, night and figures), then:
#   push rate (pushes/s, ms per push)
#   p50/p95 of the trend, run, cross-site and index pages (4 readers at once)
#   bytes per run in PostgreSQL (the database's size over the runs)
#   50 clients pushing at once, each bundle by 2 of them: lost 0, doubled 0
# Prints the figures; leaves nothing behind.
set -euo pipefail
BUILD=$(cd "$1" && pwd)
SITES=${2:-100}
RUNS=${3:-1000}
THREADS=${4:-8}
source "$(dirname "$0")/../service/pg_lib.sh"
scratch_with_postgres service-bench
pg_start -c shared_buffers=512MB -c max_connections=200
SVC=$BUILD/lockstep-service
SP=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
URL="https://127.0.0.1:$SP"
"$SVC" init --tls_dir "$T/svc" >/dev/null
"$SVC" migrate --db "$DB" >/dev/null
echo "== admitting $SITES sites"
for i in $(seq 0 $((SITES - 1))); do
  s=$(printf 'site%03d' "$i")
  "$SVC" admit "$s" --db "$DB" --tls_dir "$T/svc" --out "$T/creds/$s" >/dev/null
done
TOKEN=$("$SVC" reader bench --db "$DB" 2>/dev/null)
"$SVC" serve --db "$DB" --tls_dir "$T/svc" --listen "127.0.0.1:$SP" >"$T/service.log" 2>&1 &
SERVICE_PID=$!
for _ in $(seq 100); do
  curl -sf --cacert "$T/svc/ca.pem" -H "Authorization: Bearer $TOKEN" "$URL/index.csv" >/dev/null && break
  sleep 0.1
done
echo "== one real run as the template"
cp "$(dirname "$0")/../service/nightly.toml" "$T/plan.toml"
(cd "$T" && "$BUILD/lockstep" run plan.toml --local 2 --out "$T/results" >/dev/null)
TEMPLATE=$(ls "$T"/results/*/run.json | head -1)
echo "== pushing $SITES x $RUNS runs with $THREADS threads"
"$BUILD/tests/service_bench" push "$URL" "$T/svc/ca.pem" "$T/creds" "$TEMPLATE" "$SITES" "$RUNS" "$THREADS"
q "VACUUM ANALYZE" >/dev/null
N=$(q "select count(*) from runs")
BYTES=$(q "select pg_database_size('postgres')")
EMPTY_NOTE="(the whole database, schema and indexes included)"
echo "runs stored: $N; database $BYTES bytes = $((BYTES / N)) bytes per run $EMPTY_NOTE"
echo "bundle bytes per run: $(q "select avg(bundle_bytes)::int from runs")"
# FILL_TO=N: when fewer runs were pushed, copies of them made by SQL (new run
# ids, earlier nights, the same typed rows; an empty bundle, so their own run
# pages are not timed) bring the tables to N runs for the page times. Said so.
if [ -n "${FILL_TO:-}" ] && [ "$FILL_TO" -gt "$N" ]; then
  K=$(( (FILL_TO - N + N - 1) / N ))
  echo "== filling to about $FILL_TO runs by SQL copies ($K per pushed run)"
  q "WITH ins AS (
       INSERT INTO runs (run_id, content_sha256, site, name, plan_sha256, workload_hash,
         workload_class, system_name, system_pb, started_at, started_text, status,
         client_agents, visibility, bundle_bytes, bundle)
       SELECT r.run_id || '-copy' || g, md5(r.content_sha256 || g) || md5(g || r.run_id),
         r.site, r.name, r.plan_sha256, r.workload_hash, r.workload_class, r.system_name,
         r.system_pb, r.started_at - make_interval(days => g * 1000), r.started_text, r.status,
         r.client_agents, r.visibility, 0, ''::bytea
       FROM runs r CROSS JOIN generate_series(1, $K) g
       RETURNING id, run_id)
     INSERT INTO results SELECT ins.id, x.result_key, x.operation, x.median_mib_s, x.min_mib_s,
       x.max_mib_s, x.repetitions, x.num_tasks
     FROM ins JOIN runs o ON o.run_id = split_part(ins.run_id, '-copy', 1)
     JOIN results x ON x.run = o.id" >/dev/null
  q "VACUUM ANALYZE" >/dev/null
  N=$(q "select count(*) from runs")
fi
echo "== page times at $N runs (4 readers at once)"
RUN=$(q "select run_id from runs where site = 'site000' order by started_at desc limit 1")
HASH=$(q "select workload_hash from runs limit 1")
"$BUILD/tests/service_bench" pages "$URL" "$T/svc/ca.pem" "$TOKEN" 200 \
    /sites/site000/plans/nightly "/runs/$RUN" "/classes/$HASH" /
echo "== 50 clients pushing at once, each new bundle by 2 of them"
BEFORE=$N
# site000's nights RUNS.. are new: 50 x 2 pushes of 500 new runs in all.
"$BUILD/tests/service_bench" push "$URL" "$T/svc/ca.pem" "$T/creds" "$TEMPLATE" 1 $((RUNS + 500)) 50 2 || true
AFTER=$(q "select count(*) from runs")
DOUBLED=$(q "select count(*) - count(distinct run_id) from runs")
echo "concurrent: runs before $BEFORE, after $AFTER: new $((AFTER - BEFORE)) of 500 expected" \
     "(lost $((500 - (AFTER - BEFORE)))), doubled $DOUBLED"
