#!/bin/bash
# The shared results service with its real parts (issue 40, item 8): a
# private PostgreSQL started here (initdb in a temporary directory, as the
# postgres user when root: PostgreSQL refuses root), the real lockstep-service
# over HTTPS, real runs of real agents (lockstep run --local) pushed by two
# sites with their own certificates, and the attacks and faults:
#   a revoked site and a site that was never admitted: refused, nothing stored
#   a site pushing another site's bundle: refused
#   a tampered bundle: refused naming the hash check
#   the service SIGKILLed after storing a push, before answering: the client
#     spools it, the retry after the restart leaves exactly one run
#   the service down: the run is spooled, sent by `push --pending` later
#   a history db moved over with `push --all`: runs in = runs out, ids kept
#   a private run and an embargoed run: never shown to another site or reader
#   PostgreSQL stopped under the running service: 503 saying so; started
#     again: the service reconnects by itself
#   the web view in headless Chromium (page_check.py): the trend and
#     cross-site pages show the right medians, fit 1300 px, fetch nothing
#     outside, run no script
# Exit 77 (skipped) with the reason when PostgreSQL's or Chromium's binaries
# are missing.
#   service_test.sh SOURCE_DIR LOCKSTEP LOCKSTEP_SERVICE
set -euo pipefail
SRC=$1
LOCKSTEP=$2
SERVICE=$3
PGBIN=${LOCKSTEP_PG_BIN:-/usr/lib/postgresql/15/bin}  # pg_lib.sh reads it too
skip() { echo "SKIPPED: $*"; exit 77; }
[ -x "$PGBIN/initdb" ] || skip "no PostgreSQL server at $PGBIN (Debian: apt-get install postgresql-15)"
CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
[ -n "$CHROMIUM" ] || skip "no chromium for the web view checks (Debian: apt-get install chromium)"
source "$SRC/tests/service/pg_lib.sh"
scratch_with_postgres service-test
fail() { { echo "FAIL: $*"; echo "--- service log"; tail -30 "$T/service.log" 2>/dev/null; } >&2; exit 1; }
# Polls a command until it succeeds or 30 s pass.
eventually() {
  local deadline=$((SECONDS + 30))
  until "$@" >/dev/null 2>&1; do
    [ $SECONDS -lt $deadline ] || fail "not within 30 s: $*"
    sleep 0.2
  done
}

pg_start

SP=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
URL="https://127.0.0.1:$SP"
"$SERVICE" init --tls_dir "$T/svc" --host localhost,127.0.0.1 >/dev/null
for s in sitea siteb sitec; do
  "$SERVICE" admit $s --db "$DB" --tls_dir "$T/svc" --out "$T/creds/$s" >/dev/null
done
"$SERVICE" revoke sitec --db "$DB" >/dev/null
# admit never writes over a credential: a site admitted already is refused
# before its files are touched (its key and certificate were replaced, then
# refused: the site was locked out); a revoked site's old files in --out stay
# too. A name that cannot be a file name is refused naming its character.
admit_out() {  # ARGS... -> exit code; output in $T/out
  set +e; "$SERVICE" admit "$@" --db "$DB" --tls_dir "$T/svc" >"$T/out" 2>&1; local rc=$?; set -e
  echo $rc
}
creds_sum() { cat "$T/creds/$1/site-$1.pem" "$T/creds/$1/site-$1.key" | sha256sum; }
before=$(creds_sum sitea)
[ "$(admit_out sitea --out "$T/creds/sitea")" = 1 ] \
    && grep -q "admitted already.*nothing was written" "$T/out" || fail "admit of an admitted site: $(cat "$T/out")"
before_c=$(creds_sum sitec)
[ "$(admit_out sitec --out "$T/creds/sitec")" = 1 ] && grep -q "never written over" "$T/out" \
    || fail "admit over a revoked site's files: $(cat "$T/out")"
[ "$(creds_sum sitea)" = "$before" ] && [ "$(creds_sum sitec)" = "$before_c" ] \
    || fail "admit wrote over a site's credential"
[ "$(admit_out team/a --out "$T/creds/team")" = 2 ] && grep -q "it holds '/'" "$T/out" \
    && [ ! -e "$T/creds/team" ] || fail "admit team/a: $(cat "$T/out")"
admitted=$(q "select count(*) from principals where name in ('sitec', 'team/a')
               and revoked_unix_s is null")
[ "$admitted" = 0 ] || fail "a refused admit admitted"
echo "ok: admit refuses an admitted site and a name that is no file name, writing nothing"
# sited: a site certificate of the service's CA (site role), never admitted;
# siten: admitted, but its certificate (made by hand) carries no site role.
site_cert() {  # NAME [EXTENSIONS]
  mkdir -p "$T/creds/$1"
  openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=$1" \
      -keyout "$T/creds/$1/site-$1.key" -out "$T/$1.csr" 2>/dev/null
  local ext=()
  [ -n "${2:-}" ] && { printf '%s\n' "$2" >"$T/$1.ext"; ext=(-extfile "$T/$1.ext"); }
  openssl x509 -req -in "$T/$1.csr" -CA "$T/svc/ca.pem" -CAkey "$T/svc/ca.key" \
      -CAcreateserial -days 2 "${ext[@]}" -out "$T/creds/$1/site-$1.pem" 2>/dev/null
}
site_cert sited "extendedKeyUsage=clientAuth,2.25.282725516736918236083537311734699386127.3"
"$SERVICE" admit siten --db "$DB" --tls_dir "$T/svc" --out "$T/creds/siten-issued" >/dev/null
site_cert siten
TOKEN=$("$SERVICE" reader viewer --db "$DB" 2>/dev/null)

start_service() {
  "$SERVICE" serve --db "$DB" --tls_dir "$T/svc" --listen "127.0.0.1:$SP" "$@" \
      >>"$T/service.log" 2>&1 &
  SERVICE_PID=$!
  eventually curl -sf --cacert "$T/svc/ca.pem" -H "Authorization: Bearer $TOKEN" "$URL/index.csv"
}
stop_service() { kill -9 "$SERVICE_PID"; wait "$SERVICE_PID" 2>/dev/null || true; SERVICE_PID=""; }
start_service

# Real runs of real agents: three at site A, one at site B, one plan.
cp "$SRC/tests/service/nightly.toml" "$T/plan.toml"
run_at() {  # SITE -> prints the new run directory
  local before after
  before=$(ls "$T/$1/results" 2>/dev/null | grep -v '\.db' || true)
  (cd "$T" && "$LOCKSTEP" run "$T/plan.toml" --local 2 --out "$T/$1/results" --site "$1" \
      >"$T/$1.run.log" 2>&1) || fail "lockstep run at $1: $(tail -5 "$T/$1.run.log")"
  after=$(ls "$T/$1/results" | grep -v '\.db')
  echo "$T/$1/results/$(comm -13 <(echo "$before" | sort) <(echo "$after" | sort) | head -1)"
}
A1=$(run_at sitea) && A2=$(run_at sitea) && A3=$(run_at sitea) && B1=$(run_at siteb) || exit 1
id_of() { basename "$1"; }
push() {  # SITE ARGS...: lockstep push as SITE; output in $T/out, exit code echoed
  local site=$1; shift
  set +e
  "$LOCKSTEP" push "$@" --to "$URL" --credentials "$T/creds/$site" --ca "$T/svc/ca.pem" \
      --spool "$T/$site/spool" >"$T/out" 2>&1
  local rc=$?
  set -e
  echo $rc
}
runs() { q "select count(*) from runs"; }

# Two sites push; the same run twice is one run.
[ "$(push sitea "$A1")" = 0 ] && grep -q "stored run $(id_of "$A1")" "$T/out" || fail "push A1: $(cat "$T/out")"
[ "$(push sitea "$A1")" = 0 ] && grep -q "already stored" "$T/out" || fail "push A1 again: $(cat "$T/out")"
[ "$(runs)" = 1 ] || fail "the same run pushed twice: $(runs) runs"
echo "ok: two pushes of one run, one run stored"

# The third sites: revoked, never admitted.
[ "$(push sitec "$A2")" = 1 ] && grep -q "sitec.*revoked" "$T/out" || fail "revoked site: $(cat "$T/out")"
[ "$(push sited "$A2")" = 1 ] && grep -q "CN=sited is not an admitted site" "$T/out" \
    || fail "unknown site: $(cat "$T/out")"
[ "$(push siten "$A2")" = 1 ] && grep -q "CN=siten carries the role none, not a site's" "$T/out" \
    || fail "a certificate without the site role: $(cat "$T/out")"
curl -s --cacert "$T/svc/ca.pem" -o "$T/anon" -w '%{http_code}' "$URL/" | grep -q 401 \
    && grep -q "no credential" "$T/anon" || fail "anonymous read: $(cat "$T/anon")"
[ "$(runs)" = 1 ] || fail "a refused push stored something"
echo "ok: revoked, unknown, role-less and anonymous refused, naming the subject"

# Admitted again after a revocation, a site is its new certificate only: the
# old one (perhaps the one that leaked) stays refused.
"$SERVICE" admit sitec --db "$DB" --tls_dir "$T/svc" --out "$T/creds/sitec-new" >/dev/null
[ "$(push sitec "$A2")" = 1 ] && grep -q "not the one it was last admitted with" "$T/out" \
    || fail "the revoked certificate after a new admission: $(cat "$T/out")"
[ "$(runs)" = 1 ] || fail "a push with a replaced certificate stored something"
"$SERVICE" revoke sitec --db "$DB" >/dev/null
echo "ok: a site admitted again is refused its old certificate"

# Another site's bundle; a tampered bundle.
"$LOCKSTEP" export --bundle "$A2" "$T/a2.lsbundle" --credentials "$T/creds/sitea" >/dev/null
[ "$(push siteb "$T/a2.lsbundle")" = 1 ] && grep -q "siteb may push only runs under its own name" \
    "$T/out" || fail "another site's bundle: $(cat "$T/out")"
python3 - "$T/a2.lsbundle" "$T/tampered.lsbundle" <<'PY'
import sys
b = bytearray(open(sys.argv[1], "rb").read())
i = b.find(b'"status"')           # inside run.json, inside the signed content
b[i + 1] ^= 0x20
open(sys.argv[2], "wb").write(bytes(b))
PY
[ "$(push sitea "$T/tampered.lsbundle")" = 1 ] && grep -qi "hash" "$T/out" \
    || fail "tampered bundle: $(cat "$T/out")"
[ "$(runs)" = 1 ] || fail "another site's or a tampered bundle was stored"
echo "ok: another site's bundle and a tampered bundle refused"

# A run id that would forge a line of the run list ({"run_id":"x1","site":
# "siteb",...}) or a path: refused, nothing stored.
cp -r "$A2" "$T/forged"
python3 - "$T/forged/run.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
r["run_id"] = 'x1","site":"siteb'
json.dump(r, open(sys.argv[1], "w"))
PY
"$LOCKSTEP" export --bundle "$T/forged" "$T/forged.lsbundle" --credentials "$T/creds/sitea" \
    >/dev/null || fail "export of the forged run"
[ "$(push sitea "$T/forged.lsbundle")" = 1 ] && grep -q "is not 1 to 128" "$T/out" \
    || fail "a forged run id: $(cat "$T/out")"
[ "$(runs)" = 1 ] || fail "a forged run id was stored"
echo "ok: a run id that is not one refused"

# A body is refused before it is read unless its length is declared and its
# sender authenticates: chunked (411), compressed (415), anonymous (401).
body_code() {  # CURL ARGS... -> the HTTP code of an anonymous POST
  curl -s --cacert "$T/svc/ca.pem" -o "$T/body" -w '%{http_code}' "$@" "$URL/api/v1/runs" || true
}
# 300 MB offered: a service that read it into memory would pass the peak-RSS
# bound checked below. (With the pre-routing check switched off, this step
# failed at its status: 413, not 411.)
code=$(head -c 300000000 /dev/zero | body_code -H "Transfer-Encoding: chunked" --data-binary @-)
[ "$code" = 411 ] || fail "a chunked anonymous body: $code $(cat "$T/body")"
code=$(body_code -H "Content-Encoding: gzip" --data-binary @"$T/a2.lsbundle")
[ "$code" = 415 ] || fail "a compressed body: $code $(cat "$T/body")"
code=$(body_code --data-binary @"$T/a2.lsbundle")
[ "$code" = 401 ] && grep -q "no credential" "$T/body" || fail "an anonymous body: $code $(cat "$T/body")"
rss_kb=$(awk '/VmHWM/ {print $2}' "/proc/$SERVICE_PID/status")
[ "$rss_kb" -lt 150000 ] || fail "the service's peak RSS is $rss_kb kB after refused bodies"
echo "ok: chunked, compressed and anonymous bodies refused before they are read (peak RSS ${rss_kb} kB)"

# /login sends a browser only to a path of this service.
loc=$(curl -s --cacert "$T/svc/ca.pem" -o /dev/null -w '%{redirect_url}' \
    "$URL/login?token=$TOKEN&next=/%5Cevil.example")
[ "$loc" = "$URL/" ] || fail "/login?next=/\\evil.example redirected to $loc"
loc=$(curl -s --cacert "$T/svc/ca.pem" -o /dev/null -w '%{redirect_url}' \
    "$URL/login?token=$TOKEN&next=/sites/sitea/plans/nightly")
[ "$loc" = "$URL/sites/sitea/plans/nightly" ] || fail "/login?next= an own page: $loc"
echo "ok: /login redirects only to this service's own paths"

# Killed after storing, before answering: the retry leaves exactly one run.
stop_service
start_service --answer_delay_ms 60000
"$LOCKSTEP" push "$A2" --to "$URL" --credentials "$T/creds/sitea" --ca "$T/svc/ca.pem" \
    --spool "$T/sitea/spool" >"$T/bg.out" 2>&1 &
PUSH_PID=$!
# The count is asked anew at each poll (a $(...) argument would be taken once).
a2_stored() { [ "$(q "select count(*) from runs where run_id = '$(id_of "$A2")'")" = 1 ]; }
eventually a2_stored
stop_service
set +e; wait $PUSH_PID; rc=$?; set -e
[ $rc = 3 ] && grep -q "spooled" "$T/bg.out" || fail "push cut off: rc $rc: $(cat "$T/bg.out")"
"$LOCKSTEP" push --pending --spool "$T/sitea/spool" | grep -q "1 bundle(s) waiting" || fail "not listed as pending"
start_service
[ "$(push sitea --pending)" = 0 ] && grep -q "already stored" "$T/out" || fail "retry: $(cat "$T/out")"
[ "$(q "select count(*) from runs where run_id = '$(id_of "$A2")'")" = 1 ] || fail "A2 stored twice"
"$LOCKSTEP" push --pending --spool "$T/sitea/spool" | grep -q "0 bundle(s) waiting" || fail "spool not emptied"
echo "ok: service killed mid-push; the retry left exactly one run"

# The service down: spooled, sent when it is back.
stop_service
[ "$(push siteb "$B1")" = 3 ] && grep -q "spooled" "$T/out" || fail "push to a down service: $(cat "$T/out")"
start_service
[ "$(push siteb --pending)" = 0 ] && grep -q "stored run $(id_of "$B1")" "$T/out" || fail "spool: $(cat "$T/out")"
echo "ok: spooled while the service was down, pushed when it came back"

# A history db moved over: runs in = runs out, ids kept.
[ "$(push sitea --all --db "$T/sitea/results/history.db")" = 0 ] || fail "push --all: $(cat "$T/out")"
want=$(sqlite3 "$T/sitea/results/history.db" "select run_id from runs" | LC_ALL=C sort)
got=$(q "select run_id from runs where site = 'sitea'" | LC_ALL=C sort)
[ "$want" = "$got" ] || fail "push --all: history has [$want], the service [$got]"
echo "ok: push --all: $(echo "$got" | wc -l) runs in, the same out, ids kept"

# Private and embargoed runs: never shown to another site or a reader.
as_site() { local s=$1; shift; curl -sf --cacert "$T/svc/ca.pem" --cert "$T/creds/$s/site-$s.pem" \
    --key "$T/creds/$s/site-$s.key" "$@"; }
as_site sitea -d private "$URL/api/v1/runs/$(id_of "$A3")/visibility" >/dev/null
as_site sitea -d "embargo 2099-01-01" "$URL/api/v1/runs/$(id_of "$A2")/visibility" >/dev/null
as_site siteb -d private "$URL/api/v1/runs/$(id_of "$A1")/visibility" -o /dev/null \
    && fail "site B changed site A's run"
as_site sitea -d "embargo 2020-01-01" "$URL/api/v1/runs/$(id_of "$A3")/visibility" -o /dev/null \
    && fail "an embargo that has already ended was taken"
[ "$(q "select visibility from runs where run_id = '$(id_of "$A3")'")" = private ] \
    || fail "a refused embargo changed the run's visibility"
as_reader() { curl -sf --cacert "$T/svc/ca.pem" -H "Authorization: Bearer $TOKEN" "$@"; }
HASH=$(q "select workload_hash from runs limit 1")
for view in "as_site siteb" as_reader; do
  for path in /api/v1/runs /index.csv /sites/sitea/plans/nightly.csv /sites/sitea/plans/nightly \
              "/classes/$HASH.csv" "/classes/$HASH"; do
    $view "$URL$path" >"$T/view"
    for hidden in "$A3" "$A2"; do
      ! grep -q "$(id_of "$hidden")" "$T/view" || fail "$view $path shows hidden run $(id_of "$hidden")"
    done
  done
  $view "$URL/runs/$(id_of "$A3")" -o /dev/null && fail "$view read the private run's page"
done
as_site sitea "$URL/sites/sitea/plans/nightly.csv" | grep -q "$(id_of "$A3")" || fail "site A cannot see its own private run"
# Nor from the answers to site B's own requests: a push under the private
# run's id names neither its site nor its hash (it named both), and its
# visibility is answered as for an id that does not exist, word for word
# (it was "run X is site sitea's").
cp -r "$B1" "$T/collide"
python3 - "$T/collide/run.json" "$(id_of "$A3")" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
r["run_id"] = sys.argv[2]
json.dump(r, open(sys.argv[1], "w"))
PY
"$LOCKSTEP" export --bundle "$T/collide" "$T/collide.lsbundle" --credentials "$T/creds/siteb" \
    >/dev/null || fail "export of the colliding run"
A3_SHA=$(q "select content_sha256 from runs where run_id = '$(id_of "$A3")'")
[ "$(push siteb "$T/collide.lsbundle")" = 1 ] && grep -q "names another site's run" "$T/out" \
    && ! grep -q -e sitea -e "${A3_SHA:0:12}" "$T/out" \
    || fail "push over a private run's id: $(cat "$T/out")"
vis_answer() {  # RUN_ID -> "CODE BODY" of site B's POST, the id replaced by RUN
  local code
  code=$(curl -s --cacert "$T/svc/ca.pem" --cert "$T/creds/siteb/site-siteb.pem" \
      --key "$T/creds/siteb/site-siteb.key" -d private -o "$T/vis" -w '%{http_code}' \
      "$URL/api/v1/runs/$1/visibility")
  echo "$code $(sed "s/$1/RUN/g" "$T/vis")"
}
hidden=$(vis_answer "$(id_of "$A3")")
absent=$(vis_answer 20261208-000000-nightly-none)
[ "$hidden" = "$absent" ] && [ "${hidden%% *}" = 404 ] \
    || fail "visibility of a private run [$hidden] vs no run [$absent]"
as_site sitea -d shared "$URL/api/v1/runs/$(id_of "$A2")/visibility" >/dev/null
echo "ok: private and embargoed runs hidden from site B and readers in every page and CSV"

# A run pushed private is stored private (never shared for a moment); one
# that waits in the spool keeps the visibility it was pushed with.
A4=$(run_at sitea) && A5=$(run_at sitea) || exit 1
[ "$(push sitea --visibility public "$A4")" = 2 ] && grep -q 'visibility "public"' "$T/out" \
    || fail "a bad --visibility: $(cat "$T/out")"
[ "$(push sitea --visibility "embargo 2020-01-01" "$A4")" = 2 ] && grep -q 'has already ended' "$T/out" \
    || fail "push --visibility with an embargo that has ended: $(cat "$T/out")"
[ "$(push sitea --visibility private "$A4")" = 0 ] || fail "push --visibility private: $(cat "$T/out")"
[ "$(q "select visibility from runs where run_id = '$(id_of "$A4")'")" = private ] \
    || fail "A4 not stored private"
as_site siteb "$URL/api/v1/runs" | grep -q "$(id_of "$A4")" && fail "site B lists the private run"
stop_service
[ "$(push sitea --visibility "embargo 2099-01-01" "$A5")" = 3 ] || fail "spool A5: $(cat "$T/out")"
ls "$T/sitea/spool" | grep -q '\.embargo_2099-01-01\.lsbundle$' || fail "spool name: $(ls "$T/sitea/spool")"
start_service
[ "$(push sitea --pending)" = 0 ] && grep -q "stored run $(id_of "$A5")" "$T/out" \
    || fail "spooled A5: $(cat "$T/out")"
[ "$(q "select visibility || ' ' || to_char(embargo_until at time zone 'UTC', 'YYYY-MM-DD') from runs where run_id = '$(id_of "$A5")'")" = "shared 2099-01-01" ] \
    || fail "A5 not stored under its embargo"
as_reader "$URL/api/v1/runs" | grep -q "$(id_of "$A5")" && fail "a reader lists the embargoed run"
echo "ok: pushed private and embargoed (also from the spool): stored so, hidden at once"

# lockstep run --push with a visibility: a bad word stops the run before it
# starts; a good one stores the run so.
run_push() {  # VISIBILITY: lockstep run --push as site A; output in $T/out, exit code echoed
  set +e
  (cd "$T" && "$LOCKSTEP" run "$T/plan.toml" --local 2 --out "$T/sitea/results" --site sitea \
      --push "$URL" --push_credentials "$T/creds/sitea" --push_ca "$T/svc/ca.pem" \
      --spool "$T/sitea/spool" --push_visibility "$1" >"$T/out" 2>&1)
  local rc=$?
  set -e
  echo $rc
}
before=$(runs)
[ "$(run_push public)" = 2 ] && grep -q 'push_visibility: visibility "public"' "$T/out" \
    || fail "run --push_visibility public: $(cat "$T/out")"
[ "$(runs)" = "$before" ] || fail "a refused run --push stored something"
[ "$(run_push private)" = 0 ] || fail "run --push_visibility private: $(tail -5 "$T/out")"
[ "$(q "select visibility from runs where site = 'sitea' order by id desc limit 1")" = private ] \
    || fail "the run pushed at its end is not private"
echo "ok: lockstep run --push_visibility: a bad word refused before the run, private stored so"

# Efficiency (issue 42): each site's write and read beside the network its
# runs measured, the figure that compares sites of different sizes.
as_reader "$URL/classes/$HASH.csv" >"$T/class.csv"
python3 - "$T/class.csv" <<'PY' || fail "class CSV efficiency: $(cat "$T/class.csv")"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
e2e = [r for r in rows if r["result"].startswith(("write/", "read/"))]
net = [r for r in rows if r["result"].startswith("net/")]
assert e2e and net, rows
assert all(0 < float(r["efficiency"]) < 10 for r in e2e), e2e
assert all(r["efficiency"] == "" for r in net), net
print("class CSV efficiency:", [(r["result"].split()[0], r["site"], r["efficiency"]) for r in e2e])
PY
echo "ok: efficiency per site beside the layers, in the class CSV"

# The results commands against the service, as site B: history lists what B
# may read; gate's last-good is a run of B's own (none here: exit 3), another
# site's shared run only with --site (a site could push a fast run of the
# plan with an earlier start time and become everyone's baseline).
export LOCKSTEP_SERVICE_CREDENTIALS="$T/creds/siteb" LOCKSTEP_SERVICE_CA="$T/svc/ca.pem"
"$LOCKSTEP" history --db "$URL" >"$T/hist" 2>&1 || fail "history --db URL: $(cat "$T/hist")"
grep -q "$(id_of "$A1")" "$T/hist" && grep -q "$(id_of "$B1")" "$T/hist" \
    && ! grep -q "$(id_of "$A3")" "$T/hist" || fail "history --db URL as site B: $(cat "$T/hist")"
set +e; "$LOCKSTEP" gate "$(id_of "$B1")" --db "$URL" >"$T/gate" 2>&1; rc=$?; set -e
[ $rc = 3 ] && grep -q 'of site "siteb"' "$T/gate" || fail "gate --db URL, own site: exit $rc: $(cat "$T/gate")"
set +e; "$LOCKSTEP" gate "$(id_of "$B1")" --db "$URL" --site sitea >"$T/gate" 2>&1; rc=$?; set -e
[ $rc = 0 ] || [ $rc = 1 ] || fail "gate --db URL --site sitea: exit $rc: $(cat "$T/gate")"
grep -q "against baseline" "$T/gate" && ! grep -q "against baseline $(id_of "$B1")" "$T/gate" \
    || fail "gate --site sitea: not against a run of site A: $(cat "$T/gate")"
# compare --sites reads the service's runs as the others do (it opened the
# URL as a file); export to a reader that has gone (`true` exits at once,
# long before export has copied the service's runs and writes) leaves no
# copy of the service's runs behind (SIGPIPE killed it before it removed them).
"$LOCKSTEP" compare --sites sitea,siteb --plan nightly --db "$URL" >"$T/cmp" 2>&1 \
    || fail "compare --sites --db URL: $(cat "$T/cmp")"
grep -q sitea "$T/cmp" && grep -q siteb "$T/cmp" || fail "compare --sites --db URL: $(cat "$T/cmp")"
mirrors() { find /tmp -maxdepth 1 -name 'lockstep-service-history.*' | wc -l; }
before=$(mirrors)
"$LOCKSTEP" export "$(id_of "$B1")" - --db "$URL" 2>"$T/export.err" | true
[ "$(mirrors)" = "$before" ] || fail "export | true left a copy of the service's runs: $(cat "$T/export.err")"
unset LOCKSTEP_SERVICE_CREDENTIALS LOCKSTEP_SERVICE_CA
echo "ok: history, gate (own site, then --site), compare --sites and export against the service"

# push --visibility on a run the service has already sets it (it said
# "already stored" and left the run as it was).
[ "$(push siteb --visibility private "$B1")" = 0 ] && grep -q "visibility set to private" "$T/out" \
    && [ "$(q "select visibility from runs where run_id = '$(id_of "$B1")'")" = private ] \
    || fail "push --visibility private of a stored run: $(cat "$T/out")"
[ "$(push siteb --visibility shared "$B1")" = 0 ] \
    && [ "$(q "select visibility from runs where run_id = '$(id_of "$B1")'")" = shared ] \
    || fail "push --visibility shared of a stored run: $(cat "$T/out")"
echo "ok: push --visibility of a run already stored sets it"

# PostgreSQL stopped under the running service, then started again.
as_pg "$PGBIN/pg_ctl" -D "$T/pg/data" -m fast -w stop >/dev/null
code=$(curl -s --cacert "$T/svc/ca.pem" -H "Authorization: Bearer $TOKEN" -o "$T/down" -w '%{http_code}' "$URL/")
[ "$code" = 503 ] && grep -q "cannot be reached" "$T/down" || fail "database down: $code $(cat "$T/down")"
pg_start
eventually as_reader "$URL/"
echo "ok: database down answered 503 saying so; reconnected by itself"

# The web view in headless Chromium, as a reader: seeded runs A1, A2 (site A)
# and B1 (site B); A3 is private.
SPKI=$(openssl x509 -in "$T/svc/service.pem" -pubkey -noout | openssl pkey -pubin -outform der \
       | openssl dgst -sha256 -binary | base64)
python3 - "$T/expect.json" "$HASH" "$A1" "$A2" -- "$B1" <<'PY'
import json, statistics, sys
out, hsh = sys.argv[1], sys.argv[2]
rest = sys.argv[3:]
sep = rest.index("--")
sites = {"sitea": rest[:sep], "siteb": rest[sep + 1:]}
def medians(run_dir):
    run = json.load(open(run_dir + "/run.json"))
    out = []
    for test in run.get("tests", []):
        for row in test.get("summary", []):
            reps = row.get("bw_mib_per_rep") or row.get("bwMibPerRep") or \
                [row.get("bw_mean_mib", row.get("bwMeanMib", 0))]
            out.append(statistics.median(reps))
    return out
trend = {d.rstrip("/").split("/")[-1]: [f"{m:.2f}" for m in medians(d)] for d in sites["sitea"]}
cls = {}
for site, dirs in sites.items():
    per_run = [medians(d) for d in dirs]
    cls[site] = [f"{statistics.median(col):.2f}" for col in zip(*per_run)]
json.dump({"pages": [{"path": "/sites/sitea/plans/nightly", "kind": "trend", "rows": trend},
                     {"path": f"/classes/{hsh}", "kind": "class", "sites": cls}]}, open(out, "w"))
PY
mkdir -p "$T/shots"
python3 "$SRC/tests/service/page_check.py" "$CHROMIUM" "$T" "$URL" "$TOKEN" "$SPKI" \
    "$T/expect.json" "$T/shots" || fail "web view (expected: $(cat "$T/expect.json"))"
echo "ok: trend and cross-site pages in Chromium: right medians, 1300 px, nothing outside"

# Runs whose run.json was edited (after the pages above, which count the
# runs of the nightly plan's class): NEW_ID NAME_JSON SITE SOURCE_RUN.
variant() {
  cp -r "$4" "$T/$1"
  python3 - "$T/$1/run.json" "$1" "$2" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
r["run_id"], r["name"] = sys.argv[2], json.loads(sys.argv[3])
json.dump(r, open(sys.argv[1], "w"))
PY
  "$LOCKSTEP" export --bundle "$T/$1" "$T/$1.lsbundle" --credentials "$T/creds/$3" >/dev/null \
      || fail "export of $1"
}
site_args() { echo --cert "$T/creds/$1/site-$1.pem" --key "$T/creds/$1/site-$1.key"; }
push_raw() {  # SITE BUNDLE [QUERY] -> HTTP code; body in $T/body (curl, not lockstep push)
  curl -s --cacert "$T/svc/ca.pem" $(site_args "$1") \
      -H "Content-Type: application/x-lockstep-bundle" --data-binary @"$2" -o "$T/body" \
      -w '%{http_code}' "$URL/api/v1/runs${3:-}"
}
code_of() {  # CURL ARGS... -> HTTP code; body in $T/body
  curl -s --cacert "$T/svc/ca.pem" -o "$T/body" -w '%{http_code}' "$@"
}

# A plan named with '/' has its trend page and CSV (the route stopped at the
# decoded %2F: 404 with an empty body).
variant x-slash-1 '"team/nightly <b>"' sitea "$A1"
[ "$(push_raw sitea "$T/x-slash-1.lsbundle")" = 201 ] || fail "push x-slash-1: $(cat "$T/body")"
link=$(as_site sitea "$URL/" | grep -o 'href="/sites/sitea/plans/team[^"]*"' | head -1 \
    | cut -d'"' -f2)
[ "$link" = "/sites/sitea/plans/team%2Fnightly%20%3Cb%3E" ] || fail "the index links $link"
as_site sitea "$URL$link" | grep -q "x-slash-1" || fail "the trend page of team/nightly <b>"
as_site sitea "$URL$link.csv" | grep -q "^x-slash-1,sitea,team/nightly <b>," \
    || fail "the trend CSV of team/nightly <b>"
[ "$(code_of $(site_args sitea) "$URL/sites/sitea/nothing")" = 404 ] \
    && grep -q "nothing is served at this path" "$T/body" \
    || fail "a 404 without a body: $(cat "$T/body")"
echo "ok: a plan named with '/' has its page and CSV; a 404 says why"

# A formula in a plan's name stays text in the run's CSV, as in the index's.
variant x-csv-1 '"=HYPERLINK(\"http://evil.example/x\",\"y\")"' sitea "$A1"
[ "$(push_raw sitea "$T/x-csv-1.lsbundle")" = 201 ] || fail "push x-csv-1: $(cat "$T/body")"
as_site sitea "$URL/runs/x-csv-1.csv" | grep -q "^x-csv-1,\"'=HYPERLINK(" \
    || fail "run CSV: $(as_site sitea "$URL/runs/x-csv-1.csv" | sed -n 2p)"
echo "ok: the run CSV guards a formula in the plan's name"

# A NUL in the plan's name was cut off in storing (plan "night"): refused.
variant x-nul-1 '"night\u0000ly"' sitea "$A1"
[ "$(push_raw sitea "$T/x-nul-1.lsbundle")" = 400 ] && grep -q "run.json name holds a NUL byte" \
    "$T/body" || fail "a NUL in the name: $(cat "$T/body")"
[ "$(q "select count(*) from runs where run_id = 'x-nul-1'")" = 0 ] || fail "x-nul-1 was stored"
echo "ok: a plan name with NUL refused naming the field"

# Bad input is 400 naming it, not 500 (PostgreSQL refused it); a bundle sent
# with curl's form type is told which type to use (an empty 413).
[ "$(code_of $(site_args siteb) "$URL/api/v1/runs?limit=-1")" = 400 ] \
    && grep -q "query parameter limit" "$T/body" || fail "limit=-1: $(cat "$T/body")"
[ "$(code_of $(site_args siteb) "$URL/runs/%ff")" = 400 ] && grep -q "the path is not UTF-8" \
    "$T/body" || fail "/runs/%ff: $(cat "$T/body")"
[ "$(code_of $(site_args siteb) "$URL/api/v1/runs?site=%ff%fe")" = 400 ] \
    && grep -q "query parameter site is not UTF-8" "$T/body" || fail "site=%ff%fe: $(cat "$T/body")"
[ "$(code_of $(site_args sitea) --data-binary @"$T/x-csv-1.lsbundle" "$URL/api/v1/runs")" = 413 ] \
    && grep -q "application/x-lockstep-bundle" "$T/body" || fail "a form body: $(cat "$T/body")"
[ "$(code_of $(site_args sitea) -d "embargo 99999-01-01" \
    "$URL/api/v1/runs/$(id_of "$A1")/visibility")" = 400 ] && grep -q "9999-12-31" "$T/body" \
    || fail "embargo 99999-01-01: $(cat "$T/body")"
echo "ok: limit=-1, bytes that are not UTF-8, a form body and a year 99999 answered 4xx naming them"

# A push's embargo that has already ended is stored as given (a run that
# waited in a spool goes out as asked): shared, and the answer says so.
variant x-ended-1 '"ended"' sitea "$A1"
[ "$(push_raw sitea "$T/x-ended-1.lsbundle" "?visibility=embargo%202020-01-01")" = 201 ] \
    && grep -q "embargo 2020-01-01 has already ended, so it is shared" "$T/body" \
    || fail "a push with an ended embargo: $(cat "$T/body")"
as_reader "$URL/api/v1/runs?plan=ended" | grep -q x-ended-1 || fail "x-ended-1 is not shared"
echo "ok: a push whose embargo has ended is stored shared, and says so"
echo "PASS"
