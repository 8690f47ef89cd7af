#!/usr/bin/env bash
# ctest "package": the Debian packages of cmake/packaging.cmake.
#   package_test.sh SOURCE_DIR BUILD_DIR CPACK VERSION
# Builds them with cpack from BUILD_DIR (or takes LOCKSTEP_DEBS_DIR's .debs),
# checks each one's files, control fields, conffiles and maintainer scripts
# (dpkg-deb -c, -f, --ctrl-tarfile), extracts both into a scratch root
# (dpkg-deb -x) and runs the extracted binaries: --help, bash completion,
# and `lockstep run --local 1` on a small plan, whose local agent is the
# extracted lockstep-agent (the controller starts the one next to itself).
# As root, also installs and purges them with `dpkg --root` (maintainer
# scripts run chrootless with DPKG_ROOT set; this host's accounts and dpkg
# database stay untouched, which it checks). Verifies the systemd unit with
# systemd-analyze where it exists. Exit 77 (ctest SKIP_RETURN_CODE) with the
# reason when dpkg-deb, cpack or dpkg-shlibdeps is missing.
set -euo pipefail
src="$1" build="$2" cpack="$3" version="$4"
skip() { echo "SKIPPED: $*"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }
command -v dpkg-deb >/dev/null || skip "no dpkg-deb (not a Debian system?)"

work="$(mktemp -d -t lockstep-package.XXXXXX)"
trap 'rm -rf "$work"' EXIT

# ---- the packages
if [ -n "${LOCKSTEP_DEBS_DIR:-}" ]; then
    debs="$LOCKSTEP_DEBS_DIR"
else
    [ -x "$cpack" ] || skip "no cpack at $cpack"
    command -v dpkg-shlibdeps >/dev/null || skip "no dpkg-shlibdeps (apt-get install dpkg-dev)"
    command -v file >/dev/null || skip "no file (apt-get install file): CPack finds ELF files with it"
    debs="$work/packages"
    echo "== cpack -G DEB (from $build)"
    (cd "$build" && "$cpack" -G DEB -B "$debs") >"$work/cpack.log" 2>&1 ||
        { tail -n 30 "$work/cpack.log"; fail "cpack failed"; }
fi
arch="$(dpkg --print-architecture)"
controller_deb="$debs/lockstep_${version}-1_${arch}.deb"
agent_deb="$debs/lockstep-agent_${version}-1_${arch}.deb"
for deb in "$controller_deb" "$agent_deb"; do
    [ -f "$deb" ] || fail "no $deb; there are: $(ls "$debs")"
    echo "== $(basename "$deb"): $(stat -c %s "$deb") bytes"
done

# ---- contents: exactly these files (directories aside)
files_of() { dpkg-deb -c "$1" | awk '$1 !~ /^d/ {print $6}' | sort; }
expect_files() {
    local deb="$1"; shift
    printf '%s\n' "$@" | sort >"$work/expected"
    files_of "$deb" >"$work/actual"
    diff -u "$work/expected" "$work/actual" || fail "$(basename "$deb"): files differ (- expected, + packaged)"
}
expect_files "$controller_deb" ./usr/bin/lockstep ./usr/share/man/man1/lockstep.1 \
    ./usr/share/bash-completion/completions/lockstep
expect_files "$agent_deb" ./usr/bin/lockstep-agent ./usr/share/man/man8/lockstep-agent.8 \
    ./usr/lib/systemd/system/lockstep-agent.service ./etc/lockstep/agent.toml
dpkg-deb -c "$agent_deb" | grep -q ' ./var/lib/lockstep/$' || fail "lockstep-agent has no /var/lib/lockstep/"
for deb in "$controller_deb" "$agent_deb"; do
    if dpkg-deb -c "$deb" | awk '{print $2}' | grep -qv '^root/root$'; then
        fail "$(basename "$deb"): a file not owned by root/root"
    fi
done
echo "== files as expected"

# ---- control fields, conffiles, maintainer scripts
field() { dpkg-deb -f "$1" "$2"; }
[ "$(field "$controller_deb" Package)" = lockstep ] || fail "controller package name"
[ "$(field "$agent_deb" Package)" = lockstep-agent ] || fail "agent package name"
for deb in "$controller_deb" "$agent_deb"; do
    [ "$(field "$deb" Version)" = "${version}-1" ] || fail "$(basename "$deb"): Version $(field "$deb" Version), not ${version}-1"
    # dpkg-shlibdeps found the libraries the binaries link.
    for lib in libgrpc++ libprotobuf libssl3 libc6; do
        field "$deb" Depends | grep -q "$lib" || fail "$(basename "$deb"): Depends lacks $lib: $(field "$deb" Depends)"
    done
done
field "$controller_deb" Depends | grep -q libsqlite3 || fail "lockstep: Depends lacks libsqlite3"
field "$agent_deb" Depends | grep -q adduser || fail "lockstep-agent: Depends lacks adduser"
mkdir "$work/control"
dpkg-deb --ctrl-tarfile "$agent_deb" | tar -x -C "$work/control"
[ "$(cat "$work/control/conffiles")" = /etc/lockstep/agent.toml ] ||
    fail "conffiles is not /etc/lockstep/agent.toml: $(cat "$work/control/conffiles")"
for script in postinst prerm postrm; do
    [ -x "$work/control/$script" ] || fail "lockstep-agent has no executable $script"
    sh -n "$work/control/$script" || fail "$script is not valid sh"
done
grep -q 'adduser --system' "$work/control/postinst" || fail "postinst makes no system user"
if dpkg-deb --ctrl-tarfile "$controller_deb" | tar -t | grep -q conffiles; then
    fail "lockstep has conffiles"
fi
echo "== control: versions, Depends (dpkg-shlibdeps), conffiles, maintainer scripts as expected"

# ---- the extracted binaries run
root="$work/root"
dpkg-deb -x "$controller_deb" "$root"
dpkg-deb -x "$agent_deb" "$root"
# The packaged unit and conffile are the source tree's.
cmp "$root/usr/lib/systemd/system/lockstep-agent.service" "$src/deploy/lockstep-agent.service" ||
    fail "the packaged unit is not deploy/lockstep-agent.service"
cmp "$root/etc/lockstep/agent.toml" "$src/deploy/agent.toml.example" ||
    fail "the packaged agent.toml is not deploy/agent.toml.example"
"$root/usr/bin/lockstep-agent" --help >"$work/agent-help" || fail "lockstep-agent --help exited $?"
grep -q -- '--listen' "$work/agent-help" || fail "lockstep-agent --help does not list --listen"
"$root/usr/bin/lockstep" help >/dev/null || fail "lockstep help exited $?"
completed="$(bash -c 'source "$1"; COMP_WORDS=(lockstep certs ""); COMP_CWORD=2; _lockstep; echo "${COMPREPLY[*]}"' \
    bash "$root/usr/share/bash-completion/completions/lockstep")"
[ "$completed" = "init issue" ] || fail "bash completion of 'lockstep certs ' gave '$completed'"
echo "== extracted lockstep-agent --help, lockstep help and bash completion work"

cat >"$work/plan.toml" <<'PLAN'
[run]
name = "package-test"
repetitions = 1

[[phase]]
name = "write"
kind = "write"
dir = "."
file_per_process = true
tasks_per_agent = 2
transfer_size = "64k"
block_size = "1m"

[[phase]]
name = "read"
kind = "read"
dir = "."
file_per_process = true
tasks_per_agent = 2
transfer_size = "64k"
block_size = "1m"
verify = true
PLAN
echo "== $root/usr/bin/lockstep run --local 1 plan.toml"
# The build tree's agent is not next to the extracted controller, so the
# local agent it starts is the extracted one ($root/usr/bin/lockstep-agent).
(cd "$work" && "$root/usr/bin/lockstep" run --local 1 --out "$work/results" plan.toml) \
    >"$work/run.log" 2>&1 || { cat "$work/run.log"; fail "lockstep run --local 1 exited $?"; }
tail -n 5 "$work/run.log"
ls "$work"/results/*/run.json >/dev/null 2>&1 || fail "no run.json under $work/results"
# And without it the controller finds no agent (it never takes another one).
mv "$root/usr/bin/lockstep-agent" "$work/lockstep-agent.away"
if (cd "$work" && "$root/usr/bin/lockstep" run --local 1 --out "$work/results" plan.toml) \
    >"$work/run2.log" 2>&1; then
    fail "lockstep run --local 1 ran without the extracted agent: its agent came from elsewhere"
fi
grep -q "$root/usr/bin/lockstep-agent" "$work/run2.log" ||
    { cat "$work/run2.log"; fail "the error does not name $root/usr/bin/lockstep-agent"; }
mv "$work/lockstep-agent.away" "$root/usr/bin/lockstep-agent"
echo "== the extracted binaries ran the plan"

# ---- dpkg --root: maintainer scripts, conffile registration, purge
if [ "$(id -u)" -ne 0 ]; then
    echo "== dpkg --root skipped: needs root (files are installed as root:root)"
else
    dr="$work/dpkg-root"
    mkdir -p "$dr/var/lib/dpkg/info" "$dr/var/lib/dpkg/updates" "$dr/var/lib/dpkg/triggers"
    touch "$dr/var/lib/dpkg/status" "$dr/var/lib/dpkg/available"
    before="$(cat /etc/passwd /etc/group /var/lib/dpkg/status | md5sum)"
    # --force-depends: the scratch root's database has none of the libraries.
    dpkg_root() {
        dpkg --root="$dr" --log=/dev/null --force-script-chrootless --force-depends "$@" \
            >>"$work/dpkg.log" 2>&1 || { cat "$work/dpkg.log"; fail "dpkg --root $* failed"; }
    }
    dpkg_root -i "$agent_deb" "$controller_deb"
    for p in lockstep lockstep-agent; do
        dpkg --root="$dr" -s "$p" | grep -q '^Status: install ok installed' || fail "$p not installed in $dr"
    done
    dpkg --root="$dr" -s lockstep-agent | grep -q '^ /etc/lockstep/agent.toml ' ||
        fail "dpkg did not register /etc/lockstep/agent.toml as a conffile"
    [ "$(stat -c %a "$dr/var/lib/lockstep")" = 750 ] || fail "postinst did not make /var/lib/lockstep 0750"
    grep -q 'not making the lockstep user' "$work/dpkg.log" || fail "postinst did not skip the user under DPKG_ROOT"
    dpkg_root --purge lockstep-agent lockstep
    for left in usr/bin/lockstep-agent usr/bin/lockstep etc/lockstep var/lib/lockstep; do
        [ ! -e "$dr/$left" ] || fail "purge left /$left in $dr"
    done
    [ "$(cat /etc/passwd /etc/group /var/lib/dpkg/status | md5sum)" = "$before" ] ||
        fail "dpkg --root changed this host's accounts or dpkg database"
    echo "== dpkg --root: installed (postinst ran, conffile registered), purged; host untouched"
fi

# ---- the systemd unit
if ! command -v systemd-analyze >/dev/null; then
    echo "== systemd-analyze verify skipped: systemd-analyze is not installed"
else
    # The installed unit's ExecStart is /usr/bin/lockstep-agent, which this
    # host may not have: verify a copy pointing at the extracted binary, with
    # MANPATH to the extracted man page (Documentation=man:lockstep-agent(8)).
    unit="$work/unit/lockstep-agent.service"
    mkdir -p "$work/unit"
    sed "s|^ExecStart=/usr/bin/lockstep-agent |ExecStart=$root/usr/bin/lockstep-agent |" \
        "$root/usr/lib/systemd/system/lockstep-agent.service" >"$unit"
    grep -q "^ExecStart=$root/usr/bin/lockstep-agent " "$unit" || fail "the unit's ExecStart is not /usr/bin/lockstep-agent"
    MANPATH="$root/usr/share/man" systemd-analyze verify "$unit" >"$work/verify.log" 2>&1 ||
        { cat "$work/verify.log"; fail "systemd-analyze verify failed"; }
    [ -s "$work/verify.log" ] && { cat "$work/verify.log"; fail "systemd-analyze verify warned"; }
    grep -q '^ProtectKernelTunables=no' "$unit" || fail "the unit must keep ProtectKernelTunables=no (drop_caches)"
    echo "== systemd-analyze verify: clean"
    systemd-analyze security --offline=true "$unit" 2>/dev/null | tail -n 1 || true
fi
echo "PASS"
