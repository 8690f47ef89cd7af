# Shared by quickstart.sh and test.sh: install what is missing, then build.
# Sourced, not run.

LOCKSTEP_SRC="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
LOCKSTEP_BUILD="${LOCKSTEP_BUILD:-$LOCKSTEP_SRC/build/${LOCKSTEP_BUILD_NAME:-release}}"

# Installs the Debian packages of deploy/packages.txt (plus any given) that
# are not installed yet. Needs root (or sudo) only when something is missing.
lockstep_install_packages() {
  local wanted missing=() p
  wanted="$(sed -e 's/#.*//' "$LOCKSTEP_SRC/deploy/packages.txt" | tr -s ' \t' '\n' | grep -v '^$') $*"
  for p in $wanted; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "== installing: ${missing[*]}"
  local sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "need root to install: ${missing[*]}" >&2; return 1; }
    sudo="sudo"
  fi
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -q >/dev/null || return 1
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
    "${missing[@]}" >/dev/null || return 1
}

# Configures and builds into $LOCKSTEP_BUILD with the given build type.
lockstep_build() {
  local type="${1:-Release}"; shift || true
  echo "== building ($type) in $LOCKSTEP_BUILD"
  cmake -S "$LOCKSTEP_SRC" -B "$LOCKSTEP_BUILD" -DCMAKE_BUILD_TYPE="$type" "$@" >/dev/null || return 1
  cmake --build "$LOCKSTEP_BUILD" -j "$(nproc)" 2>&1 | grep -E 'error|warning:' ; \
    [ "${PIPESTATUS[0]}" -eq 0 ]
}
