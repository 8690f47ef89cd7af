# Shared by quickstart.sh and test.sh: install what is missing, then build.
# Sourced, not run. Every step that fails says which step and why, and the
# scripts can be run any number of times in the same checkout.

LOCKSTEP_SRC="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
LOCKSTEP_BUILD="${LOCKSTEP_BUILD:-$LOCKSTEP_SRC/build/${LOCKSTEP_BUILD_NAME:-release}}"

# A failing command names itself: "== <script>: step failed (exit N): <command>".
set -E
trap 'rc=$?; echo "== $(basename "$0"): step failed (exit $rc): $BASH_COMMAND" >&2' ERR

# Installs the Debian packages of deploy/packages.txt (plus any given) that
# are not installed yet. Needs root (or sudo) only when something is missing.
lockstep_install_packages() {
  local wanted missing=() p
  wanted="$(sed -e 's/#.*//' "$LOCKSTEP_SRC/deploy/packages.txt" | tr -s ' \t' '\n' | sed -e '/^$/d') $*"
  for p in $wanted; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "== installing: ${missing[*]}"
  local sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || {
      echo "== need root (or sudo) to install: ${missing[*]}" >&2
      return 1
    }
    sudo="sudo"
  fi
  local log
  log="$(mktemp -t lockstep-apt.XXXXXX)"
  if ! $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -q >"$log" 2>&1; then
    echo "== apt-get update failed; its last lines:" >&2
    tail -n 15 "$log" >&2
    rm -f "$log"
    return 1
  fi
  if ! $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
      "${missing[@]}" >"$log" 2>&1; then
    echo "== apt-get install ${missing[*]} failed; its last lines:" >&2
    tail -n 15 "$log" >&2
    rm -f "$log"
    return 1
  fi
  rm -f "$log"
}

# Configures and builds into $LOCKSTEP_BUILD with the given build type and
# cmake arguments. The compiler's output goes to $LOCKSTEP_BUILD/build.log;
# errors (and warnings, which there should be none of) are shown from it.
lockstep_build() {
  local type="${1:-Release}"; shift || true
  mkdir -p "$LOCKSTEP_BUILD"
  local log="$LOCKSTEP_BUILD/build.log"
  echo "== building ($type) in $LOCKSTEP_BUILD"
  if ! cmake -S "$LOCKSTEP_SRC" -B "$LOCKSTEP_BUILD" -DCMAKE_BUILD_TYPE="$type" "$@" \
      >"$LOCKSTEP_BUILD/configure.log" 2>&1; then
    echo "== configure (cmake) failed; the last lines of $LOCKSTEP_BUILD/configure.log:" >&2
    tail -n 30 "$LOCKSTEP_BUILD/configure.log" >&2
    return 1
  fi
  if ! cmake --build "$LOCKSTEP_BUILD" -j "$(nproc)" >"$log" 2>&1; then
    echo "== build failed; from $log:" >&2
    { grep -E -A3 'error|Error' "$log" || tail -n 40 "$log"; } | head -n 60 >&2
    return 1
  fi
  if grep -q 'warning:' "$log"; then
    echo "== the build printed warnings (see $log):"
    grep 'warning:' "$log" | sort -u | head -n 20
  fi
  return 0
}
