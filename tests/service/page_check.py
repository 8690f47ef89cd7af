#!/usr/bin/env python3
"""Loads pages of the results service in headless Chromium (DevTools over
--remote-debugging-pipe, no extra modules) and checks what a person sees:

  page_check.py CHROMIUM WORKDIR BASE_URL TOKEN SPKI EXPECT.json OUT_DIR

EXPECT.json: {"pages": [{"path": "/sites/a/plans/p", "kind": "trend",
"rows": {"RUN_ID": ["12.34", ...]}} | {"path": ..., "kind": "class",
"sites": {"SITE": ["12.34", ...]}}]}. For each page: signs in with the
reader token (/login?token=..&next=PATH), renders it at 1300 px, and fails
when the page is wider than 1300 px, when any request left BASE_URL, when
it has a <script>, or when the medians shown differ from the expected ones.
Writes a screenshot of each page to OUT_DIR. Exit 0 when all pass."""
import base64, json, os, subprocess, sys, time, urllib.parse

chromium, work, base, token, spki, expect_path, out_dir = sys.argv[1:8]
expect = json.load(open(expect_path))

r_in, w_in = os.pipe()    # we write commands, chromium reads fd 3
r_out, w_out = os.pipe()  # chromium writes fd 4, we read


def child():
    os.dup2(r_in, 3)
    os.dup2(w_out, 4)


proc = subprocess.Popen(
    [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
     "--remote-debugging-pipe", "--user-data-dir=" + os.path.join(work, "chrome"),
     "--ignore-certificate-errors-spki-list=" + spki,
     "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
     "--window-size=1300,900", "about:blank"],
    preexec_fn=child, close_fds=False, stdout=subprocess.DEVNULL,
    stderr=open(os.path.join(work, "chromium.log"), "w"))
os.close(r_in)
os.close(w_out)
wfile = os.fdopen(w_in, "wb", buffering=0)
rfile = os.fdopen(r_out, "rb", buffering=0)
buf = b""
next_id = 0
events = []


def read_message(deadline):
    global buf
    while b"\0" not in buf:
        if time.time() > deadline:
            raise SystemExit("chromium: no answer before the deadline")
        chunk = rfile.read(65536)
        if not chunk:
            raise SystemExit("chromium closed the DevTools pipe (see chromium.log)")
        buf += chunk
    msg, buf = buf.split(b"\0", 1)
    return json.loads(msg)


def call(method, params=None, session=None, timeout=30):
    global next_id
    next_id += 1
    msg = {"id": next_id, "method": method, "params": params or {}}
    if session:
        msg["sessionId"] = session
    wfile.write(json.dumps(msg).encode() + b"\0")
    deadline = time.time() + timeout
    while True:
        m = read_message(deadline)
        if m.get("id") == next_id:
            if "error" in m:
                raise SystemExit(f"{method}: {m['error']}")
            return m.get("result", {})
        events.append(m)


def wait_event(name, session, timeout=30):
    deadline = time.time() + timeout
    while True:
        for i, e in enumerate(events):
            if e.get("method") == name and e.get("sessionId") == session:
                del events[i]
                return e
        events.append(read_message(deadline))


PROBE = r"""JSON.stringify({
  width: document.documentElement.scrollWidth,
  scripts: document.querySelectorAll('script').length,
  svgs: document.querySelectorAll('svg').length,
  runs: Array.from(document.querySelectorAll('tr[data-run]')).map(tr =>
      [tr.dataset.run, Array.from(tr.querySelectorAll('td')).slice(4).map(td => td.textContent)]),
  sites: Array.from(document.querySelectorAll('tr[data-site]')).map(tr =>
      [tr.dataset.site, tr.querySelector('td.median').textContent]),
  title: document.title})"""

failures = []
target = call("Target.createTarget", {"url": "about:blank"})["targetId"]
session = call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
call("Network.enable", session=session)
call("Page.enable", session=session)
call("Emulation.setDeviceMetricsOverride",
     {"width": 1300, "height": 900, "deviceScaleFactor": 1, "mobile": False}, session=session)
for i, page in enumerate(expect["pages"]):
    events.clear()
    url = f"{base}/login?token={token}&next={urllib.parse.quote(page['path'])}"
    call("Page.navigate", {"url": url}, session=session)
    wait_event("Page.loadEventFired", session)
    requested = [e["params"]["request"]["url"] for e in events
                 if e.get("method") == "Network.requestWillBeSent"]
    probe = json.loads(call("Runtime.evaluate", {"expression": PROBE, "returnByValue": True},
                            session=session)["result"]["value"])
    shot = call("Page.captureScreenshot", {"format": "png"}, session=session)["data"]
    open(os.path.join(out_dir, f"page{i}.png"), "wb").write(base64.b64decode(shot))
    where = page["path"]
    outside = [u for u in requested if not u.startswith(base + "/")]
    if outside:
        failures.append(f"{where}: fetched outside {base}: {outside}")
    if probe["width"] > 1300:
        failures.append(f"{where}: {probe['width']} px wide, more than 1300")
    if probe["scripts"]:
        failures.append(f"{where}: has <script>")
    if page["kind"] == "trend":
        shown = {run: sorted(cells) for run, cells in probe["runs"]}
        want = {run: sorted(cells) for run, cells in page["rows"].items()}
        if shown != want:
            failures.append(f"{where}: medians shown {shown}, expected {want}")
        if probe["svgs"] < 1:
            failures.append(f"{where}: no trend plot")
    if page["kind"] == "class":
        shown = {}
        for site, median in probe["sites"]:
            shown.setdefault(site, []).append(median)
        shown = {s: sorted(v) for s, v in shown.items()}
        want = {s: sorted(v) for s, v in page["sites"].items()}
        if shown != want:
            failures.append(f"{where}: site medians shown {shown}, expected {want}")
    print(f"page {where}: {probe['width']} px, {len(requested)} request(s), "
          f"title {probe['title']!r}")
proc.terminate()
proc.wait(timeout=20)
for f in failures:
    print("FAIL:", f)
sys.exit(1 if failures else 0)
