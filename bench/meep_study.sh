#!/usr/bin/env bash
# A real code beyond the bundle: Meep (Debian's `meep-openmpi`, the Scheme front end
# `meep`), a 2-D dielectric waveguide in vacuum with PML (bench/meep/waveguide.ctl: a
# 16 x 16 cell at resolution 30, 1000 time steps, no output), traced at 4, 8, 16, 32 and
# held out at 64. Meep splits the cell by recursive bisection into one chunk per rank
# (any count runs); only powers of two give a regular grid (2 x 2, 4 x 2, 4 x 4, 8 x 4,
# 8 x 8 here), its ranks numbered in the bisection's (Z) order. Then checked and predicted:
#   pas2p validate TRACES                       (4-16 -> 32)
#   pas2p validate --against HELD/meep.64 TRACES (4-32 -> 64)
#   pas2p predict --target 1024 TRACES
#
#   bench/meep_study.sh [BUILD_DIR] [OUT_DIR]   (defaults: build, a temporary directory;
#                                               with OUT_DIR, traces there are reused)
set -uo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
command -v meep >/dev/null || { echo "meep_study: meep is not installed (apt-get install meep-openmpi)" >&2; exit 1; }
. "$here/bench/study_common.sh"
study_setup meep_study "${1:-}" "${2:-}"
cp "$here/bench/meep/waveguide.ctl" waveguide.ctl
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
[ -d train/meep.32 ] || "$pas2p" trace -n 4,8,16,32 -o train -- meep waveguide.ctl
[ -d held/meep.64 ] || "$pas2p" trace -n 64 -o held -- meep waveguide.ctl
study_checks held/meep.64 9
