#!/usr/bin/env python3
"""Summarise bench/lb/run.sh rows: medians per (row, server), ratios nubis/HAProxy and nubis/direct; write markdown."""
import statistics, sys, time, os, collections

rows_path, mem_path, md_path, params = sys.argv[1:5]
rows = collections.defaultdict(list)
cmds = {}
loads = []
for line in open(rows_path):
    f = line.rstrip("\n").split("\t")
    if len(f) < 10:
        continue
    label, who, rps, p50, p99, pcpu, wcpu, quiet, load, cmd = f[:10]
    reqs = f[10] if len(f) > 10 else "0"
    num = lambda x: float(x) if x not in ("-", "", "nan") else float("nan")
    # per-request CPU in µs (per handshake for s_time rows)
    us = num(pcpu) / num(reqs) * 1e6 if num(reqs) else float("nan")
    rows[(label, who)].append((num(rps), num(p50), num(p99), us))
    cmds[(label, who)] = cmd
    loads.append(float(load))

def med(label, who, i):
    v = [r[i] for r in rows.get((label, who), []) if r[i] == r[i]]
    return statistics.median(v) if v else float("nan")

def rng(label, who, i):
    v = [r[i] for r in rows.get((label, who), []) if r[i] == r[i]]
    return f"[{min(v):,.0f}–{max(v):,.0f}]" if v else ""

labels = []
for (label, _who) in rows:
    if label not in labels:
        labels.append(label)

def direct_for(label):
    for c in ("c50", "c200"):
        if label.endswith(c) and not label.startswith("https"):
            return "direct-" + c
    return None

out = []
out.append("| row | HAProxy req/s (p50/p99 ms) | nubis req/s (p50/p99 ms) | nubis/HAProxy req/s | nubis/HAProxy p99 | nubis/direct | proxy CPU µs/req HAProxy / nubis |")
out.append("|---|---|---|---|---|---|---|")
for label in labels:
    if label.startswith("direct"):
        r = med(label, "direct", 0)
        out.append(f"| {label} (ceiling) | | | | | {r:,.0f} req/s ({med(label,'direct',1):.2f}/{med(label,'direct',2):.2f}) {rng(label,'direct',0)} | |")
        continue
    h, n = med(label, "haproxy", 0), med(label, "nubis", 0)
    hp99, np99 = med(label, "haproxy", 2), med(label, "nubis", 2)
    d = direct_for(label)
    dr = f"{n / med(d, 'direct', 0):.2f}" if d and (d, "direct") in rows else "–"
    ratio = f"**{n / h:.2f}**" if h == h and h else "–"
    p99r = f"{np99 / hp99:.2f}" if hp99 == hp99 and hp99 else "–"
    def cpu(who, _r):
        c = med(label, who, 3)
        return f"{c:.1f}" if c == c else "–"
    if label.startswith("tls-full"):
        out.append(f"| {label} (full TLS 1.3 handshakes/s, 4 clients) | {h:,.0f} | {n:,.0f} | {ratio} | – | – | {med(label,'haproxy',3)/1000:.3f} / {med(label,'nubis',3)/1000:.3f} ms per handshake |")
        continue
    out.append(f"| {label} | {h:,.0f} ({med(label,'haproxy',1):.2f}/{hp99:.2f}) {rng(label,'haproxy',0)} | {n:,.0f} ({med(label,'nubis',1):.2f}/{np99:.2f}) {rng(label,'nubis',0)} | {ratio} | {p99r} | {dr} | {cpu('haproxy', h)} / {cpu('nubis', n)} |")

mem = []
if os.path.exists(mem_path):
    for line in open(mem_path):
        f = line.split("\t")
        if len(f) >= 7:
            mem.append(f"| {f[0]} | {f[1]} | {f[5]} | {f[6].strip()} | {f[2]} → {f[3]} → {f[4]} |")

table = "\n".join(out)
print()
print(table)
if mem:
    print("\n| server | idle connections | RSS bytes/conn connected | bytes/conn after one request | RSS KiB before → connected → after |")
    print("|---|---|---|---|---|")
    print("\n".join(mem))

md = []
md.append("# Load-balancer data plane: nubis vs HAProxy\n")
md.append(f"Produced by `bench/lb/run.sh` ({params}) on {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
          f"{os.cpu_count()} cores; 1-min load average during the runs: min {min(loads):.2f}, max {max(loads):.2f} "
          "(each run waits until the box uses < 0.3 CPU-s/s first).\n" if loads else "")
md.append("Medians of the runs, [min–max] of req/s. `wrk -t1` shares the 2 cores with the proxy and the nginx back end, so "
          "compare ratios, not absolute figures. CPU µs/req = proxy CPU-seconds during the run / requests.\n")
md.append(table + "\n")
if mem:
    md.append("## Memory per idle connection\n")
    md.append("| server | idle connections | RSS bytes/conn connected | bytes/conn after one request | RSS KiB before → connected → after |")
    md.append("|---|---|---|---|---|")
    md.extend(mem)
    md.append("")
md.append("## Exact commands\n")
for (label, who), cmd in cmds.items():
    md.append(f"- `{label}` {who}: `{cmd}`")
md.append("")
open(md_path, "w").write("\n".join(md))
print(f"\nwrote {md_path}")
