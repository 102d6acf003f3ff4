#!/usr/bin/env bash
# Two more codes' communication, rewritten in C from their sources and traced here:
#   hpcg        bench/hpcg/hpcg_pattern.c: HPCG 3.1's process grid (ComputeOptimalShapeXYZ),
#               27-point halo (up to 26 neighbours: faces, edges, corners; MPI_Irecv each,
#               MPI_Send each, then one MPI_Wait per receive), the MG V-cycle's halos on 4
#               levels and CG's dot products; weak scaling, 16^3 per rank, 5 CG iterations:
#               traced at 4, 8, 12, 16, 24, 32, held out at 48.
#   cloverleaf  bench/cloverleaf/cloverleaf_pattern.c: CloverLeaf's decomposition
#               (clover_decompose), its halo updates (fields and depths as hydro calls them,
#               isend/irecv left-right, waitall, bottom-top, waitall), clover_min's
#               allreduce and the field summaries' reduces; strong scaling, a 960 x 960
#               mesh, 10 steps: traced at 4, 6, 8, 12, 16, 24, held out at 36.
# Each: pas2p validate (leave-largest-out), validate --against the held-out run, and
# predict --target 1024. Results of 2026-11-27 in docs/case-studies.md (HPCG and CloverLeaf).
#
#   bench/codes_study.sh [BUILD_DIR] [OUT_DIR]     (defaults: build, a temporary directory;
#                                                 with OUT_DIR, traces there are reused)
#   ONLY="hpcg" bench/codes_study.sh ...           only the codes named
set -uo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
. "$here/bench/study_common.sh"
study_setup codes_study "${1:-}" "${2:-}"
study_pattern "" hpcg hpcg 4,8,12,16,24,32 48 9 16 5 4
study_pattern "" cloverleaf cloverleaf 4,6,8,12,16,24 36 9 960 960 10 5 1
