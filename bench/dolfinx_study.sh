#!/usr/bin/env bash
# A real code beyond the bundle: DOLFINx's scaling test (Debian's
# `fenicsx-performance-tests`, `dolfinx-scaling-test`): a Poisson problem on a cube mesh,
# weak scaling, 20000 degrees of freedom per rank, PETSc CG with GAMG (18-19 iterations),
# traced at 4, 6, 8, 12, 16, then checked (pas2p validate, 4-12 -> 16) and predicted
# (pas2p predict --target 1024). pas2p refuses it and says why (see docs/case-studies.md).
#
#   bench/dolfinx_study.sh [BUILD_DIR] [OUT_DIR]   (defaults: build, a temporary directory;
#                                                  with OUT_DIR, traces there are reused)
set -uo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
command -v dolfinx-scaling-test >/dev/null || {
  echo "dolfinx_study: dolfinx-scaling-test is not installed (apt-get install fenicsx-performance-tests)" >&2
  exit 1
}
. "$here/bench/study_common.sh"
study_setup dolfinx_study "${1:-}" "${2:-}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
[ -d train/dolfinx-scaling-test.16 ] || "$pas2p" trace -n 4,6,8,12,16 -o train -- \
  dolfinx-scaling-test --ndofs 20000 --scaling_type weak -ksp_type cg -pc_type gamg \
  -ksp_rtol 1e-8 >trace.log 2>&1
quiet() { grep -v "more ranks than cores" | cut -c1-400; }
echo "== leave-largest-out: pas2p validate train"
"$pas2p" validate train 2>&1 | quiet | sed -n 1,6p
echo "== pas2p predict --target 1024 train"
"$pas2p" predict --target 1024 train 2>&1 | quiet | sed -n 1,6p
