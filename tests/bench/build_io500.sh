#!/usr/bin/env bash
# Builds the real IO500 (IO500/io500) and its pfind from source trees against
# an hpc/ior tree built by build_ior.sh, for checking Lockstep's IO500 files
# with IO500's own verifier (never vendored; CI cannot fetch, so not in ctest):
#   tests/bench/build_io500.sh IO500_SRC PFIND_SRC IOR_SRC
#   IO500_SRC/io500-verify deploy/io500/ci.ini RESULT_DIR/result.txt
# IO500's prepare.sh would download lz4 and the pinned ior/pfind; here the
# trees are given, lz4 is left out (pfind builds without it).
set -euo pipefail
io500=${1:?usage: build_io500.sh IO500_SRC PFIND_SRC IOR_SRC} pfind=${2:?} ior=${3:?}
[[ -f $ior/src/libaiori.a ]] || { echo "build_io500.sh: $ior/src/libaiori.a missing; run build_ior.sh $ior first" >&2; exit 2; }
mkdir -p "$io500/build"
ln -sfn "$(realpath "$ior")" "$io500/build/ior"
[[ -e $io500/build/pfind ]] || ln -sfn "$(realpath "$pfind")" "$io500/build/pfind"
(cd "$io500/build/pfind" && ./compile.sh)
make -C "$io500" -j"$(nproc)" VERSION_GIT="${VERSION_GIT:-io500-src}"
echo "built: $io500/io500 $io500/io500-verify"
