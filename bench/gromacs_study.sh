#!/usr/bin/env bash
# A second real code beyond the bundle: GROMACS (Debian's `gmx_mpi`, `apt-get install gromacs`),
# 200 steps of a 6 nm box of SPC water (bench/gromacs: about 21000 atoms, reaction-field
# electrostatics, so only the domain decomposition communicates; dynamic load balancing off),
# traced at 27, 36, 45, 48 and held out at 64 (domain grids 3x3x3, 4x3x3, 5x3x3, 4x4x3, 4x4x4),
# then checked and predicted:
#   pas2p validate --against HELD/gmx_mpi.64 TRACES   (27-48 -> 64)
#   the same without the run at 45                    (27, 36, 48 -> 64)
#
#   bench/gromacs_study.sh [BUILD_DIR] [OUT_DIR]   (defaults: build, a temporary directory;
#                                                 with OUT_DIR, traces there are reused)
set -uo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
for tool in gmx gmx_mpi; do
  command -v "$tool" >/dev/null ||
    { echo "gromacs_study: $tool is not installed (apt-get install gromacs)" >&2; exit 1; }
done
. "$here/bench/study_common.sh"
study_setup gromacs_study "${1:-}" "${2:-}"
if [ ! -f water.tpr ]; then
  cp "$here/bench/gromacs/md.mdp" "$here/bench/gromacs/topol.top" .
  gmx -quiet solvate -cs spc216.gro -box 6 6 6 -o water.gro -p topol.top >solvate.log 2>&1 ||
    { cat solvate.log >&2; exit 1; }
  gmx -quiet grompp -f md.mdp -c water.gro -p topol.top -o water.tpr -maxwarn 2 >grompp.log 2>&1 ||
    { cat grompp.log >&2; exit 1; }
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mdrun=(gmx_mpi -quiet mdrun -s water.tpr -ntomp 1 -dlb no -notunepme -g md.log -e /dev/null
       -o /dev/null -c out.gro -cpo /dev/null)
[ -d train/gmx_mpi.48 ] || "$pas2p" trace -n 27,36,45,48 -o train -- "${mdrun[@]}" >trace.log 2>&1 ||
  { tail -5 trace.log >&2; exit 1; }
[ -d held/gmx_mpi.64 ] || "$pas2p" trace -n 64 -o held -- "${mdrun[@]}" >>trace.log 2>&1 ||
  { tail -5 trace.log >&2; exit 1; }
quiet() { grep -v "more ranks than cores" | cut -c1-400; }
echo "== held-out: pas2p validate --against held/gmx_mpi.64 train"
"$pas2p" validate --against held/gmx_mpi.64 train 2>&1 | quiet | sed -n 1,12p
echo "== without 45: pas2p validate --against held/gmx_mpi.64 train/gmx_mpi.{27,36,48}"
"$pas2p" validate --against held/gmx_mpi.64 train/gmx_mpi.27 train/gmx_mpi.36 \
  train/gmx_mpi.48 2>&1 | quiet | sed -n 1,12p
