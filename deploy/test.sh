#!/usr/bin/env bash
# Installs what is missing, builds, and runs the whole test suite (ctest).
#   ./deploy/test.sh [ctest args...]
set -euo pipefail
LOCKSTEP_BUILD_NAME=test
source "$(dirname "$0")/common.sh"
# fio: the accuracy test compares byte counts with it; iproute2: the network
# namespace tests (skipped without it); python3 and universal-ctags: the
# code_shape test (file and function size limits of ARCHITECTURE.md).
lockstep_install_packages fio iproute2 python3 universal-ctags
# slurm-wlm and munge: the slurm_sbatch test runs deploy/slurm/lockstep.sbatch
# on a local four-node Slurm cluster (skipped, with the reason, without them).
lockstep_install_packages slurm-wlm munge || echo "== slurm-wlm/munge could not be installed: the Slurm test will be skipped"
# chromium renders the HTML report in a real browser; without it that one
# test is skipped with the reason.
lockstep_install_packages chromium || echo "== chromium could not be installed: the headless report check will be skipped"
lockstep_build RelWithDebInfo -DLOCKSTEP_BUILD_TESTS=ON -DLOCKSTEP_WERROR=ON
cd "$LOCKSTEP_BUILD"
ctest --output-on-failure --timeout 600 -j 2 "$@"
