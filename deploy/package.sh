#!/usr/bin/env bash
# Builds the Debian packages lockstep and lockstep-agent (CPack DEB,
# cmake/packaging.cmake) into build/packages/: installs what is missing,
# builds Release in build/release, runs cpack, prints the .deb files.
#   ./deploy/package.sh
# Then, on each node: apt install ./build/packages/lockstep-agent_*.deb
# (and lockstep_*.deb where the controller runs).
set -euo pipefail
source "$(dirname "$0")/common.sh"
# dpkg-dev: dpkg-shlibdeps writes the packages' Depends from the binaries;
# file: CPack finds the ELF files to give it with it.
lockstep_install_packages dpkg-dev file
lockstep_build Release -DLOCKSTEP_BUILD_TESTS=OFF
out="$LOCKSTEP_SRC/build/packages"
mkdir -p "$out"
# Only this build's packages stay: older versions would be ambiguous.
rm -f "$out"/lockstep_*.deb "$out"/lockstep-agent_*.deb
echo "== cpack -G DEB into $out"
log="$LOCKSTEP_BUILD/cpack.log"
if ! (cd "$LOCKSTEP_BUILD" && cpack -G DEB -B "$out") >"$log" 2>&1; then
    echo "== cpack failed; the last lines of $log:" >&2
    tail -n 30 "$log" >&2
    exit 1
fi
rm -rf "$out/_CPack_Packages"
ls -l "$out"/*.deb
