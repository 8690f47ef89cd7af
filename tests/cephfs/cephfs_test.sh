#!/usr/bin/env bash
# ctest "cephfs" (label cephfs): Lockstep on a real parallel file system.
# Brings up deploy/testbed/cephfs.sh (MON, MGR, 3 OSDs, MDS, 2 ceph-fuse
# client hosts in their own namespaces, an agent per host over mutual TLS),
# then, through the real binaries:
#   1. a two-host plan with a CephFS layout (stripe_size 64k, stripe_count 2,
#      object_size 1m) and cache = "all": exit 0; the layout is read back by
#      getfattr through another mount and recorded in run.json; the OSD and
#      MDS agents dropped their daemons' caches and report their counters;
#   2. settings CephFS does not have (stripe_index, checksums): refused
#      before any file is written, naming the file system and the key;
#   3. an OSD killed in the middle of a write: the run finishes (Ceph goes
#      degraded) and the oss agent's lines say its daemon died;
#   4. down: nothing running, nothing mounted.
#   tests/cephfs/cephfs_test.sh SOURCE_DIR LOCKSTEP LOCKSTEP_AGENT
# Exit 77 (skipped) with the reason when not root, without FUSE, or when the
# Ceph packages are missing (deploy/test.sh installs them).
set -euo pipefail
src="$(cd "$1" && pwd)"
export LOCKSTEP_BIN="$2" LOCKSTEP_AGENT_BIN="$3"
skip() { echo "SKIPPED: $*"; exit 77; }
fail() { echo "FAILED: $*" >&2; exit 1; }
[[ $(id -u) -eq 0 ]] || skip "needs root (ceph-fuse mounts, namespaces)"
[[ -c /dev/fuse ]] || skip "no /dev/fuse: FUSE is not available here, so ceph-fuse cannot mount"
for b in ceph-mon ceph-osd ceph-mds ceph-fuse getfattr unshare nsenter; do
  command -v "$b" >/dev/null || skip "$b not installed (deploy/test.sh installs the ceph packages)"
done
if ss -ltn 2>/dev/null | grep -q '127.0.0.1:3300 '; then
  skip "a Ceph MON already listens on 127.0.0.1:3300 (a testbed is up): take it down first"
fi

work="$(mktemp -d /tmp/lockstep-cephfs-test.XXXXXX)"
export LOCKSTEP_TESTBED_DIR="$work/tb" LOCKSTEP_TESTBED_MOUNT=/mnt/lockstep-cephfs-ctest
export LOCKSTEP_TESTBED_OSD_BYTES=$((4 << 30))
tb="$src/deploy/testbed/cephfs.sh"
T="$LOCKSTEP_TESTBED_DIR"
M="$LOCKSTEP_TESTBED_MOUNT"
cleanup() {
  set +e
  "$tb" down >"$work/down.log" 2>&1 || cat "$work/down.log"
  rm -rf "$work"
}
trap cleanup EXIT

echo "== up"
"$tb" up --clients 2 --osds 3 >"$work/up.log" 2>&1 || { cat "$work/up.log"; fail "testbed up"; }
grep -E 'up in|HEALTH' "$work/up.log"
run() {  # run NAME PLAN: lockstep run on the testbed's agents; output in $work/NAME.out
  local name=$1 plan=$2 rc=0
  "$LOCKSTEP_BIN" run --hostfile "$T/hostfile" --tls_dir "$T/tls" --out "$work/results" \
    --history=false "$plan" >"$work/$name.out" 2>&1 || rc=$?
  echo "$rc"
}
record() { ls -d "$work"/results/*/ | sort | tail -1; }

# ---- 1. layout, server cache barrier, daemon counters ------------------------
mkdir -p "$M/ctest"
cat >"$work/layout.toml" <<EOF
[run]
name = "cephfs-layout"
cache = "all"
[[phase]]
name = "write"
kind = "write"
dir = "$M/ctest/striped"
file_per_process = true
transfer_size = "1m"
block_size = "32m"
fsync = true
keep = true
stripe_size = "64k"
stripe_count = 2
object_size = "1m"
[[phase]]
name = "read"
kind = "read"
dir = "$M/ctest/striped"
file_per_process = true
transfer_size = "1m"
block_size = "32m"
verify = true
EOF
mkdir -p "$M/ctest/striped"
rc=$(run layout "$work/layout.toml")
[[ $rc -eq 0 ]] || { cat "$work/layout.out"; fail "layout plan exited $rc"; }
# Read back through the admin mount (another client of the same file system).
got="$(getfattr --only-values -n ceph.dir.layout "$M/ctest/striped")"
echo "getfattr ceph.dir.layout: $got"
[[ "$got" == *"stripe_unit=65536"* && "$got" == *"stripe_count=2"* && "$got" == *"object_size=1048576"* ]] ||
  fail "the directory's layout is '$got', not stripe_unit=65536 stripe_count=2 object_size=1048576"
python3 - "$(record)/run.json" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
assert r["status"] == "complete", r["status"]
phases = [p for t in r["tests"] for p in t["phases"]]
w = [p for p in phases if p["phase"] == "write"][0]
clients = [a for a in w["agents"] if a.get("role", "CLIENT") == "CLIENT"]
servers = [a for a in w["agents"] if a.get("role") in ("OSS", "MDS")]
assert len(clients) == 2, clients
for a in clients:
    assert a.get("fs_name") == "cephfs", a.get("fs_name")
    assert a["layout"]["stripe_unit_bytes"] == "65536", a["layout"]
    assert a["layout"]["stripe_count"] == "2", a["layout"]
assert len(servers) == 4, [a["address"] for a in w["agents"]]
dropped = [d for a in servers for d in a.get("cache", {}).get("daemon_caches", [])]
assert any(d.startswith("osd.") and d.endswith(" ms") for d in dropped), dropped
assert any(d.startswith("mds.a ") and d.endswith(" ms") for d in dropped), dropped
daemons = [d for a in servers for d in a.get("telemetry_brief", {}).get("daemons", [])]
assert {d["name"] for d in daemons} == {"osd.0", "osd.1", "osd.2", "mds.a"}, daemons
in_bytes = sum(int(d.get("in_bytes", 0)) for d in daemons)
assert in_bytes >= 64 << 20, f"the OSDs took {in_bytes} bytes from clients, not the 64 MiB written"
print(f"run.json: layout recorded on both clients; caches dropped: {dropped}; OSD in {in_bytes} B")
EOF
grep -E '^#  osd[0-9] osd\.|^#  mds0 mds\.a' "$work/layout.out" | head -8
grep -q '^#  osd0 osd.0: cpu' "$work/layout.out" || fail "no daemon line for osd.0 in the output"

# ---- 2. settings CephFS does not have ----------------------------------------
for bad in 'stripe_index = 2' 'checksums = false'; do
  sed -e "s/^stripe_count = 2$/stripe_count = 2\n$bad/" -e 's/^keep = true$/keep = false/' \
    "$work/layout.toml" >"$work/bad.toml"
  rc=$(run bad "$work/bad.toml")
  [[ $rc -ne 0 ]] || fail "a plan with '$bad' ran on CephFS"
  key="${bad%% *}"
  grep -q "$key = .*the file system of .* is cephfs" "$work/bad.out" ||
    { cat "$work/bad.out"; fail "the refusal of '$bad' does not name the key and cephfs"; }
  echo "refused: $bad: $(grep -o "$key = [^;]*" "$work/bad.out" | head -1)"
done

# ---- 2b. layers: net to the OSD agents, each OSD's own bench, end to end ----
mkdir -p "$M/ctest/layers"
cat >"$work/layers.toml" <<EOF
[run]
name = "cephfs-layers"
cache = "all"
[[phase]]
name = "net"
kind = "net"
duration_seconds = 1
ping_count = 10
[[phase]]
name = "backend"
kind = "backend"
method = "osd_bench"
size = "16m"
transfer_size = "4m"
[[phase]]
name = "write"
kind = "write"
dir = "$M/ctest/layers"
file_per_process = true
transfer_size = "1m"
block_size = "16m"
fsync = true
keep = true
[[phase]]
name = "read"
kind = "read"
dir = "$M/ctest/layers"
file_per_process = true
transfer_size = "1m"
block_size = "16m"
EOF
rc=$(run layers "$work/layers.toml")
[[ $rc -eq 0 ]] || { cat "$work/layers.out"; fail "layers plan exited $rc"; }
layers_dir="$(ls -d "$work"/results/*-cephfs-layers-*/ | tail -1)"
python3 - "$layers_dir/run.json" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
t = r["tests"][0]
phases = {p["phase"]: p for p in t["phases"]}
net, back = phases["net"], phases["backend"]
tasks = [x for a in net["agents"] for x in a.get("tasks", [])]
senders = [x for x in tasks if not x.get("net", {}).get("receiver")]
receivers = [x for x in tasks if x.get("net", {}).get("receiver")]
assert senders and len(senders) == len(receivers), (len(senders), len(receivers))
assert sum(int(x["bytes"]) for x in senders) == sum(int(x["bytes"]) for x in receivers)
osds = sorted(x["backend"]["target"] for a in back["agents"] for x in a.get("tasks", []))
assert osds == ["osd.0", "osd.1", "osd.2"], osds
assert all(int(x["backend"]["write_bytes"]) == 16 << 20 for a in back["agents"] for x in a.get("tasks", []))
layers = t["layers"]
assert [l["access"] for l in layers] == ["write", "read"], layers
assert layers[0]["efficiency"] > 0 and layers[0]["net_mib"] > 0 and layers[0]["backend_mib"] > 0, layers
print("layers:", [(l["access"], round(l["end_to_end_mib"], 1), round(l["net_mib"], 1),
                   round(l.get("backend_mib", 0), 1), round(l["efficiency"], 3)) for l in layers])
EOF
grep -E '^# (layers|backend):' "$work/layers.out"

# ---- 3. an OSD killed in the middle of a write -------------------------------
cat >"$work/kill.toml" <<EOF
[run]
name = "cephfs-osd-kill"
[[phase]]
name = "write"
kind = "write"
dir = "$M/ctest"
file_per_process = true
transfer_size = "1m"
block_size = "384m"
fsync = true
EOF
"$LOCKSTEP_BIN" run --hostfile "$T/hostfile" --tls_dir "$T/tls" --out "$work/results" \
  --history=false "$work/kill.toml" >"$work/kill.out" 2>&1 &
runner=$!
# Kill osd.2 once the write is under way (the first file has data).
for _ in $(seq 300); do
  size=$(stat -c %s "$M/ctest/testfile.00000000" 2>/dev/null || echo 0)
  [[ $size -gt $((16 << 20)) ]] && break
  kill -0 $runner 2>/dev/null || break
  sleep 0.1
done
osd_pid="$("$tb" pid osd.2)"
kill -9 "$osd_pid"
echo "killed osd.2 (pid $osd_pid) with the write at $size bytes"
rc=0
wait $runner || rc=$?
[[ $rc -eq 0 ]] || { cat "$work/kill.out"; fail "the run with a killed OSD exited $rc (Ceph should go on degraded)"; }
grep -E "osd\.2 \(pid $osd_pid\) is not running" "$work/kill.out" ||
  { cat "$work/kill.out"; fail "nothing said that osd.2 died"; }

# ---- 4. down -----------------------------------------------------------------
"$tb" down
trap - EXIT
left="$(pgrep -fa -- "$T" || true)"
[[ -z "$left" ]] || fail "still running after down: $left"
! grep -q -e " $T/" -e " $M " /proc/self/mounts || fail "still mounted after down"
rm -rf "$work"
echo "1 passed, 0 failed"
