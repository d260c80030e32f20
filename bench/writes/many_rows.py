#!/usr/bin/env python3
"""Requests that write many rows in one transaction, timed at a small and a large size.

Against one nubis at $BASE (127.0.0.1 only) with token $TOKEN: a balancer configuration rebuilt
with SMALL then LARGE new nodes (each rebuild replaces the nodes before), and a firewall created
with SMALL then LARGE instances as its devices. Prints one JSON object: for each request and
size, the seconds it took and the seconds per row; `ratio` is the small size's cost per row
over the large size's (1.0: a row costs the same however many the request writes).
"""
import json
import os
import sys
import time
import urllib.request

BASE = os.environ["BASE"]
assert BASE.startswith("http://127.0.0.1:"), "benchmarks talk to 127.0.0.1 only"
TOKEN = os.environ["TOKEN"]
SMALL, LARGE = int(os.environ.get("SMALL", "100")), int(os.environ.get("LARGE", "1000"))
HEADERS = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"}


def call(method, path, body=None):
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(BASE + path, method=method, headers=HEADERS, data=data)
    with urllib.request.urlopen(req, timeout=900) as r:
        return json.loads(r.read() or b"{}")


def timed(method, path, body):
    t = time.monotonic()
    call(method, path, body)
    return time.monotonic() - t


def main():
    inst = call("POST", "/linode/instances", {"region": "us-east", "type": "g6-nanode-1", "label": "backend",
                                              "private_ip": True})
    private = next(a for a in inst["ipv4"] if a.startswith("192.168."))
    nb = call("POST", "/nodebalancers", {"region": "us-east", "label": "many-nodes"})
    cfg = call("POST", f"/nodebalancers/{nb['id']}/configs", {"port": 80, "protocol": "tcp"})
    rebuild = f"/nodebalancers/{nb['id']}/configs/{cfg['id']}/rebuild"
    out = {}
    for n in (SMALL, LARGE):
        nodes = [{"label": f"n{n}-{i}", "address": f"{private}:{1 + i}"} for i in range(n)]
        out[f"rebuild {n} nodes"] = timed("POST", rebuild, {"port": 80, "protocol": "tcp", "nodes": nodes})
    ids = [call("POST", "/linode/instances", {"region": "us-east", "type": "g6-nanode-1", "label": f"device-{i}"})["id"]
           for i in range(SMALL + LARGE)]
    rules = {"inbound_policy": "ACCEPT", "outbound_policy": "ACCEPT"}
    for n, chosen in ((SMALL, ids[:SMALL]), (LARGE, ids[SMALL:])):
        body = {"label": f"devices-{n}", "rules": rules, "devices": {"instances": chosen}}
        out[f"firewall create with {n} devices"] = timed("POST", "/networking/firewalls", body)
    rows = []
    for what, small_key, large_key in (("rebuild", f"rebuild {SMALL} nodes", f"rebuild {LARGE} nodes"),
                                       ("firewall create", f"firewall create with {SMALL} devices",
                                        f"firewall create with {LARGE} devices")):
        s, l = out[small_key] / SMALL, out[large_key] / LARGE
        rows.append({"request": what, "small": SMALL, "large": LARGE, "small_s": round(out[small_key], 3),
                     "large_s": round(out[large_key], 3), "ms_per_row_small": round(s * 1000, 3),
                     "ms_per_row_large": round(l * 1000, 3), "ratio": round(s / l, 2)})
    json.dump(rows, sys.stdout)
    print()


main()
