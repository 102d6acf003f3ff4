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
# Results of 2026-11-27 in docs/case-studies.md (NAS Parallel Benchmarks).
#
#   bench/npb_study.sh [BUILD_DIR] [OUT_DIR]     (defaults: build, a temporary directory;
#                                               with OUT_DIR, traces there are reused)
#   ONLY="cg" bench/npb_study.sh ...             only the kernels named
set -uo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
. "$here/bench/study_common.sh"
study_setup npb_study "${1:-}" "${2:-}"
study_pattern "NPB " npb cg 4,8,16,32 64 7 14000 5 11
study_pattern "NPB " npb lu 4,8,16,32 64 7 33 10 200
study_pattern "NPB " npb mg 2,4,8,16 32 7 32 4 64
