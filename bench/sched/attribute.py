"""bench/sched/attribute.py — where the stalls of rma_stalls -d went (issue 12, session 8).

usage: attribute.py perf.data stalls.txt [threshold_us]

perf.data: `perf sched record -k CLOCK_MONOTONIC -a -o perf.data -- mpiexec -n 2 rma_stalls -d ...`;
stalls.txt: the output of rma_stalls -d (index, latency in us, start time in s).
For every operation slower than the threshold (default 2000 us), and in a
summary line, the time each of the two processes' threads (rma_stalls
and plx-progress) spent running, runnable (waiting for a CPU) and
asleep during it, from `perf sched timehist --state`.
"""
import sys, re, subprocess
data, out = sys.argv[1], sys.argv[2]
thr = float(sys.argv[3]) if len(sys.argv) > 3 else 2000
stalls = []
for l in open(out):
    f = l.split()
    if len(f) == 3 and float(f[1]) > thr:
        stalls.append((int(f[0]), float(f[2]), float(f[2]) + float(f[1]) * 1e-6))
th = subprocess.run(['perf', 'sched', 'timehist', '--state', '-i', data], capture_output=True, text=True).stdout.splitlines()
iv = {}
last = {}  # task -> list of (start,end,state)
for l in th:
    m = re.match(r'\s*([\d.]+)\s+\[(\d+)\]\s+(\S.*?\[[\d/]+\])\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+(\S+)', l)
    if not m: continue
    t = float(m.group(1)); name = m.group(3); wait, sd, run = (float(m.group(i)) * 1e-3 for i in (4, 5, 6))
    if not (name.startswith('rma_stalls[') or name.startswith('plx-progress')): continue
    L = iv.setdefault(name, [])
    prev = last.get(name, 'S'); last[name] = m.group(7)
    L.append((t - run, t, 'run'))
    if prev.startswith('R'):
        L.append((t - run - wait, t - run, 'runnable'))
    else:
        L.append((t - run - sd, t - run, 'runnable'))
        L.append((t - run - wait, t - run - sd, 'sleep'))
for (i, a, b) in stalls:
    print(f"op {i}: {1e3*(b-a):.2f} ms")
    for name, L in sorted(iv.items()):
        acc = {'run': 0, 'runnable': 0, 'sleep': 0}
        for (s, e, st) in L:
            o = min(e, b) - max(s, a)
            if o > 0: acc[st] += o
        print(f"   {name:28s} run {1e3*acc['run']:7.2f}  runnable {1e3*acc['runnable']:7.2f}  sleep {1e3*acc['sleep']:7.2f} ms")
# summary: total stall, and per thread totals
tot = {}
S = 0
for (i, a, b) in stalls:
    S += b - a
    for name, L in iv.items():
        
        acc = tot.setdefault(name, {'run': 0, 'runnable': 0, 'sleep': 0})
        for (s, e, st) in L:
            o = min(e, b) - max(s, a)
            if o > 0: acc[st] += o
print(f"SUMMARY stalls {len(stalls)} total {1e3*S:.1f} ms; " + "; ".join(f"{n}: run {1e3*v['run']:.1f} runnable {1e3*v['runnable']:.1f} sleep {1e3*v['sleep']:.1f}" for n, v in sorted(tot.items())))
