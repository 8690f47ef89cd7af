#!/usr/bin/env bash
# Builds IOR and mdtest (hpc/ior) from a source tree with the system's MPI
# (Debian's Open MPI: mpicc), for the IOR+MPI side of start_skew.sh.
# IOR is never vendored into this repository: fetch its source first, e.g.
#   git clone https://github.com/hpc/ior SRC_DIR   (or git archive of a mirror)
# Usage: tests/bench/build_ior.sh SRC_DIR [PREFIX]   (PREFIX defaults to /opt/ior)
# Needs autoconf, automake, libtool, pkg-config and mpicc; as root it installs
# the missing ones with apt-get.
set -euo pipefail
src=${1:?usage: build_ior.sh SRC_DIR [PREFIX]}
prefix=${2:-/opt/ior}
need=()
for tool in autoconf automake libtoolize pkg-config mpicc; do
  command -v "$tool" >/dev/null || need+=("$tool")
done
if ((${#need[@]})); then
  if [[ $(id -u) -eq 0 ]]; then
    apt-get install -y autoconf automake libtool pkg-config libopenmpi-dev openmpi-bin
  else
    echo "build_ior.sh: missing ${need[*]}; install autoconf automake libtool pkg-config libopenmpi-dev" >&2
    exit 2
  fi
fi
cd "$src"
[[ -x configure ]] || ./bootstrap
./configure --prefix="$prefix" CC=mpicc
make -j"$(nproc)"
make install
"$prefix/bin/ior" -h >/dev/null 2>&1 || true
echo "installed: $prefix/bin/ior $prefix/bin/mdtest"
