#!/usr/bin/env python3
"""Steady write load for the scale benchmark: creates VPCs through the API at RATE per second on
one keep-alive connection to 127.0.0.1 until killed; prints how many it sent and how many failed.
Usage: writer.py HOST:PORT TOKEN RATE"""
import http.client, json, signal, sys, time

hostport, token, rate = sys.argv[1], sys.argv[2], float(sys.argv[3])
host, port = hostport.rsplit(":", 1)
assert host.startswith("127."), "the benchmark sends traffic only to 127.0.0.0/8"
conn = http.client.HTTPConnection(host, int(port), timeout=10)
sent = failed = 0
stop = False
def on_term(*_):
    global stop
    stop = True
signal.signal(signal.SIGTERM, on_term)
prefix = f"load-{int(time.time())}"
t0 = time.monotonic()
while not stop:
    body = json.dumps({"label": f"{prefix}-{sent}", "region": "us-west"})
    try:
        conn.request("POST", "/v4/vpcs", body, {"Authorization": f"Bearer {token}", "Content-Type": "application/json"})
        r = conn.getresponse()
        r.read()
        if r.status != 200:
            failed += 1
    except Exception:
        failed += 1
        conn = http.client.HTTPConnection(host, int(port), timeout=10)
    sent += 1
    delay = t0 + sent / rate - time.monotonic()
    if delay > 0:
        time.sleep(delay)
print(f"writer: {sent} sent, {failed} failed, {sent / (time.monotonic() - t0):.1f}/s", file=sys.stderr)
