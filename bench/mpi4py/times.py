"""One rank of mpi4py's test suite, timed test by test.

Run by bench/mpi4py/compare from mpi4py's test directory, under a launcher:
    mpiexec -n N python times.py OUT.json
Every rank runs the same tests in the same order (the suite's modules in
sorted order, each module's tests in unittest's order). Rank 0 writes
{"total": seconds, "tests": {test id: [outcome, seconds]}} to OUT.json, where
outcome is ok, skip, fail or error.  Each rank also writes the id of the test
it is about to run to OUT.json.progR, so a run that hangs says where.

Environment:
    EXCL   comma-separated prefixes of test ids not to run (hangs of a library)
    ONLY   a file of test ids: run only these
"""
import glob
import json
import os
import sys
import time
import unittest

sys.path.insert(0, '.')


def tests_of(suite):
    for t in suite:
        if isinstance(t, unittest.TestSuite):
            yield from tests_of(t)
        else:
            yield t


class Timed(unittest.TestResult):
    """Each test's outcome and duration; the suite runs the module and class
    fixtures (setUpModule, setUpClass) as unittest's runner does."""

    def __init__(self, prog):
        super().__init__()
        self.prog = prog
        self.times = {}

    def startTest(self, test):
        super().startTest(test)
        self.prog.write(test.id() + '\n')
        self.prog.flush()
        self.t0 = time.perf_counter()
        self.outcome = 'ok'

    def stopTest(self, test):
        self.times[test.id()] = (self.outcome, time.perf_counter() - self.t0)
        super().stopTest(test)

    def addSkip(self, test, reason):
        super().addSkip(test, reason)
        self.outcome = 'skip'

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self.outcome = 'fail'

    def addError(self, test, err):
        super().addError(test, err)
        if self.outcome == 'ok':
            self.outcome = 'error'

    def addSubTest(self, test, subtest, err):
        super().addSubTest(test, subtest, err)
        if err is not None:
            self.outcome = 'fail'


def main():
    import mpitestutil  # noqa: F401  (the suite's own set-up)
    from mpi4py import MPI
    out_path = sys.argv[1]
    rank = MPI.COMM_WORLD.Get_rank()
    excl = [x for x in os.environ.get('EXCL', '').split(',') if x]
    only = None
    if os.environ.get('ONLY'):
        with open(os.environ['ONLY']) as f:
            only = set(f.read().split())
    chosen = unittest.TestSuite()
    for path in sorted(glob.glob('test_*.py')):
        name = path[:-3]
        if any(name.startswith(x) for x in excl):
            continue
        for t in tests_of(unittest.defaultTestLoader.loadTestsFromModule(__import__(name))):
            tid = t.id()
            if (only is None or tid in only) and not any(tid.startswith(x) for x in excl):
                chosen.addTest(t)
    with open('%s.prog%d' % (out_path, rank), 'w') as prog:
        result = Timed(prog)
        t0 = time.perf_counter()
        chosen.run(result)
        total = time.perf_counter() - t0
    if rank == 0:
        with open(out_path, 'w') as f:
            json.dump({'total': total, 'tests': result.times}, f)


if __name__ == '__main__':     # mpi4py.futures' pool starts workers that import this file
    main()
