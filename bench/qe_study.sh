#!/usr/bin/env bash
# A real code beyond the bundle: Quantum ESPRESSO's pw.x (Debian's `quantum-espresso`, 6.7),
# an SCF of 8 silicon atoms (bench/qe/si.in: a cubic cell, 24 Ry, the gamma point, exactly 8
# SCF iterations: conv_thr is out of reach and scf_must_converge is off, so every count runs
# the same loop; converged SCFs take 12, 26 and 17 iterations at 4, 8 and 16 ranks), with the
# subspace diagonalization serial (-nd 1; with ScaLAPACK's BLACS the model is refused, see
# docs/case-studies.md), traced at 4, 6, 8, 12, 16 and held out at 24, then checked and predicted:
#   pas2p validate TRACES                          (4-12 -> 16)
#   pas2p validate --against HELD/pw.x.24 TRACES   (4-16 -> 24)
#   pas2p predict --target 1024 TRACES
# The pseudopotential is the Si.pz-vbc.UPF of Debian's quantum-espresso-data examples.
#
#   bench/qe_study.sh [BUILD_DIR] [OUT_DIR]   (defaults: build, a temporary directory;
#                                             with OUT_DIR, traces there are reused)
set -uo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
command -v pw.x >/dev/null ||
  { echo "qe_study: pw.x is not installed (apt-get install quantum-espresso quantum-espresso-data)" >&2; exit 1; }
upf=/usr/share/doc/quantum-espresso/examples/atomic/pseudo-LDA-0.5/Si.pz-vbc.UPF.gz
[ -f "$upf" ] || { echo "qe_study: $upf is missing (apt-get install quantum-espresso-data)" >&2; exit 1; }
. "$here/bench/study_common.sh"
study_setup qe_study "${1:-}" "${2:-}"
cp "$here/bench/qe/si.in" si.in
zcat "$upf" >Si.pz-vbc.UPF
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
[ -d train/pw.x.16 ] || "$pas2p" trace -n 4,6,8,12,16 -o train -- pw.x -nd 1 -in si.in
[ -d held/pw.x.24 ] || "$pas2p" trace -n 24 -o held -- pw.x -nd 1 -in si.in
study_checks held/pw.x.24 9
