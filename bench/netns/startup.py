#!/usr/bin/env python3
"""Start-up of N real instances (netns driver): time from the create request to `running`, and
to the first answer of the HTTP server their user data starts.

Needs root. Starts `nubis serve --runtime-driver netns` on 127.0.0.1 with a throwaway data
directory, creates N instances one after the other (as fast as the API answers), polls the API
and each instance's public address (198.18.0.0/15: a namespace on this host) every 50 ms,
prints the figures, then stops the server by its pid and removes everything nubis made
(`nubis admin runtime sweep`). Traffic goes only to 127.0.0.1 and to those namespaces.

Usage: bench/netns/startup.py [N] [path/to/nubis]
"""

import base64, json, os, shutil, statistics, subprocess, sys, tempfile, time, urllib.request
from concurrent.futures import ThreadPoolExecutor

N = int(sys.argv[1]) if len(sys.argv) > 1 else 50
BIN = sys.argv[2] if len(sys.argv) > 2 else os.path.join(os.path.dirname(__file__), "../../target/debug/nubis")
TOKEN = "bench-netns-startup-token-0001"
LISTEN = "127.0.0.1:18181"
API = f"http://{LISTEN}/v4"
USER_DATA = base64.b64encode(
    b'#!/bin/sh\nmkdir -p /tmp/www && cd /tmp/www && echo "I am $(hostname)" > index.html\n'
    b"nohup python3 -m http.server 80 >/tmp/http.log 2>&1 &\n"
).decode()
NO_PROXY = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def call(method, path, body=None):
    req = urllib.request.Request(API + path, method=method, data=json.dumps(body).encode() if body else None)
    req.add_header("Authorization", f"Bearer {TOKEN}")
    req.add_header("Content-Type", "application/json")
    with NO_PROXY.open(req, timeout=10) as r:
        return json.loads(r.read() or b"{}")


def answers(addr):
    assert addr.startswith("198.18.") or addr.startswith("198.19."), addr
    try:
        with NO_PROXY.open(f"http://{addr}/", timeout=0.5) as r:
            return r.read().startswith(b"I am ")
    except Exception:
        return False


def sweep(data):
    subprocess.run([BIN, "admin", "--data-dir", data, "runtime", "sweep"], check=True, capture_output=True)


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


def main():
    data = tempfile.mkdtemp(prefix="nubis-bench-netns-")
    sweep(data)
    env = dict(os.environ, NUBIS_LOG="warn")
    server = subprocess.Popen(
        [BIN, "serve", "--runtime-driver", "netns", "--listen", LISTEN, "--data-dir", data,
         "--bootstrap-token", TOKEN],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, text=True)
    try:
        for line in server.stdout:
            if line.startswith("nubis: listening"):
                break
        created, running, answered, addr = {}, {}, {}, {}
        start = time.monotonic()
        for i in range(N):
            t = time.monotonic()
            inst = call("POST", "/linode/instances",
                        {"region": "us-east", "type": "g6-nanode-1", "label": f"bench-{i:03d}",
                         "metadata": {"user_data": USER_DATA}})
            created[inst["id"]] = t
            addr[inst["id"]] = inst["ipv4"][0]
        posted = time.monotonic() - start
        pool = ThreadPoolExecutor(N)
        deadline = time.monotonic() + 300
        while (len(running) < N or len(answered) < N) and time.monotonic() < deadline:
            now = time.monotonic()
            page = call("GET", "/linode/instances?page_size=500")
            for inst in page["data"]:
                if inst["status"] == "running" and inst["id"] not in running:
                    running[inst["id"]] = now
            todo = [i for i in created if i not in answered]
            for i, ok in zip(todo, pool.map(lambda i: answers(addr[i]), todo)):
                if ok:
                    answered[i] = time.monotonic()
            time.sleep(0.05)
        total = time.monotonic() - start
        to_running = [running[i] - created[i] for i in running]
        to_answer = [answered[i] - created[i] for i in answered]
        print(f"instances: {N}; create requests: {posted:.2f} s for all {N}")
        print(f"running: {len(running)}/{N}; answered: {len(answered)}/{N}; all done after {total:.1f} s")
        for name, xs in [("to running", to_running), ("to first HTTP answer", to_answer)]:
            if xs:
                print(f"{name}: p50 {statistics.median(xs):.2f} s, p90 {pct(xs, 90):.2f} s, max {max(xs):.2f} s")
    finally:
        server.terminate()
        server.wait()
        sweep(data)
        shutil.rmtree(data, ignore_errors=True)


if __name__ == "__main__":
    main()
