#!/usr/bin/env bash
# The NAS Parallel Benchmarks' communication: bench/npb/{cg,lu,mg}_pattern.c rewrite the MPI
# calls of NPB-MPI's CG, LU and MG kernels in C (process grids, partners, message lengths and
# call order as NPB computes them; the numerics replaced by compute loops of the same size;
# P a power of two). Each is traced at four counts, held out at the next power of two, then:
#   pas2p validate TRACES                        (leave-largest-out)
#   pas2p validate --against HELD TRACES         (held-out)
#   pas2p predict --target 1024 TRACES
#   cg  NA 14000 (class A's matrix), 5 timed iterations: 4, 8, 16, 32 -> 64
#   lu  a 33^3 grid (class W), 10 SSOR steps:             4, 8, 16, 32 -> 64
#   mg  a 32^3 grid (class S), 4 V-cycles:                 2, 4, 8, 16 -> 32
# Results of 2026-11-27 in the README (NAS Parallel Benchmarks).
#
#   bench/npb_study.sh [BUILD_DIR] [OUT_DIR]     (defaults: build, a temporary directory;
#                                               with OUT_DIR, traces there are reused)
#   ONLY="cg" bench/npb_study.sh ...             only the kernels named
set -uo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
. "$here/bench/study_common.sh"
study_setup npb_study "${1:-}" "${2:-}"
top="$(pwd)"
kernel() {  # name training-counts held-count args...
  local name="$1" counts="$2" held="$3"
  shift 3
  if [ -n "${ONLY:-}" ] && [[ " $ONLY " != *" $name "* ]]; then return; fi
  echo "######## NPB $name: traced at $counts, held out at $held"
  mkdir -p "$top/$name" && cd "$top/$name" || exit 1
  local exe="${name}_pattern"
  [ -x "$exe" ] || mpicc -O2 -o "$exe" "$here/bench/npb/$exe.c" || exit 1
  local largest="${counts##*,}"
  [ -d "train/$exe.$largest" ] || "$pas2p" trace -n "$counts" -o train -- "./$exe" "$@" \
    >trace.log 2>&1 || { tail -5 trace.log >&2; return; }
  [ -d "held/$exe.$held" ] || "$pas2p" trace -n "$held" -o held -- "./$exe" "$@" \
    >>trace.log 2>&1 || { tail -5 trace.log >&2; return; }
  study_checks "held/$exe.$held" 7
  cd "$top" || exit 1
}
kernel cg 4,8,16,32 64 14000 5 11
kernel lu 4,8,16,32 64 33 10 200
kernel mg 2,4,8,16 32 32 4 64
