#!/usr/bin/env bash
# One rank of the mpi4py suite: its standard error (where unittest reports)
# goes to DIR/rank-R.log, so the ranks' reports do not interleave.
# The rank comes from the launcher's environment (PMI-1: Plexus and MPICH;
# Open MPI's own variable).
dir=$1; shift
r=${PMI_RANK:-${OMPI_COMM_WORLD_RANK:-${PMIX_RANK:-0}}}
exec "$@" 2>"$dir/rank-$r.log"
