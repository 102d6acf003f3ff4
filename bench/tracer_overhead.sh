#!/usr/bin/env bash
# Tracer overhead: wall time of a communication-heavy MPI program at 2 ranks with the
# tracer preloaded divided by the time without it (median of RUNS runs each, runs
# interleaved so drift hits both alike), and the compressed trace size in bytes per event.
#
# Usage: bench/tracer_overhead.sh [BUILD_DIR] [-- PROGRAM ARGS...]
#   BUILD_DIR defaults to ./build. The default program is the bundled butterfly mini-app
#   (recursive-doubling exchange: every step a message exchange and a small compute), or
#   the tracer's own p2p test program if the mini-apps are not built.
# Env: RUNS (default 7), NP (default 2).
# Targets: ratio <= 1.03, bytes/event <= 4.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=build
if [[ $# -gt 0 && $1 != "--" ]]; then BUILD_DIR=$1; shift; fi
if [[ $# -gt 0 && $1 == "--" ]]; then shift; fi
RUNS=${RUNS:-7}
NP=${NP:-2}
TRACER=$BUILD_DIR/lib/libpas2p-trace.so
PAS2P=$BUILD_DIR/bin/pas2p
[[ -f $TRACER ]] || { echo "tracer_overhead: $TRACER not built (cmake --build $BUILD_DIR --target pas2p_trace)" >&2; exit 1; }
if [[ $# -gt 0 ]]; then
  PROGRAM=("$@")
elif [[ -x $BUILD_DIR/bin/butterfly ]]; then
  PROGRAM=("$BUILD_DIR/bin/butterfly")
else
  PROGRAM=("$BUILD_DIR/signature/tests/programs/p2p_program")
  NP=4
fi
MPIRUN=(mpirun -np "$NP" --oversubscribe --bind-to none)
[[ $(id -u) == 0 ]] && MPIRUN+=(--allow-run-as-root)
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

now_ns() { date +%s%N; }
run_once() {  # $1 = traced|plain; prints seconds
  local t0 t1
  t0=$(now_ns)
  if [[ $1 == traced ]]; then
    rm -rf "$WORK/trace"
    "${MPIRUN[@]}" -x LD_PRELOAD="$(readlink -f "$TRACER")" -x PAS2P_TRACE_DIR="$WORK/trace" \
      "${PROGRAM[@]}" > /dev/null
  else
    "${MPIRUN[@]}" "${PROGRAM[@]}" > /dev/null
  fi
  t1=$(now_ns)
  echo "$(( t1 - t0 ))" | awk '{printf "%.4f\n", $1 / 1e9}'
}
median() { sort -g | awk '{v[NR]=$1} END {if (NR % 2) print v[(NR+1)/2]; else printf "%.4f\n", (v[NR/2]+v[NR/2+1])/2}'; }

echo "program: ${PROGRAM[*]} at $NP ranks, $RUNS runs each (interleaved)"
run_once plain > /dev/null  # warm the page cache
: > "$WORK/plain"; : > "$WORK/traced"
for ((i = 0; i < RUNS; ++i)); do
  run_once plain >> "$WORK/plain"
  run_once traced >> "$WORK/traced"
done
plain=$(median < "$WORK/plain")
traced=$(median < "$WORK/traced")
echo "untraced wall s: $(tr '\n' ' ' < "$WORK/plain")-> median $plain"
echo "traced   wall s: $(tr '\n' ' ' < "$WORK/traced")-> median $traced"
awk -v t="$traced" -v p="$plain" 'BEGIN {printf "overhead ratio (traced/untraced): %.3f  (target <= 1.03)\n", t / p}'

# Size: compressed stream bytes / events, from the last traced run.
bytes=$(cat "$WORK"/trace/rank-*.p2t | wc -c)
if [[ -x $PAS2P ]]; then
  events=$("$PAS2P" dump "$WORK/trace" | grep -vc '^#')
else
  events=0
fi
awk -v b="$bytes" -v e="$events" 'BEGIN {
  printf "trace: %d events, %d bytes -> %.2f bytes/event  (target <= 4)\n", e, b, (e ? b / e : 0) }'
