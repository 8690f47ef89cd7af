#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (ASan + UBSan, every library
# instrumented for coverage) in a separate build directory, then fuzzes each
# target for FUZZ_SECONDS, starting from its seed corpus in
# tests/fuzz/corpus/<target>/ (new inputs go to the build directory, not the
# repository). Crashes are saved as <build>/artifacts/<target>/crash-*.
#
#   tests/fuzz/run.sh                  # every target, 60 s each
#   FUZZ_SECONDS=600 tests/fuzz/run.sh plan
#
# Without libFuzzer (or for a quick count in the ordinary g++ build), the
# targets' corpus driver mutates by itself and counts crashes and hangs:
#   build/test/tests/fuzz/plan_fuzzer --mutate 1000 --seed 1 \
#     --dict tests/fuzz/plan.dict --crashers /tmp/crashers tests/fuzz/corpus/plan
# (dlio_fuzzer with dlio.dict and corpus/dlio, ior_cli_fuzzer with
# ior_cli.dict and corpus/ior_cli); crashers found go into the corpus.
#
# Environment: FUZZ_SECONDS (60), FUZZ_BUILD_DIR (/tmp/lockstep-build-fuzz),
# JOBS (1), CXX (clang++, else clang++-14). Exit status: 0 when no target
# crashed, 1 otherwise. The IOR/mdtest translator target (ior_cli) runs only
# once controller/ior/ior_cli.h exists.
set -euo pipefail

SRC=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${FUZZ_BUILD_DIR:-/tmp/lockstep-build-fuzz}
SECONDS_EACH=${FUZZ_SECONDS:-60}
JOBS=${JOBS:-1}
CXX=${CXX:-$(command -v clang++ || command -v clang++-14 || true)}
if [[ -z "$CXX" ]]; then
  echo "run.sh: no clang++ found; install clang (and libclang-rt-14-dev for libFuzzer)" >&2
  exit 2
fi

targets=("$@")
if [[ ${#targets[@]} -eq 0 ]]; then
  targets=(plan dlio)
  if [[ -f "$SRC/controller/ior/ior_cli.h" ]]; then
    targets+=(ior_cli)
  else
    echo "run.sh: controller/ior/ior_cli.h is not there yet: skipping the ior_cli target"
  fi
fi

cmake -S "$SRC" -B "$BUILD" -DCMAKE_CXX_COMPILER="$CXX" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DLOCKSTEP_SANITIZE=address,undefined -DCMAKE_CXX_FLAGS="-fsanitize=fuzzer-no-link" >/dev/null
for t in "${targets[@]}"; do
  make -C "$BUILD" -j"$JOBS" "${t}_fuzzer"
done

status=0
for t in "${targets[@]}"; do
  work="$BUILD/corpus/$t"
  art="$BUILD/artifacts/$t"
  mkdir -p "$work" "$art"
  dict=()
  [[ -f "$SRC/tests/fuzz/$t.dict" ]] && dict=(-dict="$SRC/tests/fuzz/$t.dict")
  exe=$(find "$BUILD" -name "${t}_fuzzer" -type f -perm -u+x | head -1)
  echo "== $t: fuzzing for ${SECONDS_EACH}s ($exe)"
  # halt_on_error: UBSan findings count as crashes too.
  if ! UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    "$exe" -max_total_time="$SECONDS_EACH" -print_final_stats=1 -timeout=10 -rss_limit_mb=2048 \
      -artifact_prefix="$art/" "${dict[@]}" "$work" "$SRC/tests/fuzz/corpus/$t" \
      2>&1 | tee "$BUILD/$t.log" | grep -E "^#[0-9]+[[:space:]]+(INITED|DONE)|^stat::|ERROR|SUMMARY|Test unit written"; then
    :
  fi
  if [[ ${PIPESTATUS[0]} -ne 0 ]] || ls "$art"/crash-* "$art"/leak-* "$art"/timeout-* >/dev/null 2>&1; then
    echo "== $t: FAILED, see $BUILD/$t.log and $art/"
    status=1
  else
    echo "== $t: no crash; corpus now $(ls "$work" | wc -l) input(s) in $work"
  fi
done
exit $status
