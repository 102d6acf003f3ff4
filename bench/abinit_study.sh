#!/usr/bin/env bash
# A real code beyond the bundle: ABINIT (Debian's `abinit` 9.6), an SCF of bulk silicon
# (bench/abinit/si.abi: 2 atoms, 12 Ha, a 6x6x6 grid of k-points with 4 shifts, 28 k-points
# shared out over the ranks, exactly 6 SCF steps: tolvrs is out of reach), traced at 4, 6, 8,
# 12, 16 and held out at 24, then checked and predicted:
#   pas2p validate TRACES                            (4-12 -> 16)
#   pas2p validate --against HELD/abinit.24 TRACES   (4-16 -> 24)
#   pas2p predict --target 1024 TRACES
# The pseudopotential is 14si.pspnc of Debian's abinit-data.
#
#   bench/abinit_study.sh [BUILD_DIR] [OUT_DIR]   (defaults: build, a temporary directory;
#                                                 with OUT_DIR, traces there are reused)
set -uo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
command -v abinit >/dev/null ||
  { echo "abinit_study: abinit is not installed (apt-get install abinit abinit-data)" >&2; exit 1; }
[ -f /usr/share/abinit/psp/14si.pspnc ] ||
  { echo "abinit_study: /usr/share/abinit/psp/14si.pspnc is missing (apt-get install abinit-data)" >&2; exit 1; }
. "$here/bench/study_common.sh"
study_setup abinit_study "${1:-}" "${2:-}"
cp "$here/bench/abinit/si.abi" si.abi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
[ -d train/abinit.16 ] || "$pas2p" trace -n 4,6,8,12,16 -o train -- abinit si.abi
[ -d held/abinit.24 ] || "$pas2p" trace -n 24 -o held -- abinit si.abi
study_checks held/abinit.24 14
