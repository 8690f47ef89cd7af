#!/usr/bin/env bash
# Installs what is missing, builds, and runs the whole test suite (ctest).
#   ./deploy/test.sh [ctest args...]
set -euo pipefail
LOCKSTEP_BUILD_NAME=test
source "$(dirname "$0")/common.sh"
# fio: the accuracy test compares byte counts with it.
lockstep_install_packages fio
lockstep_build RelWithDebInfo -DLOCKSTEP_BUILD_TESTS=ON
cd "$LOCKSTEP_BUILD"
ctest --output-on-failure --timeout 600 -j 2 "$@"
