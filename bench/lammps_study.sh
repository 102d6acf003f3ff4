#!/usr/bin/env bash
# A real code beyond the bundle: LAMMPS (Debian's `lmp`, `apt-get install lammps`), the
# Lennard-Jones melt of its own benchmark (bench/lammps/in.lj: 32000 atoms, 100 steps),
# traced at 27, 36, 45, 48 and held out at 64 (counts whose grid has 3 or more ranks along
# every dimension; see the LAMMPS paragraph of docs/case-studies.md), then checked and predicted:
#   pas2p validate TRACES                      (27-45 -> 48)
#   pas2p validate --against HELD/lmp.64 TRACES (27-48 -> 64)
#   pas2p predict --target 1024 TRACES
#
#   bench/lammps_study.sh [BUILD_DIR] [OUT_DIR]   (defaults: build, a temporary directory;
#                                                 with OUT_DIR, traces there are reused)
set -uo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
command -v lmp >/dev/null || { echo "lammps_study: lmp is not installed (apt-get install lammps)" >&2; exit 1; }
. "$here/bench/study_common.sh"
study_setup lammps_study "${1:-}" "${2:-}"
cp "$here/bench/lammps/in.lj" in.lj
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
[ -d train/lmp.48 ] || "$pas2p" trace -n 27,36,45,48 -o train -- lmp -in in.lj -log none -screen none
[ -d held/lmp.64 ] || "$pas2p" trace -n 64 -o held -- lmp -in in.lj -log none -screen none
study_checks held/lmp.64 9
