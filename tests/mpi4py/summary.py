"""Sums up mpi4py's unittest reports of one run (DIR/rank-R.log):
    summary.py DIR NP          "ran N, failures F, errors E, skipped S" (the
                               worst rank), or "no result (...)" when a rank
                               did not print its summary
    summary.py --names DIR NP  the failing tests, one per line, with the ranks"""
import os
import re
import sys


def parse(path):
    try:
        text = open(path, errors="replace").read()
    except OSError:
        return None, {}
    ran = re.findall(r"^Ran (\d+) tests? in", text, re.M)
    end = re.findall(r"^(OK|FAILED)(?: \((.*)\))?\s*$", text, re.M)
    if not ran or not end:
        return None, {}
    counts = {"ran": int(ran[-1]), "failures": 0, "errors": 0, "skipped": 0}
    for item in (end[-1][1] or "").split(","):
        if "=" in item:
            k, v = item.strip().split("=")
            if k in ("failures", "errors", "skipped"):
                counts[k] = int(v)
    names = {}
    for kind, name in re.findall(r"^(ERROR|FAIL): (\S+ \([^)]*\))", text, re.M):
        names[name] = kind
    return counts, names


def main():
    names_mode = sys.argv[1] == "--names"
    args = sys.argv[2:] if names_mode else sys.argv[1:]
    out, np = args[0], int(args[1])
    results = [parse(os.path.join(out, "rank-%d.log" % r)) for r in range(np)]
    if names_mode:
        seen = {}
        for r, (_, names) in enumerate(results):
            for name, kind in names.items():
                seen.setdefault((kind, name), []).append(r)
        for (kind, name), ranks in sorted(seen.items(), key=lambda x: x[0][1]):
            print("%s %s [rank%s %s]" % (kind, name, "s" if len(ranks) > 1 else "",
                                         ",".join(map(str, ranks))))
        return
    missing = [r for r, (c, _) in enumerate(results) if c is None]
    if missing:
        print("no result (ranks %s printed no unittest summary)" % ",".join(map(str, missing)))
        return
    worst = max((c for c, _ in results), key=lambda c: (c["failures"] + c["errors"], c["ran"]))
    print("ran %d, failures %d, errors %d, skipped %d" % (worst["ran"], worst["failures"], worst["errors"],
                                                          worst["skipped"]))


main()
