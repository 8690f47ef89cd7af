# The launcher of a Python bench (bonnie.sh, chaos.sh, fio_compare.sh,
# scale.sh, start_skew.sh), sourced after its usage comment:
#
#   source "$(dirname "$0")/lib.sh"
#   bench_args NAME "$@"          # sets $here, $build and the array $args
#   bench_need fio [fio]          # a tool and the Debian package that has it
#   bench_python - <<'PY' ...     # exec python3 (benchlib importable) with --build
#
# bench_args: --build DIR (or --build=DIR) sets $build, default
# $LOCKSTEP_BUILD, else the source tree's build/; every other word goes to
# $args, for the Python side, in order. A launcher with flags of its own
# names them in BENCH_OWN_FLAGS (words) before the call and reads them from
# $bench_own (an associative array: flag -> 1).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[1]:-$0}")" && pwd)"
build="${LOCKSTEP_BUILD:-$here/../../build}"
args=()
declare -A bench_own=()
bench_name=bench

bench_args() {
  bench_name="$1"
  shift
  local own=" ${BENCH_OWN_FLAGS:-} "
  while [[ $# -gt 0 ]]; do
    case "$1" in
      --build) build="$2"; shift 2 ;;
      --build=*) build="${1#--build=}"; shift ;;
      *)
        if [[ "$own" == *" $1 "* ]]; then bench_own[$1]=1; else args+=("$1"); fi
        shift ;;
    esac
  done
}

# bench_need TOOL [PACKAGE]: TOOL on the PATH, or install PACKAGE (as root,
# apt-get) when given; otherwise exit 2 saying what to install.
bench_need() {
  local tool="$1" package="${2:-}"
  command -v "$tool" >/dev/null && return 0
  if [[ -n "$package" && $(id -u) == 0 ]]; then
    apt-get install -y "$package" >/dev/null
    command -v "$tool" >/dev/null && return 0
  fi
  echo "$bench_name: $tool is not installed${package:+ (sudo apt-get install -y $package)}" >&2
  exit 2
}

# bench_python SCRIPT|- [ARGS...]: replaces the shell with python3 SCRIPT
# --build $build ARGS... $args, tests/bench on PYTHONPATH (benchlib,
# skewprobe); "-" reads the script from stdin (the launcher's heredoc).
bench_python() {
  bench_need python3
  local script="$1"
  shift
  export PYTHONPATH="$here${PYTHONPATH:+:$PYTHONPATH}"
  exec python3 "$script" --build "$build" "$@" "${args[@]}"
}
