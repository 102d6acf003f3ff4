#!/usr/bin/env bash
# PETSc geometric multigrid (Debian's `libpetsc-real-dev`, `apt-get install libpetsc-real-dev`).
# bench/petsc/poisson_mg.c is poisson.c's 3-D DMDA 7-point Laplacian (Dirichlet) given to the
# KSP with KSPSetDM and a ComputeOperators callback (as PETSc's KSP tutorial ex45), so that
# -pc_type mg -pc_mg_levels 3 coarsens the DMDA 49^3 -> 25^3 -> 13^3 and rediscretizes on each
# level: CG, 10 iterations, 5 solves; PETSc 3.18's defaults otherwise (Chebyshev/SOR smoothers
# whose set-up estimates eigenvalues with GMRES, a redundant LU coarse solve). The communication
# of one V-cycle: 7-point halos on 3 levels, a one-sided 26-neighbour (box) exchange for each
# restriction and interpolation, and PCREDUNDANT's point-to-point all-to-all of the coarse
# vector. Strong scaling, traced at 8, 12, 18, 27 (grids 2x2x2, 3x2x2, 3x3x2, 3x3x3) and held
# out at 36 (4x3x3), like bench/petsc_study.sh:
#   pas2p validate TRACES                               (8-18 -> 27)
#   pas2p validate --against HELD/poisson_mg.36 TRACES  (8-27 -> 36)
#   pas2p predict --target 1024 TRACES
# On the first trace set (2026-11-27) all three were refused ("phase 6 call 0 (irecv): no
# communication-pattern family reproduces the traced maps"); see docs/case-studies.md (PETSc multigrid).
# STUDY_FLAGS=--allow-remainder predicts it with the phases no family fits left out.
#
#   bench/petsc_mg_study.sh [BUILD_DIR] [OUT_DIR]   (defaults: build, a temporary directory;
#                                                  with OUT_DIR, traces there are reused)
set -uo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
petsc=/usr/lib/petsc
[ -f "$petsc/include/petscksp.h" ] ||
  { echo "petsc_mg_study: PETSc is not installed (apt-get install libpetsc-real-dev)" >&2; exit 1; }
. "$here/bench/study_common.sh"
study_setup petsc_mg_study "${1:-}" "${2:-}"
if [ ! -x poisson_mg ]; then
  mpicc -O2 -I"$petsc/include" "$here/bench/petsc/poisson_mg.c" -o poisson_mg -L"$petsc/lib" \
    -lpetsc -Wl,-rpath,"$petsc/lib" || exit 1
fi
run=(./poisson_mg -n 49 -steps 5 -pc_type mg -pc_mg_levels 3)
[ -d train/poisson_mg.27 ] || "$pas2p" trace -n 8,12,18,27 -o train -- "${run[@]}" >trace.log 2>&1 ||
  { tail -5 trace.log >&2; exit 1; }
[ -d held/poisson_mg.36 ] || "$pas2p" trace -n 36 -o held -- "${run[@]}" >>trace.log 2>&1 ||
  { tail -5 trace.log >&2; exit 1; }
study_checks held/poisson_mg.36
