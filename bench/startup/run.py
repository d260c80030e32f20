#!/usr/bin/env python3
"""Start-up and state benchmark of the test controls (issue 17).

- Start-up to ready: `nubis serve --database sqlite::memory:` on 127.0.0.1, from the spawn to
  the first 200 of `/healthz`, N times; beside it the same for the minimal axum server of the
  API benchmark (`api_baseline`, no database), the floor of any Rust HTTP server here.
- Restore of a small state: a snapshot of a few accounts, VPCs and instances, restored N times
  through `POST /nubis/v1/snapshots/{name}/restore` (wall time of the request, and the database
  part nubis reports as `took_ms`); and `POST /nubis/v1/reset`.

Writes its section of docs/performance.md (through bench/splice.py) unless NO_DOCS=1.
Usage: bench/startup/run.py NUBIS_BIN BASELINE_BIN   env: N (default 20)
"""

import json
import os
import pathlib
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

N = int(os.environ.get("N", "20"))
NUBIS, BASELINE = sys.argv[1], sys.argv[2]
ROOT = pathlib.Path(__file__).resolve().parents[2]
BOOT = "bench-startup-bootstrap-token-0001"
OP = "bench-startup-operator-token-00001"
# Never through a proxy: everything is on 127.0.0.1.
OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def call(method, url, token=None, body=None):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method=method)
    if token:
        req.add_header("Authorization", f"Bearer {token}")
    if data is not None:
        req.add_header("Content-Type", "application/json")
    with OPENER.open(req, timeout=30) as r:
        return r.status, json.loads(r.read() or b"null")


def until_ready(url, deadline):
    while time.monotonic() < deadline:
        try:
            with OPENER.open(url, timeout=1) as r:
                if r.status == 200:
                    return True
        except OSError:
            time.sleep(0.001)
    return False


def start(cmd, ready_url):
    """Spawns, waits for 200 on ready_url; returns (process, seconds to ready)."""
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         env={**os.environ, "NUBIS_LOG": "warn"})
    if not until_ready(ready_url, t0 + 30):
        p.kill()
        raise RuntimeError(f"{cmd[0]} did not become ready")
    return p, time.monotonic() - t0


def stop(p):
    p.terminate()
    try:
        p.wait(timeout=10)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()


def nubis_cmd(port, data_dir, extra=()):
    return [NUBIS, "serve", "--listen", f"127.0.0.1:{port}", "--database", "sqlite::memory:",
            "--data-dir", data_dir, "--bootstrap-token", BOOT, *extra]


def startups():
    nubis, base = [], []
    for _ in range(N):
        with tempfile.TemporaryDirectory(prefix="nubis-startup-") as d:
            port = free_port()
            p, t = start(nubis_cmd(port, d), f"http://127.0.0.1:{port}/healthz")
            nubis.append(t)
            stop(p)
        port = free_port()
        p, t = start([BASELINE, f"127.0.0.1:{port}"], f"http://127.0.0.1:{port}/v4/profile/tokens")
        base.append(t)
        stop(p)
    return nubis, base


def restores():
    with tempfile.TemporaryDirectory(prefix="nubis-restore-") as d:
        port = free_port()
        p, _ = start(nubis_cmd(port, d, ["--operator-token", OP, "--no-dataplane"]),
                     f"http://127.0.0.1:{port}/healthz")
        try:
            api, ctl = f"http://127.0.0.1:{port}/v4", f"http://127.0.0.1:{port}/nubis/v1"
            for i in range(10):
                call("POST", f"{api}/vpcs", BOOT, {"label": f"net-{i}", "region": "us-east",
                                                   "subnets": [{"label": "a", "ipv4": "10.0.0.0/24"}]})
            for i in range(5):
                call("POST", f"{api}/compute/instances", BOOT,
                     {"label": f"vm-{i}", "region": "us-east", "type": "g6-nanode-1", "booted": False})
            time.sleep(0.5)
            call("POST", f"{ctl}/snapshots", OP, {"name": "small"})
            wall, db = [], []
            for _ in range(N):
                call("POST", f"{api}/vpcs", BOOT, {"label": "extra", "region": "us-east"})
                t0 = time.monotonic()
                _, r = call("POST", f"{ctl}/snapshots/small/restore", OP)
                wall.append(time.monotonic() - t0)
                db.append(r["took_ms"] / 1000)
            resets = []
            for _ in range(5):
                t0 = time.monotonic()
                call("POST", f"{ctl}/reset", OP)
                resets.append(time.monotonic() - t0)
            return wall, db, resets
        finally:
            stop(p)


def ms(xs):
    xs = sorted(xs)
    p90 = xs[min(len(xs) - 1, int(len(xs) * 0.9))]
    return f"{statistics.median(xs) * 1000:.1f} ms (min {xs[0] * 1000:.1f}, p90 {p90 * 1000:.1f}, max {xs[-1] * 1000:.1f})"


def main():
    nubis, base = startups()
    wall, db, resets = restores()
    load = os.getloadavg()[0]
    build = "release" if "/release/" in NUBIS else "debug"
    section = f"""# Start-up and restore

Produced by `bench/startup/run.sh` (N={N}, {build} build) on {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {os.cpu_count()} cores, 1-min load average {load:.2f} at the end.

| what | median (min, p90, max) | target |
|---|---|---|
| `nubis serve --database sqlite::memory:` spawn → first 200 of `/healthz` | {ms(nubis)} | < 300 ms |
| minimal axum server (`api_baseline`, no database) spawn → first 200 | {ms(base)} | floor |
| restore of a small state (10 VPCs, 5 instances), `POST /nubis/v1/snapshots/small/restore`, wall time of the request | {ms(wall)} | < 50 ms |
| the same, database part (`took_ms`) | {ms(db)} | |
| `POST /nubis/v1/reset` (fresh first-run state), wall time | {ms(resets)} | |

Start-up of nubis / floor (medians): **{statistics.median(nubis) / statistics.median(base):.1f}x**.
"""
    print(section)
    if os.environ.get("NO_DOCS") != "1":
        out = ROOT / "bench" / "out" / "startup"
        out.mkdir(parents=True, exist_ok=True)
        (out / "section.md").write_text(section)
        subprocess.run([sys.executable, str(ROOT / "bench" / "splice.py"), "startup", str(out / "section.md")], check=True)


if __name__ == "__main__":
    main()
