#!/bin/bash
# Captures one golden case (tests/conformance/golden/README.md) from a real
# IOR: runs `ior ARGS` (@DIR@ = a fresh directory on /dev/shm) under
# `mpirun -np RANKS`, with the program on PATH so that IOR echoes its bare
# name, and writes cmd.txt, stdout.txt (stdout and stderr, the directory
# written back as @DIR@), files.txt, and with -O summaryFile=F what IOR
# wrote to F (summary-file.txt). Not run by ctest: it needs a real IOR.
#
#   [SETUP="ARGS"] tests/conformance/tools/capture_golden.sh IOR_BIN_DIR CASE_DIR RANKS ARGS...
set -euo pipefail
bin=$1 case_dir=$2 ranks=$3
shift 3
dir=$(mktemp -d /dev/shm/golden.XXXXXX)
trap 'rm -rf "$dir"' EXIT
mkdir -p "$case_dir"
printf '%s\nranks=%s\n' "$*" "$ranks" > "$case_dir/cmd.txt"
args=()
for a in "$@"; do args+=("${a//@DIR@/$dir}"); done
set +e
# SETUP="ARGS": an IOR run in the same directory first (setup-*.txt).
if [[ -n ${SETUP:-} ]]; then
  printf '%s\nranks=%s\n' "$SETUP" "$ranks" > "$case_dir/setup-cmd.txt"
  (cd "$dir" && PATH=$bin:$PATH OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
     timeout 300 mpirun --oversubscribe -np "$ranks" ior ${SETUP//@DIR@/$dir} < /dev/null 2>&1) |
    sed "s|$dir|@DIR@|g" > "$case_dir/setup-stdout.txt"
  (cd "$dir" && find . -type f -printf '%P %s\n' | sort) > "$case_dir/setup-files.txt"
fi
(cd "$dir" && PATH=$bin:$PATH OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
   timeout 300 mpirun --oversubscribe -np "$ranks" ior "${args[@]}" < /dev/null 2>&1) |
  sed "s|$dir|@DIR@|g" > "$case_dir/stdout.txt"
rc=${PIPESTATUS[0]}
set -e
(cd "$dir" && find . -type f -printf '%P %s\n' | sort) > "$case_dir/files.txt"
# -O summaryFile=F: what IOR wrote to F, as summary-file.txt.
for a in "${args[@]}"; do
  if [[ $a == summaryFile=* && -f ${a#summaryFile=} ]]; then
    sed "s|$dir|@DIR@|g" "${a#summaryFile=}" > "$case_dir/summary-file.txt"
  fi
done
echo "exit=$rc; $(wc -l < "$case_dir/stdout.txt") lines, $(wc -l < "$case_dir/files.txt") files"
