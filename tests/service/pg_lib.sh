# Sourced by tests/service/service_test.sh and tests/bench/results_service.sh:
# a scratch directory $T with a private PostgreSQL 15 in $T/pg (initdb as the
# postgres user when root: PostgreSQL refuses root), reached on a Unix socket
# only, and a trap that stops PostgreSQL and the service ($SERVICE_PID) and
# removes $T on every exit, failures included.
#   scratch_with_postgres NAME       T, DB, the EXIT trap, initdb
#   pg_start [POSTGRES -c OPTIONS]   start (again) on $T/pg
#   q SQL                            one query, unaligned tuples only
PGBIN=${LOCKSTEP_PG_BIN:-/usr/lib/postgresql/15/bin}
SERVICE_PID=""
as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
cleanup() {
  [ -n "$SERVICE_PID" ] && kill -9 "$SERVICE_PID" 2>/dev/null || true
  as_pg "$PGBIN/pg_ctl" -D "$T/pg/data" -m immediate -w stop >/dev/null 2>&1 || true
  rm -rf "$T"
}
scratch_with_postgres() {
  T=$(mktemp -d "/tmp/lockstep-$1.XXXXXX")
  chmod 755 "$T"
  trap cleanup EXIT
  mkdir -p "$T/pg"
  [ "$(id -u)" = 0 ] && chown postgres "$T/pg"
  as_pg "$PGBIN/initdb" -D "$T/pg/data" -A trust -U lockstep >/dev/null
  DB="host=$T/pg port=5432 user=lockstep dbname=postgres"
}
PG_OPTIONS=""
pg_start() {
  [ $# -gt 0 ] && PG_OPTIONS="$*"
  as_pg "$PGBIN/pg_ctl" -D "$T/pg/data" -l "$T/pg/log" -w start \
      -o "-k $T/pg -p 5432 -c listen_addresses='' $PG_OPTIONS" >/dev/null
}
q() { psql -h "$T/pg" -p 5432 -U lockstep -d postgres -Atc "$1"; }
