#!/usr/bin/env python3
"""ranktool: a non-MPI rank for the launcher tests (pure launcher behaviour).

Usage: ranktool.py MODE [ARGS...] [plxmark-... ignored]

  print N        N lines "rank R out I" on stdout and "rank R err I" on stderr
  big N          N lines of 200 characters on stdout ("R:I:xxxx...")
  partial        "abc" without newline, pause, then "def" and a newline
  env NAME...    one line "rank R NAME=VALUE" (or NAME unset) per variable
  stdin          rank 0 echoes every stdin line as "echo: LINE", then
                 "stdin done N"; other ranks print "rank R stdin eof" if
                 their stdin is at end of file at once
  sleep          print "rank R ready", then sleep (default signal handling)
  urg            like sleep, but SIGURG prints "rank R: pending: nothing (SIGURG)"
                 to stderr and keeps sleeping (what an MPI rank does on timeout)
  term           like sleep, but SIGTERM prints "rank R got SIGTERM" and exits 0
  ignore-term    like sleep, but ignores SIGTERM and SIGINT
  exit V CODE    rank V exits with CODE after 0.2 s; the others sleep
  bg             start a grandchild that sleeps (same marker) holding stdout,
                 print "rank R bg started" and exit 0
"""
import os
import signal
import subprocess
import sys
import time


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("plxmark-")]
    marks = [a for a in sys.argv[1:] if a.startswith("plxmark-")]
    rank = int(os.environ.get("PMI_RANK", "0"))
    mode = args[0] if args else "sleep"

    def out(s):
        sys.stdout.write(s + "\n")
        sys.stdout.flush()

    def err(s):
        sys.stderr.write(s + "\n")
        sys.stderr.flush()

    def sleep_forever():
        out("rank %d ready" % rank)
        while True:
            time.sleep(60)

    if mode == "print":
        for i in range(int(args[1])):
            out("rank %d out %d" % (rank, i))
            err("rank %d err %d" % (rank, i))
    elif mode == "big":
        pad = "x" * 180
        lines = ["%d:%d:%s" % (rank, i, pad) for i in range(int(args[1]))]
        sys.stdout.write("\n".join(lines) + "\n")
        sys.stdout.flush()
    elif mode == "partial":
        sys.stdout.write("abc")
        sys.stdout.flush()
        time.sleep(0.6)
        out("def")
    elif mode == "env":
        for name in args[1:]:
            v = os.environ.get(name)
            out("rank %d %s" % (rank, "%s=%s" % (name, v) if v is not None else name + " unset"))
    elif mode == "stdin":
        if rank == 0:
            n = 0
            for line in sys.stdin:
                out("echo: " + line.rstrip("\n"))
                n += 1
            out("stdin done %d" % n)
        else:
            if sys.stdin.read() == "":
                out("rank %d stdin eof" % rank)
    elif mode == "sleep":
        sleep_forever()
    elif mode == "urg":
        signal.signal(signal.SIGURG,
                      lambda s, f: err("rank %d: pending: nothing (SIGURG)" % rank))
        sleep_forever()
    elif mode == "term":
        def on_term(s, f):
            out("rank %d got SIGTERM" % rank)
            sys.exit(0)
        signal.signal(signal.SIGTERM, on_term)
        sleep_forever()
    elif mode == "ignore-term":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        sleep_forever()
    elif mode == "exit":
        if rank == int(args[1]):
            time.sleep(0.2)
            err("rank %d exiting with %s" % (rank, args[2]))
            sys.exit(int(args[2]))
        sleep_forever()
    elif mode == "bg":
        subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"] + marks)
        out("rank %d bg started" % rank)
    else:
        err("ranktool: unknown mode %r" % mode)
        sys.exit(2)


if __name__ == "__main__":
    main()
