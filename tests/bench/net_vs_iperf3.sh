#!/usr/bin/env bash
# lockstep's net phase against iperf3 on the same pair, A/B alternated
# (issue 42): one client agent streaming to one server agent (role oss) on
# loopback, 1 and 4 streams, DURATION seconds each, ROUNDS rounds; iperf3 -c
# with -P streams and -t DURATION against an iperf3 -s started for the
# bench. Prints each figure, the ratio net/iperf3 of the medians, and the
# CPU seconds both agents spent per GiB moved (their /proc stat around each
# lockstep run, which includes the run's control calls).
#
#   tests/bench/net_vs_iperf3.sh [--build DIR] [--rounds 3] [--duration 5]
source "$(dirname "$0")/lib.sh"
bench_args net_vs_iperf3 "$@"
bench_need iperf3 iperf3
bench_python - <<'PY'
import argparse, json, os, subprocess, tempfile, time
import benchlib

ap = argparse.ArgumentParser()
ap.add_argument("--build", required=True)
ap.add_argument("--rounds", type=int, default=3)
ap.add_argument("--duration", type=int, default=5)
a = ap.parse_args()
bins = benchlib.Bins(a.build)
work = tempfile.mkdtemp(prefix="net-vs-iperf3-")
client = benchlib.start_agent(bins, f"{work}/c", work)
server = benchlib.start_agent(bins, f"{work}/s", work, extra=["--role", "oss"])
iperf = subprocess.Popen(["iperf3", "-s", "-p", "5299", "-B", "127.0.0.1"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
time.sleep(0.5)  # iperf3 -s prints nothing we can wait on reliably
plan_head = (f'[run]\nname = "net-vs-iperf3"\n\n[[agent]]\naddress = "{client.address}"\n\n'
             f'[[agent]]\naddress = "{server.address}"\nrole = "oss"\n\n')
results = {}
try:
    for rnd in range(a.rounds):
        for streams in (1, 4):
            order = ("lockstep", "iperf3") if rnd % 2 == 0 else ("iperf3", "lockstep")
            for tool in order:
                if tool == "lockstep":
                    plan = plan_head + (f'[[phase]]\nname = "net"\nkind = "net"\nstreams = {streams}\n'
                                        f'duration_seconds = {a.duration}\nping_count = 100\n')
                    cpu0 = benchlib.cpu_s(client.pid) + benchlib.cpu_s(server.pid)
                    rec, out = benchlib.run_lockstep(bins, plan, f"{work}/out", ["--history=false"])
                    cpu = benchlib.cpu_s(client.pid) + benchlib.cpu_s(server.pid) - cpu0
                    p = next(benchlib.phases(rec))
                    mib = p["row"]["bw_mib"]
                    gib = int(p["row"]["bytes"]) / 2**30
                    lat = p.get("latency", {})
                    results.setdefault(("lockstep", streams), []).append(mib)
                    results.setdefault(("cpu_per_gib", streams), []).append(cpu / gib)
                    print(f"round {rnd} streams {streams} lockstep net {mib:9.1f} MiB/s, "
                          f"agents' CPU {cpu:.2f} s for {gib:.1f} GiB = {cpu / gib:.3f} s/GiB, "
                          f"ping p50 {lat.get('p50_us', 0):.1f} us", flush=True)
                else:
                    r = subprocess.run(["iperf3", "-c", "127.0.0.1", "-p", "5299", "-P", str(streams),
                                        "-t", str(a.duration), "-J"], capture_output=True, text=True,
                                       check=True)
                    j = json.loads(r.stdout)
                    mib = j["end"]["sum_received"]["bytes"] / j["end"]["sum_received"]["seconds"] / 2**20
                    results.setdefault(("iperf3", streams), []).append(mib)
                    print(f"round {rnd} streams {streams} iperf3      {mib:9.1f} MiB/s", flush=True)
    for streams in (1, 4):
        l = benchlib.median(results[("lockstep", streams)])
        i = benchlib.median(results[("iperf3", streams)])
        c = benchlib.median(results[("cpu_per_gib", streams)])
        print(f"streams {streams}: lockstep net {l:.1f} MiB/s, iperf3 {i:.1f} MiB/s, "
              f"ratio {l / i:.3f} (median of {a.rounds}); agents' CPU {c:.3f} s per GiB")
finally:
    iperf.terminate()
    client.stop()
    server.stop()
PY
