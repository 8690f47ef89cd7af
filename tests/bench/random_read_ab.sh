#!/usr/bin/env bash
# Usage: tests/bench/random_read_ab.sh [BUILD_DIR]   (default build/release)
set -euo pipefail
LOCKSTEP="${1:-$(dirname "$0")/../../build/release}/lockstep"
PLAN=$(mktemp /tmp/rand4k-XXXXXX.toml)
cat > "$PLAN" <<'TOML'
[run]
name = "rand4k"
[[phase]]
name = "lay"
kind = "write"
dir = "."
file_per_process = true
transfer_size = "1m"
block_size = "256m"
keep = true
[[phase]]
name = "randread"
kind = "read"
dir = "."
file_per_process = true
transfer_size = "4k"
block_size = "256m"
random_offsets = true
keep = true
TOML
# A/B: Lockstep random 4 KiB reads vs fio randread (psync), /dev/shm, 256 MiB file, 1 task.
mkdir -p /dev/shm/lsb /dev/shm/fiob
fio --name=lay --directory=/dev/shm/fiob --rw=write --bs=1m --size=256m --numjobs=1 > /dev/null 2>&1
for i in 1 2 3 4 5 6 7; do
  if (( i % 2 )); then order="L F"; else order="F L"; fi
  for who in $order; do
    if [ $who = L ]; then
      d=$("$LOCKSTEP" run --local 1 --local_root /dev/shm/lsb --out /tmp/lsr --history=false "$PLAN" | grep "^# Results : " | awk '{print $4}')
      L=$(python3 -c "import json,sys;r=json.load(open(sys.argv[1]+'/run.json'));p=[p for p in r['tests'][0]['phases'] if p['phase']=='randread'][0]['row'];print('%.1f %.1f'%(int(p['bytes'])/p['total_s']/2**20, int(p['bytes'])/p['wrrd_s']/2**20))" "$d")
    else
      F=$(fio --name=lay --directory=/dev/shm/fiob --rw=randread --bs=4k --size=256m --ioengine=psync --numjobs=1 --output-format=json 2>/dev/null | python3 -c "import json,sys;j=json.load(sys.stdin);print('%.1f'%(j['jobs'][0]['read']['bw_bytes']/2**20))")
    fi
  done
  echo "$L $F"
done | python3 -c "
import sys,statistics
rows=[list(map(float,l.split())) for l in sys.stdin if l.strip()]
for r in rows: print('lockstep IOR %.0f wrrd %.0f fio %.0f  ratio(IOR) %.2f ratio(wrrd) %.2f'%(r[0],r[1],r[2],r[0]/r[2],r[1]/r[2]))
print('median ratio IOR/fio %.2f, wrrd/fio %.2f (n=%d)'%(statistics.median(r[0]/r[2] for r in rows),statistics.median(r[1]/r[2] for r in rows),len(rows)))"
rm -rf /dev/shm/lsb /dev/shm/fiob
