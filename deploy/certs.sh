#!/usr/bin/env bash
# Makes the private CA and the controller/agent certificates for mutual TLS:
#   deploy/certs.sh --dir DIR [--agent NAME[,SAN...]]... [--controller NAME] [--days N] [--force]
# is `lockstep certs init` with the same arguments (see `lockstep certs --help`);
#   deploy/certs.sh issue --dir DIR --agent NAME[,SAN...]
# adds certificates signed by the existing CA (`lockstep certs issue`).
# The binary is $LOCKSTEP_BIN if set, else the newest build/release/, build/*/ or build-*/ under
# the repository, else `lockstep` on PATH.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

find_lockstep() {
  if [[ -n "${LOCKSTEP_BIN:-}" ]]; then
    if [[ -x "$LOCKSTEP_BIN" ]]; then echo "$LOCKSTEP_BIN"; return 0; fi
    echo "certs.sh: LOCKSTEP_BIN=$LOCKSTEP_BIN is not an executable file" >&2
    return 1
  fi
  local newest="" candidate
  for candidate in "$repo"/build/release/lockstep "$repo"/build/*/lockstep "$repo"/build/lockstep "$repo"/build-*/lockstep; do
    [[ -x "$candidate" && -f "$candidate" ]] || continue
    if [[ -z "$newest" || "$candidate" -nt "$newest" ]]; then newest="$candidate"; fi
  done
  if [[ -n "$newest" ]]; then echo "$newest"; return 0; fi
  if command -v lockstep >/dev/null 2>&1; then command -v lockstep; return 0; fi
  echo "certs.sh: no lockstep binary: build it (./deploy/quickstart.sh builds build/release/lockstep)," \
       "put it on PATH, or set LOCKSTEP_BIN" >&2
  return 1
}

bin="$(find_lockstep)"
# An old binary without the certs command would silently do nothing.
if ! "$bin" certs --help 2>/dev/null | grep -q "lockstep certs init"; then
  echo "certs.sh: $bin has no 'certs' command; rebuild it from this repository or set LOCKSTEP_BIN" >&2
  exit 1
fi
sub=init
if [[ "${1:-}" == init || "${1:-}" == issue ]]; then sub="$1"; shift; fi
exec "$bin" certs "$sub" "$@"
