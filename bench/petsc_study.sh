#!/usr/bin/env bash
# A third real code beyond the bundle: PETSc (Debian's `libpetsc-real-dev`,
# `apt-get install libpetsc-real-dev`). bench/petsc/poisson.c is a 3-D Poisson solve written
# the way PETSc's tutorials are (a DMDA 7-point Laplacian with Dirichlet boundaries, KSP CG
# with PETSc's default preconditioner, 50 iterations, 5 solves of a time loop): the
# communication is PETSc's own (VecScatter halos on the grid PETSc picks, the reductions of
# CG, the set-up's two-sided discovery and rank 0 broadcasting its options). Strong scaling,
# a 48^3 grid, traced at 8, 12, 18, 27 (grids 2x2x2, 3x2x2, 3x3x2, 3x3x3) and held out at 36
# (4x3x3), then checked and predicted:
#   pas2p validate TRACES                               (8-18 -> 27)
#   pas2p validate --against HELD/poisson.36 TRACES     (8-27 -> 36)
#   pas2p predict --target 1024 TRACES
# Three fresh trace sets (2026-11-26) were all predicted at 36 within 7.2% (see docs/case-studies.md, PETSc).
#
#   bench/petsc_study.sh [BUILD_DIR] [OUT_DIR]   (defaults: build, a temporary directory;
#                                               with OUT_DIR, traces there are reused)
set -uo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
petsc=/usr/lib/petsc
[ -f "$petsc/include/petscksp.h" ] ||
  { echo "petsc_study: PETSc is not installed (apt-get install libpetsc-real-dev)" >&2; exit 1; }
. "$here/bench/study_common.sh"
study_setup petsc_study "${1:-}" "${2:-}"
if [ ! -x poisson ]; then
  mpicc -O2 -I"$petsc/include" "$here/bench/petsc/poisson.c" -o poisson -L"$petsc/lib" -lpetsc \
    -Wl,-rpath,"$petsc/lib" || exit 1
fi
run=(./poisson -n 48 -steps 5)
[ -d train/poisson.27 ] || "$pas2p" trace -n 8,12,18,27 -o train -- "${run[@]}" >trace.log 2>&1 ||
  { tail -5 trace.log >&2; exit 1; }
[ -d held/poisson.36 ] || "$pas2p" trace -n 36 -o held -- "${run[@]}" >>trace.log 2>&1 ||
  { tail -5 trace.log >&2; exit 1; }
study_checks held/poisson.36
