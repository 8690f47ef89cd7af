#!/usr/bin/env bash
# A private CephFS cluster on this machine, with Lockstep agents on every
# "host" of it: try Lockstep on a real parallel file system in one minute.
#
#   deploy/testbed/cephfs.sh up [--clients M] [--osds N]   # M client hosts (2), N OSDs (3)
#   deploy/testbed/cephfs.sh status                        # what runs; exit 1 when not up
#   deploy/testbed/cephfs.sh down                          # everything stopped, nothing mounted
#   deploy/testbed/cephfs.sh pid DAEMON                    # osd.0, mds.a, ...: its pid (for fault tests)
#   deploy/testbed/cephfs.sh agents BINARY [ROLE]          # ROLE's agents (client) restarted with BINARY (A/B benches)
#
# What `up` makes (all state in $LOCKSTEP_TESTBED_DIR, default /tmp/lockstep-testbed):
#   MON + MGR on 127.0.0.1, osd.I on 127.0.0.(11+I) (bluestore on a sparse file,
#   each OSD its own CRUSH host, 2 replicas), MDS mds.a on 127.0.0.20, auth none;
#   hosts, each a UTS + mount namespace of its own (its own host name, its own
#   mounts), with a Lockstep agent listening on HOST_ADDRESS:7070 over mutual TLS:
#     clientJ  127.0.0.(30+J)  role client, ceph-fuse mounted at $LOCKSTEP_TESTBED_MOUNT
#                              (default /mnt/lockstep-cephfs: the same path on every
#                              client, as on a real cluster), root = that mount
#     osdI     127.0.0.(11+I)  role oss, serving osd.I (its admin socket: perf counters,
#                              cache drop)
#     mds0     127.0.0.20      role mds, serving mds.a
#   plus a mount of the same file system at the same path in this namespace, as
#   on a login node (the controller's side: mkdir, getfattr, ls, IO500's datadir;
#   the client hosts do not see it), the certificates in $DIR/tls and the
#   agents' hostfile in $DIR/hostfile.
#
# Then, for example:
#   lockstep ior --hostfile /tmp/lockstep-testbed/hostfile --tls_dir /tmp/lockstep-testbed/tls \
#     -a POSIX -w -r -e -F -b 64m -t 1m -o /mnt/lockstep-cephfs/ior/testfile
#
# `down` goes in the only safe order: agents, then client mounts (while the
# MDS and OSDs still answer: a FUSE mount whose servers are gone hangs whoever
# touches it), then the daemons, then the state directory; a mount that will
# not go is detached lazily and its ceph-fuse killed, so nothing hangs. A
# failed `up` runs `down`. Both can be run any number of times.
set -euo pipefail

SRC="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
D="${LOCKSTEP_TESTBED_DIR:-/tmp/lockstep-testbed}"
MNT="${LOCKSTEP_TESTBED_MOUNT:-/mnt/lockstep-cephfs}"
PORT=7070
export CEPH_CONF="$D/ceph/ceph.conf"

say() { echo "== testbed: $*"; }
die() { echo "testbed: $*" >&2; exit 1; }
t0=$(date +%s.%N)
el() { awk -v a="$(date +%s.%N)" -v b="$t0" 'BEGIN{printf "%.1f", a-b}'; }

# ---- what runs where ----------------------------------------------------------

hosts() { cat "$D/hosts" 2>/dev/null || true; }  # "NAME ADDRESS ROLE DAEMON" lines
pid_alive() { [ -n "${1:-}" ] && kill -0 "$1" 2>/dev/null; }
pid_of() { cat "$1" 2>/dev/null || true; }

# stop_pids GRACE_S PID...: SIGTERM, up to GRACE_S seconds, then SIGKILL.
stop_pids() {
  local grace=$1; shift
  local pids=() p alive
  for p in "$@"; do pid_alive "$p" && pids+=("$p"); done
  [ ${#pids[@]} -eq 0 ] && return 0
  kill "${pids[@]}" 2>/dev/null || true
  for _ in $(seq $((grace * 10))); do
    alive=""
    for p in "${pids[@]}"; do pid_alive "$p" && alive="$alive $p"; done
    [ -z "$alive" ] && return 0
    sleep 0.1
  done
  say "SIGKILL:$alive"
  # shellcheck disable=SC2086
  kill -9 $alive 2>/dev/null || true
  for _ in $(seq 50); do
    alive=""
    for p in "${pids[@]}"; do pid_alive "$p" && alive="$alive $p"; done
    [ -z "$alive" ] && return 0
    sleep 0.1
  done
}

# in_host NAME CMD...: CMD in host NAME's namespaces (UTS and mount).
in_host() {
  local name=$1; shift
  nsenter --uts="$D/ns/$name.uts" --mount="$D/ns/$name.mnt" "$@"
}

# ---- down ---------------------------------------------------------------------

unmount_fuse() {  # unmount_fuse NAME|"" PATH: NAME's namespace, or this one for ""
  local name=$1 path=$2 run=()
  [ -n "$name" ] && run=(nsenter --mount="$D/ns/$name.mnt")
  "${run[@]}" mountpoint -q "$path" 2>/dev/null || return 0
  if ! timeout 15 "${run[@]}" umount "$path" 2>/dev/null; then
    say "$path${name:+ on $name} is busy or hung: detaching it lazily"
    "${run[@]}" umount -l "$path" 2>/dev/null || true
  fi
}

down() {
  [ -e "$D" ] || { say "not up (no $D): nothing to do"; return 0; }
  local name addr role daemon f
  # 1. Agents: nothing may hold a file open on a mount we are about to remove.
  local agent_pids=()
  for f in "$D"/run/agent-*.pid; do [ -e "$f" ] && agent_pids+=("$(pid_of "$f")"); done
  stop_pids 5 "${agent_pids[@]}"
  # 2. Client mounts, while the MDS and OSDs still answer.
  while read -r name addr role daemon; do
    [ "$role" = client ] && [ -e "$D/ns/$name.mnt" ] && unmount_fuse "$name" "$MNT"
  done < <(hosts)
  unmount_fuse "" "$MNT"
  local fuse_pids=()
  for f in "$D"/run/fuse-*.pid; do [ -e "$f" ] && fuse_pids+=("$(pid_of "$f")"); done
  stop_pids 5 "${fuse_pids[@]}"   # ceph-fuse exits by itself once unmounted
  # 3. The namespaces (persistent through bind mounts of their ns files).
  for f in "$D"/ns/*.uts "$D"/ns/*.mnt; do
    [ -e "$f" ] && umount "$f" 2>/dev/null || true
  done
  mountpoint -q "$D/ns" && umount "$D/ns" 2>/dev/null || true
  # 4. Daemons: the state is thrown away, so no orderly shutdown.
  local daemon_pids=()
  for f in "$D"/ceph/run/*.pid; do [ -e "$f" ] && daemon_pids+=("$(pid_of "$f")"); done
  stop_pids 3 "${daemon_pids[@]}"
  # 5. The state, only when nothing is mounted below it any more.
  if grep -q -e " $D/" -e " $MNT " /proc/self/mounts; then
    die "still mounted under $D or at $MNT (see /proc/self/mounts); not deleting $D"
  fi
  rm -rf --one-file-system "$D"
  local left
  left="$(pgrep -f -- "$D" || true)"
  [ -z "$left" ] || die "processes still running from $D: $left"
  say "down in $(el) s: nothing running, nothing mounted"
}

# ---- up -----------------------------------------------------------------------

find_bin() {  # the newest lockstep build of this checkout, else PATH
  local newest="" c
  for c in "$SRC"/build/release/$1 "$SRC"/build/*/$1; do
    [[ -x "$c" && -f "$c" ]] || continue
    if [[ -z "$newest" || "$c" -nt "$newest" ]]; then newest="$c"; fi
  done
  [ -n "$newest" ] && { echo "$newest"; return 0; }
  command -v "$1" 2>/dev/null || return 1
}

write_ceph_conf() {
  local fsid=$1 nosd=$2 i ip
  cat > "$CEPH_CONF" <<EOF
[global]
fsid = $fsid
mon_initial_members = a
mon_host = [v2:127.0.0.1:3300,v1:127.0.0.1:6789]
public_network = 127.0.0.0/8
ms_bind_ipv6 = false
auth_cluster_required = none
auth_service_required = none
auth_client_required = none
run_dir = $D/ceph/run
pid_file = $D/ceph/run/\$name.pid
admin_socket = $D/ceph/run/\$name.asok
log_file = $D/ceph/log/\$name.log
mon_cluster_log_file = $D/ceph/log/cluster.log
crash_dir = $D/ceph/crash
osd_pool_default_size = 2
osd_pool_default_min_size = 1
osd_pool_default_pg_autoscale_mode = off
osd_crush_chooseleaf_type = 1
mon_allow_pool_delete = true
mon_warn_on_pool_no_redundancy = false
mon_warn_on_insecure_global_id_reclaim_allowed = false
mon_data_avail_warn = 5

[mon]
mon_data = $D/ceph/\$name

[mgr]
mgr_data = $D/ceph/\$name
public_addr = 127.0.0.1

[osd]
osd_data = $D/ceph/\$name
osd_objectstore = bluestore
bluestore_block_create = true
bluestore_block_size = ${LOCKSTEP_TESTBED_OSD_BYTES:-8589934592}
osd_memory_target = 1073741824

[mds]
mds_data = $D/ceph/\$name
mds_cache_memory_limit = 268435456

[mds.a]
public_addr = 127.0.0.20

[client]
# ceph-fuse's own object cache (200 MiB by default) is user memory that
# drop_caches does not reach: kept small, so that a cache barrier leaves
# little of a phase's data on the client (the OSD lines show what the
# reads took from the OSDs).
client_oc_size = ${LOCKSTEP_TESTBED_CLIENT_OC_BYTES:-16777216}
log_file = $D/ceph/log/\$name.\$pid.log
admin_socket = $D/ceph/run/\$name.\$pid.asok
pid_file = $D/ceph/run/\$name.pid
EOF
  for i in $(seq 0 $((nosd - 1))); do
    ip=127.0.0.$((11 + i))
    printf '\n[osd.%d]\npublic_addr = %s\ncluster_addr = %s\ncrush_location = root=default host=osd%d\n' \
      "$i" "$ip" "$ip" "$i" >> "$CEPH_CONF"
  done
}

wait_for() {  # wait_for SECONDS WHAT CMD...: poll CMD every 0.2 s
  local s=$1 what=$2; shift 2
  for _ in $(seq $((s * 5))); do "$@" >/dev/null 2>&1 && return 0; sleep 0.2; done
  die "timed out after ${s} s waiting for $what (logs: $D/ceph/log/)"
}
osds_up() { ceph --connect-timeout 2 osd stat 2>/dev/null | grep -q "$1 up"; }
mds_active() { ceph --connect-timeout 2 mds stat 2>/dev/null | grep -q 'up:active'; }

start_cluster() {
  local nosd=$1 i uuid id pids=()
  mkdir -p "$D"/ceph/{run,log,crash,mon.a,mgr.x,mds.a}
  write_ceph_conf "$(uuidgen)" "$nosd"
  monmaptool --create --fsid "$(sed -n 's/^fsid = //p' "$CEPH_CONF")" \
    --addv a '[v2:127.0.0.1:3300,v1:127.0.0.1:6789]' "$D/ceph/monmap" >/dev/null
  ceph-mon -i a --mkfs --monmap "$D/ceph/monmap"
  ceph-mon -i a
  wait_for 30 "the MON" ceph --connect-timeout 2 mon stat
  ceph-mgr -i x
  for i in $(seq 0 $((nosd - 1))); do
    uuid=$(uuidgen)
    id=$(ceph osd new "$uuid")
    mkdir -p "$D/ceph/osd.$id"
    ceph-osd -i "$id" --mkfs --osd-uuid "$uuid" >>"$D/ceph/log/mkfs.osd.$id.log" 2>&1 &
    pids+=($!)
  done
  for i in "${pids[@]}"; do wait "$i" || die "OSD mkfs failed: see $D/ceph/log/mkfs.osd.*.log"; done
  for i in $(seq 0 $((nosd - 1))); do ceph-osd -i "$i" 2>>"$D/ceph/log/start.osd.$i.log"; done
  wait_for 60 "$nosd OSDs up" osds_up "$nosd"
  say "MON, MGR and $nosd OSDs up at $(el) s"
  ceph osd pool create cephfs_metadata 16 >/dev/null
  ceph osd pool create cephfs_data 32 >/dev/null
  ceph fs new cephfs cephfs_metadata cephfs_data >/dev/null
  ceph-mds -i a
  wait_for 60 "the MDS to become active" mds_active
  say "MDS active at $(el) s"
}

# make_host NAME: a UTS and a mount namespace that outlive their first process.
make_host() {
  local name=$1
  touch "$D/ns/$name.uts" "$D/ns/$name.mnt"
  unshare --uts="$D/ns/$name.uts" --mount="$D/ns/$name.mnt" --propagation private \
    hostname "$name"
}

mount_client() {  # mount_client NAME (its namespace) | "" (this one, the admin mount)
  local name=$1 path=$MNT id=$1 run=()
  if [ -z "$name" ]; then id=admin; else run=(in_host "$name"); fi
  "${run[@]}" mkdir -p "$path"
  "${run[@]}" ceph-fuse --id "$id" "$path" >>"$D/log/fuse-$id.log" 2>&1 ||
    die "ceph-fuse --id $id $path failed: see $D/log/fuse-$id.log and $D/ceph/log/"
  # ceph-fuse's pid file (the [client] pid_file of the config).
  cp "$D/ceph/run/client.$id.pid" "$D/run/fuse-$id.pid"
}

start_agent() {  # start_agent NAME ADDRESS ROLE DAEMON
  local name=$1 addr=$2 role=$3 daemon=$4 conf="$D/agents/$name.toml"
  local root="$MNT"
  [ "$role" = client ] || { root="$D/agents/$name.root"; mkdir -p "$root"; }
  {
    echo "listen = \"$addr:$PORT\""
    echo "role = \"$role\""
    echo "roots = [\"$root\"]"
    echo "[tls]"
    echo "ca = \"$D/tls/ca.pem\""
    echo "cert = \"$D/tls/agent-$name.pem\""
    echo "key = \"$D/tls/agent-$name.key\""
    if [ "$daemon" != - ]; then
      echo "[ceph]"
      echo "daemons = [\"$daemon\"]"
      echo "admin_socket = \"$D/ceph/run/\$name.asok\""
    fi
  } > "$conf"
  # setsid: the agent outlives this script and is not in its process group;
  # exec'd directly (no function, no subshell running this script's traps).
  nsenter --uts="$D/ns/$name.uts" --mount="$D/ns/$name.mnt" \
    setsid "$AGENT" --config "$conf" >"$D/log/agent-$name.log" 2>&1 < /dev/null &
  echo $! > "$D/run/agent-$name.pid"
}

agent_listening() { grep -q "listening on" "$D/log/agent-$1.log"; }
# An agent's first statfs of a fresh ceph-fuse mount can wait on the MDS
# session on a loaded machine: up to 60 s. When it never listens, its log
# is shown before `down` throws the state away.
agent_up() {
  local name=$1
  for _ in $(seq 300); do agent_listening "$name" && return 0; sleep 0.2; done
  echo "testbed: the agent of $name did not listen within 60 s; the end of its log:" >&2
  tail -n 40 "$D/log/agent-$name.log" >&2 || true
  die "timed out after 60 s waiting for the agent of $name (log: $D/log/agent-$name.log)"
}

status() {
  [ -e "$D/hosts" ] || { echo "testbed: not up; start it with: deploy/testbed/cephfs.sh up"; return 1; }
  local name addr role daemon bad=0 p
  while read -r name addr role daemon; do
    p="$(pid_of "$D/run/agent-$name.pid")"
    if pid_alive "$p"; then state="agent up"; else state="AGENT DOWN"; bad=1; fi
    if [ "$role" = client ]; then
      if in_host "$name" mountpoint -q "$MNT"; then state="$state, $MNT mounted"
      else state="$state, $MNT NOT MOUNTED"; bad=1; fi
    fi
    printf '%-8s %-11s %-6s %-6s %s\n' "$name" "$addr:$PORT" "$role" "$daemon" "$state"
  done < <(hosts)
  ceph --connect-timeout 5 health 2>/dev/null | sed 's/^/ceph: /' || { echo "ceph: no answer"; bad=1; }
  mountpoint -q "$MNT" && echo "this host (the controller's side) sees it at $MNT too"
  echo "hostfile: $D/hostfile  tls: $D/tls"
  return $bad
}

# agents BINARY [ROLE]: the agents of ROLE (client) stopped and started again
# as `up` starts them, with lockstep-agent BINARY (an A/B of two builds).
restart_agents() {
  local bin=${1:?agents needs the lockstep-agent binary to run} want=${2:-client}
  [ -x "$bin" ] || die "agents: $bin is not an executable lockstep-agent"
  bin=$(realpath "$bin")  # started in the hosts' mount namespaces
  [ -e "$D/hosts" ] || die "not up; start it with: deploy/testbed/cephfs.sh up"
  AGENT=$bin
  local name addr role daemon n=0
  while read -r name addr role daemon; do
    [ "$role" = "$want" ] || continue
    stop_pids 10 "$(pid_of "$D/run/agent-$name.pid")"
    start_agent "$name" "$addr" "$role" "$daemon"
    n=$((n + 1))
  done < <(hosts)
  [ "$n" -gt 0 ] || die "agents: no agent has role '$want' (client, oss or mds)"
  while read -r name addr role daemon; do
    [ "$role" = "$want" ] && agent_up "$name"
  done < <(hosts)
  say "$n $want agent(s) now run $bin"
}

up() {
  local clients=2 osds=3
  while [ $# -gt 0 ]; do
    case "$1" in
      --clients) clients=${2:?--clients needs a number}; shift 2 ;;
      --osds) osds=${2:?--osds needs a number}; shift 2 ;;
      *) die "unknown argument '$1'; usage: cephfs.sh up [--clients M] [--osds N]" ;;
    esac
  done
  [[ "$clients" =~ ^[1-9][0-9]?$ && "$clients" -le 20 ]] || die "--clients $clients: give 1 to 20"
  [[ "$osds" =~ ^[2-9]$ ]] || die "--osds $osds: give 2 to 9 (2 replicas need 2 OSD hosts)"
  [ "$(id -u)" -eq 0 ] || die "needs root (ceph-fuse mounts, namespaces, drop_caches)"
  [ -c /dev/fuse ] || die "no FUSE here (/dev/fuse is missing): ceph-fuse cannot mount; load the fuse module or run on a host with FUSE"
  if [ -e "$D/hosts" ] && status >/dev/null 2>&1; then
    say "already up:"; status; return 0
  fi
  if [ -e "$D" ]; then say "a half-built testbed is in $D: taking it down first"; down; fi
  # shellcheck source=../common.sh
  LOCKSTEP_BUILD_NAME=release source "$SRC/deploy/common.sh"
  trap - ERR
  lockstep_install_packages ceph-mon ceph-mgr ceph-osd ceph-mds ceph-fuse ceph-common fuse3 attr \
    uuid-runtime
  # $LOCKSTEP_BIN / $LOCKSTEP_AGENT_BIN when set (the ctest passes its build's).
  LOCKSTEP="${LOCKSTEP_BIN:-$(find_bin lockstep)}" &&
    AGENT="${LOCKSTEP_AGENT_BIN:-$(find_bin lockstep-agent)}" || {
    say "no lockstep build yet: building (Release)"
    lockstep_build Release -DLOCKSTEP_BUILD_TESTS=OFF
    LOCKSTEP="$LOCKSTEP_BUILD/lockstep"; AGENT="$LOCKSTEP_BUILD/lockstep-agent"
  }
  t0=$(date +%s.%N)
  # Any failure from here on (an error or a die) takes down what was started.
  trap 'rc=$?; if [ $rc -ne 0 ]; then echo "testbed: up failed (exit $rc); taking down what was started" >&2; trap - EXIT; down >&2 || true; fi' EXIT
  if mountpoint -q "$MNT"; then die "$MNT is already a mount point here: unmount it or set LOCKSTEP_TESTBED_MOUNT"; fi
  mkdir -p "$D"/{run,log,ns,agents}
  mount --bind "$D/ns" "$D/ns"
  mount --make-private "$D/ns"
  start_cluster "$osds"
  local j i
  {
    for j in $(seq 1 "$clients"); do echo "client$j 127.0.0.$((30 + j)) client -"; done
    for i in $(seq 0 $((osds - 1))); do echo "osd$i 127.0.0.$((11 + i)) oss osd.$i"; done
    echo "mds0 127.0.0.20 mds mds.a"
  } > "$D/hosts.new"
  local name addr role daemon certs=()
  while read -r name addr role daemon; do
    make_host "$name"
    certs+=(--agent "$name,$addr")
  done < "$D/hosts.new"
  "$LOCKSTEP" certs init --dir "$D/tls" "${certs[@]}" >/dev/null
  mount_client ""
  while read -r name addr role daemon; do
    [ "$role" = client ] && mount_client "$name"
  done < "$D/hosts.new"
  say "$clients client mounts at $MNT at $(el) s"
  while read -r name addr role daemon; do start_agent "$name" "$addr" "$role" "$daemon"; done < "$D/hosts.new"
  while read -r name addr role daemon; do agent_up "$name"; done < "$D/hosts.new"
  awk -v p=$PORT '{print $2 ":" p "  " $3 "   # " $1}' "$D/hosts.new" > "$D/hostfile"
  # The directories the shipped plans use (deploy/plans/testbed/); Lockstep,
  # like IOR, does not create a phase directory.
  mkdir -p "$MNT"/{ior,stripe,nton,shared,io500,layers}
  mv "$D/hosts.new" "$D/hosts"
  trap - EXIT
  say "up in $(el) s"
  status
  cat <<EOF

Try it (every client host sees the file system at $MNT, and so does this one):
  mkdir -p $MNT/ior
  $LOCKSTEP ior --hostfile $D/hostfile --tls_dir $D/tls \\
    -a POSIX -w -r -e -F -b 64m -t 1m -o $MNT/ior/testfile
  $LOCKSTEP run --hostfile $D/hostfile --tls_dir $D/tls PLAN.toml
Take it down: $SRC/deploy/testbed/cephfs.sh down
EOF
}

case "${1:-}" in
  up) shift; up "$@" ;;
  down) down ;;
  status) status ;;
  agents) shift; restart_agents "$@" ;;
  pid) cat "$D/ceph/run/${2:?which daemon? osd.0, mds.a, ...}.pid" 2>/dev/null ||
         die "no pid file for ${2} in $D/ceph/run (is the testbed up? is the name right?)" ;;
  *) echo "usage: $0 up [--clients M] [--osds N] | status | down | pid DAEMON | agents BINARY [ROLE]" >&2; exit 2 ;;
esac
