#!/usr/bin/env bash
# Installs what is missing, builds, and runs the sample plan (a small version
# of the seed IOR scaling run) on agents started locally; prints the results.
#   ./deploy/quickstart.sh [PLAN.toml] [lockstep run flags...]
set -euo pipefail
source "$(dirname "$0")/common.sh"
lockstep_install_packages
lockstep_build Release -DLOCKSTEP_BUILD_TESTS=OFF
plan="${1:-$LOCKSTEP_SRC/deploy/plans/ior-scaling.toml}"
shift || true
echo "== lockstep run $plan $*"
exec "$LOCKSTEP_BUILD/lockstep" run --out "${LOCKSTEP_OUT:-$LOCKSTEP_SRC/lockstep-results}" "$@" "$plan"
