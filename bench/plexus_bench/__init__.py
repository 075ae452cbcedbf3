"""Plexus benchmark comparison runner (bench/compare).

Modules:
  parse      parse one benchmark program's output (format: bench/util.h)
  suite      the benchmarks, their options and metrics, and the cases to run
  libraries  how to build and launch with Plexus, Open MPI and MPICH
  runner     builds, runs in alternation with timeouts, cleans up stragglers
  report     medians, markdown tables, JSON, plots, docs/performance.md
  cli        the command line

Nothing here imports matplotlib at module level, so the parser and the
tables can be tested with a plain python3 (tests/bench).
"""
