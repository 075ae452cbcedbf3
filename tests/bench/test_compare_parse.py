"""Tests of bench/compare's parsing and tables (not of the timings).

The samples under samples/ are the unedited stdout of the benchmark programs
from `bench/compare --quick` runs on the 2-core development VM (Plexus,
Open MPI and MPICH jobs, and the limit probes; the machine was shared, so
some timings are noisy, which does not matter here). The failure cases (a failed
data check, a truncated output, launcher noise) are built in this file from
those samples. Runs with plain `python3 -m pytest tests/bench`: no MPI, no
matplotlib.
"""

import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
SAMPLES = os.path.join(HERE, "samples")
BENCH = os.path.join(os.path.dirname(os.path.dirname(HERE)), "bench")
sys.path.insert(0, BENCH)

from plexus_bench import parse, report, suite  # noqa: E402
from plexus_bench.runner import (BAD_OUTPUT, FAILED, OK, TIMEOUT, WRONG,  # noqa: E402
                                 Launch, classify)


def sample(name):
    with open(os.path.join(SAMPLES, name)) as f:
        return f.read()


# name of sample -> (program name, columns, rows, first row, last row)
EXPECTED = {
    "latency.plexus.out": ("latency", ["size_B", "latency_us"], 26,
                           [0, 36.492], [16777216, 4338.661]),
    "latency_vs_tcp.openmpi.out": ("latency_vs_tcp", ["size_B", "latency_us", "raw_latency_us", "ratio"], 8,
                                   [0, 5.350, 4.085, 1.308], [64, 5.426, 3.964, 1.367]),
    "bw.openmpi.out": ("bw", ["size_B", "bw_MBps"], 25, [1, 5.87], [16777216, 838.74]),
    "bibw.mpich.out": ("bibw", ["size_B", "bw_MBps"], 25, [1, 0.01], [16777216, 3867.45]),
    "mr.np4.openmpi.out": ("mr", ["size_B", "bw_MBps", "msgs_per_s"], 17,
                           [1, 2.68, 2680777], [65536, 2000.22, 30521]),
    "allreduce.np4.mpich.out": ("allreduce", ["size_B", "avg_us", "min_us", "max_us"], 15,
                                [4, 8605.346, 3098.778, 14800.508],
                                [65536, 39506.652, 36797.124, 41821.305]),
    "bcast.plexus.out": ("bcast", ["size_B", "avg_us", "min_us", "max_us"], 19,
                         [1, 29.509, 0.182, 58.836], [262144, 64.002, 15.863, 112.141]),
    "barrier.np4.openmpi.out": ("barrier", ["size_B", "avg_us", "min_us", "max_us"], 1,
                                [0, 7.61, 6.939, 8.6], [0, 7.61, 6.939, 8.6]),
    "alltoall.np4.openmpi.out": ("alltoall", ["size_B", "avg_us", "min_us", "max_us"], 17,
                                 [1, 8.815, 6.775, 12.183], [65536, 115.833, 77.885, 188.822]),
    "allgather.mpich.out": ("allgather", ["size_B", "avg_us", "min_us", "max_us"], 19,
                            [1, 1.163, 0.988, 1.339], [262144, 94.134, 94.105, 94.163]),
    "put_fence.openmpi.out": ("put_fence", ["size_B", "latency_us"], 23,
                              [1, 0.604], [4194304, 1189.448]),
    "get_fence.mpich.out": ("get_fence", ["size_B", "latency_us"], 23,
                            [1, 4.366], [4194304, 958.809]),
    "put_lock.mpich.out": ("put_lock", ["size_B", "latency_us"], 23,
                           [1, 5.964], [4194304, 1079.07]),
    "get_lock.openmpi.out": ("get_lock", ["size_B", "latency_us"], 23,
                             [1, 0.181], [4194304, 401.606]),
    "rma_passive.mpich.out": (
        "rma_passive",
        ["size_B", "put_idle_us", "put_busy_us", "get_idle_us", "get_busy_us", "acc_idle_us",
         "acc_busy_us", "target_compute_us"], 21,
        [1, 10.611, 553.916, 7.525, 506.694, 6.083, 691.987, 10000],
        [1048576, 181.369, 31659.688, 134.484, 17641.714, 4162.008, 20237.183, 83240]),
    "overlap.plexus.out": ("overlap",
                           ["size_B", "comm_us", "compute_us", "total_us", "overlap_pct"], 9,
                           [65536, 57.972, 58.726, 147.709, 0.0],
                           [16777216, 7660.085, 7965.793, 12995.309, 34.3]),
    "async_target.plexus.out": ("async_target",
                                ["size_B", "idle_us", "busy_us", "idle_median_us", "busy_median_us",
                                 "target_compute_us"], 18,
                                [8, 1.254, 80.545, 0.378, 0.385, 10000],
                                [1048576, 1280.317, 100.731, 130.730, 93.176, 51213]),
    "hol.plexus.out": ("hol", ["size_B", "idle_rtt_us", "loaded_rtt_us", "idle_p90_us", "loaded_p90_us",
                               "ratio", "pings", "bulk_MBps"], 1,
                       [16777216, 28.4, 1082.1, 29.2, 3516.6, 38.04, 70, 55.9],
                       [16777216, 28.4, 1082.1, 29.2, 3516.6, 38.04, 70, 55.9]),
    "startup.np2.openmpi.out": ("startup", ["ranks", "init_max_ms", "init_avg_ms", "finalize_ms",
                                            "pss_max_kb", "pss_avg_kb"], 1, [2, 261.435, 260.279, 48.597, 5153, 5142], [2, 261.435, 260.279, 48.597, 5153, 5142]),
    "startup.np8.openmpi.out": ("startup", ["ranks", "init_max_ms", "init_avg_ms", "finalize_ms",
                                            "pss_max_kb", "pss_avg_kb"], 1, [8, 492.012, 459.161, 78.103, 4248, 4205], [8, 492.012, 459.161, 78.103, 4248, 4205]),
    "conn_scaling.k2.mpich.out": ("conn_scaling", ["size_B", "bw_MBps"], 23,
                                  [1, 6.07], [4194304, 4082.71]),
    "limit_cacheline.out": ("limit_cacheline", ["size_B", "latency_us"], 26,
                            [0, 2.3395], [16777216, 6151.7826]),
    "limit_memcpy.out": ("limit_memcpy", ["size_B", "bw_MBps"], 25,
                         [1, 130.7], [16777216, 5887.7]),
    "limit_vm_readv.out": ("limit_vm_readv", ["size_B", "bw_MBps", "call_us"], 25,
                           [1, 0.5, 2.176], [16777216, 3402.8, 4930.384]),
    "limit_tcp_lat.out": ("limit_tcp_lat", ["size_B", "latency_us"], 26,
                          [0, 24.901], [16777216, 16514.126]),
    "mr_threads.np4.openmpi.out": ("mr_threads", ["size_B", "bw_MBps", "msgs_per_s"], 7,
                                   [1, 0.01, 8052], [64, 1.00, 15610]),
    "limit_tcp_bw.out": ("limit_tcp_bw", ["size_B", "bw_MBps"], 25,
                         [1, 0.22], [16777216, 1683.69]),
    "halo_acc.np2.openmpi.out": ("halo_acc", ["size_B", "iter_us", "halo_us", "acc_us", "iter_med_us"], 8,
                                  [8, 0.761, 0.519, 0.199, 0.764], [1024, 2.261, 1.739, 0.203, 2.151]),
    "limit_vm_readv_pair.out": ("limit_vm_readv_pair", ["size_B", "bw_MBps"], 9,
                                [65536, 27701.2], [16777216, 11878.3]),
}


def test_every_sample_is_listed():
    on_disk = sorted(f for f in os.listdir(SAMPLES) if f.endswith(".out"))
    assert on_disk == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_sample_parses(name):
    prog, columns, nrows, first, last = EXPECTED[name]
    out = parse.parse_output(sample(name))
    assert out.ok, out.problem()
    assert out.name == prog
    assert out.columns == columns
    assert len(out.rows) == nrows
    assert out.rows[0] == pytest.approx(first)
    assert out.rows[-1] == pytest.approx(last)
    assert out.errors == [] and out.noise == []
    # sizes are the first column and strictly increasing (powers of two)
    xs = [r[0] for r in out.rows]
    assert xs == sorted(set(xs))


def test_metadata():
    out = parse.parse_output(sample("mr.np4.openmpi.out"))
    assert out.meta["ranks"] == "4"
    assert out.meta["pairs"] == "2"
    assert out.meta["window"].startswith("64")
    out = parse.parse_output(sample("conn_scaling.k2.mpich.out"))
    assert out.meta["idle_peers"] == "2"
    assert out.series("bw_MBps")[4194304] == pytest.approx(4082.71)


def _sample_for(bench_name):
    for name, exp in EXPECTED.items():
        if exp[0] == bench_name:
            return parse.parse_output(sample(name))
    return None


@pytest.mark.parametrize("bench", suite.BENCHMARKS, ids=lambda b: b.name)
def test_runner_metrics_exist_in_program_output(bench):
    """Every column the runner tabulates or plots is one the program prints
    (job_wall_ms is added by the runner itself)."""
    out = _sample_for(bench.name)
    assert out is not None, "no recorded sample for %s" % bench.name
    for m in bench.metrics:
        if m.column == "job_wall_ms":
            continue
        assert m.column in out.columns, (bench.name, m.column)
    for refs in bench.limits.values():
        for ref in refs:
            lim = _sample_for(ref.bench)
            assert lim is not None and ref.column in lim.columns
    for group in bench.plots():
        for col in group:
            bench.metric(col)  # raises if a plot names an unknown metric


def test_startup_jobs_merge_and_get_wall_time():
    parts = [parse.parse_output(sample("startup.np2.openmpi.out")),
             parse.parse_output(sample("startup.np8.openmpi.out"))]
    merged = parse.merge_outputs(parts)
    assert merged.ok
    parse.add_column(merged, "job_wall_ms", [120.5, 480.25])
    assert merged.columns[-1] == "job_wall_ms"
    assert merged.series("job_wall_ms") == {2: 120.5, 8: 480.25}
    assert merged.series("init_max_ms") == {2: 261.435, 8: 492.012}
    assert merged.series("pss_max_kb") == {2: 5153, 8: 4248}


def test_merge_is_incomplete_if_one_job_is():
    good = parse.parse_output(sample("startup.np2.openmpi.out"))
    cut = parse.parse_output(sample("startup.np8.openmpi.out").replace("# end\n", ""))
    assert not parse.merge_outputs([good, cut]).complete


def test_truncated_output_is_not_a_result():
    lines = sample("latency.plexus.out").splitlines()
    text = "\n".join(lines[:15])  # the job died part-way
    out = parse.parse_output(text)
    assert not out.ok
    assert not out.complete
    assert len(out.rows) == 15 - 7  # 7 header lines in this sample
    assert "ends early" in out.problem()


def test_failed_check_is_a_wrong_result():
    text = sample("bw.openmpi.out").split("1024 ")[0]
    text += "# error: rank 1: bandwidth receive: wrong data at byte 3 of a 1024-byte message\n"
    out = parse.parse_output(text)
    assert not out.ok
    assert out.errors == ["rank 1: bandwidth receive: wrong data at byte 3 of a 1024-byte message"]
    launch = Launch(2, ["mpirun"], {}, rc=3, stderr="MPI_ABORT was invoked on rank 1")
    status, reason = classify([launch], out)
    assert status == WRONG
    assert "wrong data" in reason


def test_launcher_noise_is_ignored():
    lines = sample("latency.plexus.out").splitlines()
    noisy = lines[:10] + [
        "--------------------------------------------------------------------------",
        "WARNING: There was an error initializing an OpenFabrics device.",
        "  Local host:   vm",
    ] + lines[10:]
    out = parse.parse_output("\n".join(noisy) + "\n")
    assert out.ok
    assert len(out.rows) == 26
    assert len(out.noise) == 3


def test_row_with_wrong_number_of_fields():
    out = parse.parse_output("# plexus-bench: x\n# columns: size_B latency_us\n"
                             "1 2.0\n2 3.0 4.0\n# end\n")
    assert not out.ok
    assert len(out.rows) == 1
    assert "2 fields" not in out.errors[0] and "3 fields" in out.errors[0]


def test_numbers_before_columns_are_noise():
    out = parse.parse_output("12 34\n# columns: size_B bw_MBps\n1 2\n# end\n")
    assert out.rows == [[1.0, 2.0]]
    assert out.noise == ["12 34"]


def test_classify():
    out = parse.parse_output(sample("bw.openmpi.out"))
    assert classify([Launch(2, [], {}, rc=0)], out) == (OK, "")
    status, reason = classify([Launch(2, [], {}, rc=None, timed_out=True, wall_s=40.2)],
                              parse.BenchOutput())
    assert status == TIMEOUT and "40 s" in reason
    err = ("In function `main':\nalltoall.c:(.text+0x4f1): undefined reference to "
           "`MPI_Alltoall'\ncollect2: error: ld returned 1 exit status\n")
    status, reason = classify([Launch(4, [], {}, rc=1, stderr=err)], parse.BenchOutput())
    assert status == FAILED
    assert "undefined reference" in reason and "exit code 1" in reason
    status, reason = classify([Launch(2, [], {}, rc=-9)], parse.BenchOutput())
    assert status == FAILED and "signal 9" in reason
    status, reason = classify([Launch(2, [], {}, rc=0)], parse.BenchOutput())
    assert status == BAD_OUTPUT


# --------------------------------------------------------------------------
# Tables

def _record(case, lib, status, text=None, reason=""):
    out = parse.parse_output(text) if text is not None else None
    return {"case": case, "lib": lib, "rep": 0, "status": status, "reason": reason,
            "output": out.to_dict() if out else None}


def _rows(columns, rows):
    body = "\n".join(" ".join(str(v) for v in r) for r in rows)
    return "# plexus-bench: t\n# columns: %s\n%s\n# end\n" % (" ".join(columns), body)


def test_plexus_that_cannot_run_is_shown_not_hidden():
    case = suite.Case(suite.BY_NAME["latency"], "shm", (2,))
    records = [
        _record(case.id, "plexus", "build failed", reason="compile failed: undefined "
                "reference to `MPI_Alltoall'"),
        _record(case.id, "openmpi", "ok", sample("latency.plexus.out")),
        _record(case.id, "mpich", "ok", sample("latency.plexus.out")),
    ]
    s = report.Summary([case], records, ["plexus", "openmpi", "mpich"])
    assert s.status(case.id, "plexus").startswith("could not run: build failed")
    md = "\n".join(report.case_tables(s, case))
    assert "Plexus (could not run)" in md
    assert "undefined reference" in md
    status = "\n".join(report.status_table(s))
    assert "**could not run** (build failed)" in status
    page = report.render_markdown(s, {"command": "bench/compare --quick"}, {}, "perf/")
    assert "could not run" in page and "## Method" in page


def test_medians_and_ratio():
    lat = suite.Case(suite.BY_NAME["latency"], "shm", (2,))
    bw = suite.Case(suite.BY_NAME["bw"], "shm", (2,))
    cols_l, cols_b = ["size_B", "latency_us"], ["size_B", "bw_MBps"]
    records = []
    for v in (1.0, 3.0, 2.0):  # median 2.0
        records.append(_record(lat.id, "plexus", "ok", _rows(cols_l, [[0, v], [1024, 10 * v]])))
    for v in (4.0, 4.0, 9.0):  # median 4.0
        records.append(_record(lat.id, "openmpi", "ok", _rows(cols_l, [[0, v], [1024, 10 * v]])))
    records.append(_record(lat.id, "mpich", "ok", _rows(cols_l, [[0, 5.0], [1024, 30.0]])))
    records.append(_record(lat.id, "mpich", "failed", reason="exit code 1"))
    records.append(_record(bw.id, "plexus", "ok", _rows(cols_b, [[1024, 500.0]])))
    records.append(_record(bw.id, "openmpi", "ok", _rows(cols_b, [[1024, 1000.0]])))
    records.append(_record(bw.id, "mpich", "ok", _rows(cols_b, [[1024, 800.0]])))
    s = report.Summary([lat, bw], records, ["plexus", "openmpi", "mpich"])
    assert s.series(lat.id, "plexus", "latency_us") == {0: 2.0, 1024: 20.0}
    assert s.series(lat.id, "openmpi", "latency_us") == {0: 4.0, 1024: 40.0}
    assert s.status(lat.id, "mpich").startswith("ok in 1 of 2 runs")
    assert s.short(lat.id, "mpich") == "ok 1/2 (failed)"
    # latency: Plexus 2.0 against the best other, min(4.0, 5.0)
    lat_md = "\n".join(report.case_tables(s, lat))
    assert "| 0 | 2.00 | 4.00 | 5.00 | — | 0.50× |" in lat_md
    assert "| 1K | 20.0 | 40.0 | 30.0 | — | 0.67× |" in lat_md
    # bandwidth: against the best other, max(1000, 800)
    bw_md = "\n".join(report.case_tables(s, bw))
    assert "| 1K | 500 | 1000 | 800 | — | 0.50× |" in bw_md
    assert report.ratio(None, [1.0], "lower") is None
    assert report.ratio(2.0, [], "lower") is None


def test_limit_column_comes_from_the_probe():
    lat = suite.Case(suite.BY_NAME["latency"], "shm", (2,))
    probe = suite.Case(suite.BY_NAME["limit_cacheline"], "-", (0,))
    records = [_record(lat.id, "openmpi", "ok", sample("latency.plexus.out")),
               _record(probe.id, "limit", "ok", sample("limit_cacheline.out"))]
    s = report.Summary([lat, probe], records, ["openmpi", "limit"])
    md = "\n".join(report.case_tables(s, lat))
    assert "| 0 | 36.5 | 2.34 |" in md  # Open MPI column, then the limit
    assert any("cache-line handoff" in l for l in report.limits_summary(s))


def test_size_formatting():
    assert [report.fmt_size(x) for x in (0, 1, 512, 1024, 65536, 1 << 20, 16 << 20)] == \
        ["0", "1", "512", "1K", "64K", "1M", "16M"]
    assert [report.fmt_value(v) for v in (0.1234, 1.234, 12.34, 1234.5, None)] == \
        ["0.123", "1.23", "12.3", "1234", "—"]


def test_cases_and_oversubscribed_arguments():
    benches = suite.select("latency,coll,startup,conn")
    cases = suite.make_cases(benches, ["shm", "tcp"], [2, 4], [2, 8], [2])
    ids = [c.id for c in cases]
    assert "latency.tcp.np2" in ids and "allreduce.shm.np4" in ids
    assert "startup.shm" in ids and "conn_scaling.tcp.k2" in ids
    allreduce4 = next(c for c in cases if c.id == "allreduce.shm.np4")
    assert allreduce4.oversubscribed(2)
    assert allreduce4.args(True, 2) == list(suite.COLL_QUICK_OVER)
    assert allreduce4.args(True, 8) == list(suite.COLL_QUICK)
    put = suite.Case(suite.BY_NAME["put_fence"], "shm", (2,))
    assert put.args(False)[:4] == ["-o", "put", "-s", "fence"]
    with pytest.raises(ValueError):
        suite.select("nosuchbench")


def test_modules_do_not_need_matplotlib():
    code = ("import sys; sys.path.insert(0, %r)\n"
            "import plexus_bench.cli, plexus_bench.report, plexus_bench.runner\n"
            "print('matplotlib' in sys.modules)" % BENCH)
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       timeout=60)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "False"


def test_time_budget_is_not_a_failure():
    case = suite.Case(suite.BY_NAME["bw"], "shm", (2,))
    skipped = "time budget of 540 s for the whole run used up"
    records = [_record(case.id, "plexus", "skipped", reason=skipped),
               _record(case.id, "openmpi", "ok", sample("bw.openmpi.out")),
               _record(case.id, "openmpi", "skipped", reason=skipped),
               _record(case.id, "mpich", "timeout", reason="no result within 60 s"),
               _record(case.id, "mpich", "skipped", reason="timed out in repetition 1")]
    s = report.Summary([case], records, ["plexus", "openmpi", "mpich"])
    assert s.short(case.id, "plexus") == "not run (time budget)"
    assert s.short(case.id, "openmpi") == "ok 1/2 (skipped)"
    assert s.short(case.id, "mpich") == "**could not run** (timeout)"
    md = "\n".join(report.case_tables(s, case))
    assert "Plexus (not run)" in md and "MPICH (could not run)" in md


def test_limit_probes_keep_the_best_repetition():
    probe = suite.Case(suite.BY_NAME["limit_vm_readv"], "-", (0,))
    cols = ["size_B", "bw_MBps", "call_us"]
    records = [_record(probe.id, "limit", "ok", _rows(cols, [[4096, bw, us]]))
               for bw, us in ((900.0, 4.0), (3000.0, 1.0), (2000.0, 2.0))]
    s = report.Summary([probe], records, ["limit"])
    assert s.series(probe.id, "limit", "bw_MBps") == {4096: 3000.0}  # highest
    assert s.series(probe.id, "limit", "call_us") == {4096: 1.0}  # lowest
