#!/usr/bin/env python3
"""Slow clients against lockstep-service: how long a reader waits for an answer
while N TLS connections send their request head one byte every GAP seconds
(as a slowloris does, below the service's per-read timeout), each opened again
when the service closes it (--reopen) or not.

  slow_clients.py --port P --ca CA.pem --connections N [--gap_s 2] [--hold_s 12]
                  [--reopen] [--probes 3] [--probe_timeout_s 30]

After the N connections have been opened and have held for --hold_s, it asks
GET /index.csv without a credential --probes times, one after another (the
service answers 401 from its worker threads without its database: the answer
measures the threads, not PostgreSQL), and prints one JSON line: the probes'
waits in seconds (null: no answer within --probe_timeout_s), and how many slow
connections the service closed. Results and the commands that gave them:
tests/bench/README.md.
"""
import argparse
import json
import socket
import ssl
import threading
import time

HEAD = b"GET / HTTP/1.1\r\nHost: x\r\nX-a: "


def slow_connection(args, ctx, stop, stats, lock):
    while not stop.is_set():
        try:
            raw = socket.create_connection(("127.0.0.1", args.port), timeout=60)
            conn = ctx.wrap_socket(raw, server_hostname="127.0.0.1")
            with lock:
                stats["opened"] += 1
            i = 0
            while not stop.is_set():
                conn.send(HEAD[i:i + 1] if i < len(HEAD) else b"a")
                i += 1
                stop.wait(args.gap_s)
            conn.close()
            return
        except (OSError, ssl.SSLError):
            with lock:
                stats["closed_by_service"] += 1
        if not args.reopen:
            return


def probe(args, ctx):
    begin = time.monotonic()
    try:
        raw = socket.create_connection(("127.0.0.1", args.port), timeout=args.probe_timeout_s)
        conn = ctx.wrap_socket(raw, server_hostname="127.0.0.1")
        conn.sendall(b"GET /index.csv HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        first = conn.recv(64)
        conn.close()
        if not first.startswith(b"HTTP/1.1 "):
            return None
        return round(time.monotonic() - begin, 2)
    except (OSError, ssl.SSLError):
        return None


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--ca", required=True)
    p.add_argument("--connections", type=int, required=True)
    p.add_argument("--gap_s", type=float, default=2.0)
    p.add_argument("--hold_s", type=float, default=12.0)
    p.add_argument("--reopen", action="store_true")
    p.add_argument("--probes", type=int, default=3)
    p.add_argument("--probe_timeout_s", type=float, default=30.0)
    args = p.parse_args()
    ctx = ssl.create_default_context(cafile=args.ca)
    stop = threading.Event()
    lock = threading.Lock()
    stats = {"opened": 0, "closed_by_service": 0}
    threads = []
    for _ in range(args.connections):
        t = threading.Thread(target=slow_connection, args=(args, ctx, stop, stats, lock),
                             daemon=True)
        t.start()
        threads.append(t)
        time.sleep(0.01)
    time.sleep(args.hold_s)
    waits = [probe(args, ctx) for _ in range(args.probes)]
    stop.set()
    with lock:
        result = dict(stats)
    print(json.dumps({"connections": args.connections, "gap_s": args.gap_s,
                      "reopen": args.reopen, "hold_s": args.hold_s, "probe_waits_s": waits,
                      **result}), flush=True)


if __name__ == "__main__":
    main()
