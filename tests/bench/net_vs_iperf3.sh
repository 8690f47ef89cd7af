#!/usr/bin/env bash
# lockstep's net phase against iperf3 on the same pair, A/B alternated
# (issue 42): one client agent streaming to one server agent (role oss) on
# loopback, 1 and 4 streams, DURATION seconds each, ROUNDS rounds, messages
# of 1 MiB on both. iperf3 runs one client process per stream (-l 1M -t
# DURATION), each against its own iperf3 -s, all at once: Debian 12's iperf3
# (3.12) moves all -P streams in one thread, so -P 4 measures one core, not
# the network. Prints each figure, the ratio net/iperf3 of the medians,
# lockstep's ping p50 and the CPU seconds per GiB moved: both agents' (their
# /proc stat around each lockstep run, the run's control calls included)
# and iperf3's (client and server, from its -J cpu_utilization_percent).
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
servers = [subprocess.Popen(["iperf3", "-s", "-p", str(5299 + i), "-B", "127.0.0.1"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
           for i in range(4)]
def iperf_ready(port):
    import socket
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0
deadline = time.monotonic() + 10
while not all(iperf_ready(5299 + i) for i in range(4)):
    if time.monotonic() > deadline:
        raise SystemExit("iperf3 -s did not listen within 10 s")
    time.sleep(0.05)
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
                    procs = [subprocess.Popen(["iperf3", "-c", "127.0.0.1", "-p", str(5299 + i), "-l", "1M",
                                               "-t", str(a.duration), "-J"], stdout=subprocess.PIPE,
                                              text=True) for i in range(streams)]
                    mib = cpu = gib = 0.0
                    for p in procs:
                        j = json.loads(p.communicate()[0])
                        e = j["end"]
                        secs = e["sum_received"]["seconds"]
                        mib += e["sum_received"]["bytes"] / secs / 2**20
                        gib += e["sum_received"]["bytes"] / 2**30
                        u = e["cpu_utilization_percent"]
                        cpu += (u["host_total"] + u["remote_total"]) / 100 * secs
                    results.setdefault(("iperf3", streams), []).append(mib)
                    results.setdefault(("iperf3_cpu", streams), []).append(cpu / gib)
                    print(f"round {rnd} streams {streams} iperf3      {mib:9.1f} MiB/s, CPU {cpu / gib:.3f} s/GiB",
                          flush=True)
    for streams in (1, 4):
        l = benchlib.median(results[("lockstep", streams)])
        i = benchlib.median(results[("iperf3", streams)])
        c = benchlib.median(results[("cpu_per_gib", streams)])
        ic = benchlib.median(results[("iperf3_cpu", streams)])
        print(f"streams {streams}: lockstep net {l:.1f} MiB/s, iperf3 {i:.1f} MiB/s, "
              f"ratio {l / i:.3f} (median of {a.rounds}); CPU per GiB: agents {c:.3f} s, "
              f"iperf3 {ic:.3f} s")
finally:
    for s in servers:
        s.terminate()
    client.stop()
    server.stop()
PY
