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
# Targets: wall ratio <= 1.03 (the issue's figure), CPU ratio <= 1.03, bytes/event <= 4
# (bench/trace_size.sh measures the size over all the mini-apps).
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

# One run; appends "wall_s cpu_s" (cpu = user + system of mpirun and its ranks) to $2.
run_once() {  # $1 = traced|plain
  local cmd=("${MPIRUN[@]}")
  if [[ $1 == traced ]]; then
    rm -rf "$WORK/trace"
    cmd+=(-x LD_PRELOAD="$(readlink -f "$TRACER")" -x PAS2P_TRACE_DIR="$WORK/trace")
  fi
  /usr/bin/time -f "%e %U %S" -o "$WORK/time" "${cmd[@]}" "${PROGRAM[@]}" > /dev/null
  awk '{printf "%.3f %.3f\n", $1, $2 + $3}' "$WORK/time" >> "$2"
}
median() { sort -g | awk '{v[NR]=$1} END {if (NR % 2) print v[(NR+1)/2]; else printf "%.4f\n", (v[NR/2]+v[NR/2+1])/2}'; }

echo "program: ${PROGRAM[*]} at $NP ranks, $RUNS runs each (interleaved); $(uptime | sed 's/.*load/load/')"
run_once plain "$WORK/warmup"  # warm the page cache
: > "$WORK/plain"; : > "$WORK/traced"
for ((i = 0; i < RUNS; ++i)); do
  run_once plain "$WORK/plain"
  run_once traced "$WORK/traced"
done
col() { awk -v c="$2" '{print $c}' "$1"; }
plain=$(col "$WORK/plain" 1 | median)
traced=$(col "$WORK/traced" 1 | median)
plain_cpu=$(col "$WORK/plain" 2 | median)
traced_cpu=$(col "$WORK/traced" 2 | median)
echo "untraced wall s: $(col "$WORK/plain" 1 | tr '\n' ' ')-> median $plain (cpu median $plain_cpu s)"
echo "traced   wall s: $(col "$WORK/traced" 1 | tr '\n' ' ')-> median $traced (cpu median $traced_cpu s)"
awk -v t="$traced" -v p="$plain" 'BEGIN {printf "overhead ratio (traced/untraced wall, median): %.3f  (target <= 1.03)\n", t / p}'
awk -v t="$traced_cpu" -v p="$plain_cpu" 'BEGIN {printf "cpu ratio (traced/untraced user+sys, median): %.3f  (target <= 1.03; steadier than wall on a shared machine)\n", t / p}'

# Per-call cost in CPU time (steady under load): bench/tracer_call_cost, 1 rank, calls with
# short (~0 us), medium (~30 us, under the tracer's 50 us clock-skip threshold) and long
# (~120 us: the thread CPU clock is read at entry and exit) bursts between them.
COST=$BUILD_DIR/bin/tracer_call_cost
if [[ -x $COST ]]; then
  for spec in "200000 0 short" "20000 20000 medium" "10000 80000 long"; do
    read -r calls work label <<< "$spec"
    one=(mpirun -np 1 --bind-to none)
    [[ $(id -u) == 0 ]] && one+=(--allow-run-as-root)
    plain_ns=$("${one[@]}" "$COST" "$calls" "$work" | awk '{print $2}')
    rm -rf "$WORK/cost"
    traced_ns=$("${one[@]}" -x LD_PRELOAD="$(readlink -f "$TRACER")" -x PAS2P_TRACE_DIR="$WORK/cost" \
      "$COST" "$calls" "$work" | awk '{print $2}')
    awk -v p="$plain_ns" -v t="$traced_ns" -v l="$label" 'BEGIN {
      printf "cpu per MPI call, %-6s bursts: untraced %7.1f ns, traced %7.1f ns -> tracer %.2f us per call\n", l, p, t, (t - p) / 1000 }'
  done
else
  echo "(per-call cost: $COST not built; cmake --build $BUILD_DIR --target tracer_call_cost)"
fi

# Size: compressed stream bytes / events, from the last traced run.
bytes=$(cat "$WORK"/trace/rank-*.p2t | wc -c)
if [[ -x $PAS2P ]]; then
  events=$("$PAS2P" dump "$WORK/trace" | grep -vc '^#')
else
  events=0
fi
awk -v b="$bytes" -v e="$events" 'BEGIN {
  printf "trace: %d events, %d bytes -> %.2f bytes/event  (target <= 4)\n", e, b, (e ? b / e : 0) }'
