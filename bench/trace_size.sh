#!/usr/bin/env bash
# Compressed trace size: bytes per event of the binary event streams the tracer writes.
#
# Traces the mini-apps with `pas2p trace` at each count, twice: with the arguments the
# bundled traces use (datasets/make_traces.sh) and with a longer run (the apps' default
# iterations, or 4 rounds for masterworker), then prints per trace
#   events (from `pas2p dump --summary`), stream bytes (the rank-*.p2t files; trace.json,
#   a few KB of metadata, is not counted), bytes/event
# and the overall figure, each beside the target (<= 4 bytes/event).
#
# Usage: bench/trace_size.sh [BUILD_DIR]      (default ./build; needs bin/pas2p,
#        lib/libpas2p-trace.so and the mini-apps: cmake --build B --target pas2p miniapps)
# Env:   APPS   (default "stencil2d cg butterfly transpose masterworker halo3d wavefront")
#        COUNTS (default "4 16")
#        LENGTHS (default "bundled long")
#        KEEP=DIR keeps the traces in DIR instead of a temporary directory.
# Exit status 0 whatever the figures (it is a benchmark; the target is printed beside them).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=$(readlink -f "${1:-build}")
PAS2P=$BUILD_DIR/bin/pas2p
[[ -x $PAS2P ]] || { echo "trace_size: $PAS2P not built (cmake --build $BUILD_DIR --target pas2p)" >&2; exit 1; }
[[ -f $BUILD_DIR/lib/libpas2p-trace.so ]] || { echo "trace_size: tracer not built" >&2; exit 1; }
APPS=${APPS:-"stencil2d cg butterfly transpose masterworker halo3d wavefront"}
COUNTS=${COUNTS:-"4 16"}
LENGTHS=${LENGTHS:-"bundled long"}
TARGET=4
if [[ -n ${KEEP:-} ]]; then
  WORK=$(readlink -f "$KEEP")
  mkdir -p "$WORK"
else
  WORK=$(mktemp -d)
  trap 'rm -rf "$WORK"' EXIT
fi

# Arguments of the bundled traces (datasets/make_traces.sh) and of the long runs.
args_for() {  # app length
  case "$1:$2" in
    stencil2d:bundled) echo "--iters 50" ;;     stencil2d:long) echo "--iters 300" ;;
    cg:bundled) echo "--iters 75" ;;            cg:long) echo "--iters 400" ;;
    butterfly:bundled) echo "--iters 30" ;;     butterfly:long) echo "--iters 200" ;;
    transpose:bundled) echo "--iters 16" ;;     transpose:long) echo "--iters 60" ;;
    masterworker:bundled) echo "--size 700" ;;  masterworker:long) echo "--size 700 --iters 4" ;;
    halo3d:bundled) echo "--iters 30" ;;        halo3d:long) echo "--iters 150" ;;
    wavefront:bundled) echo "--iters 8" ;;      wavefront:long) echo "--iters 30" ;;
    *) echo "trace_size: no arguments known for $1 ($2)" >&2; exit 1 ;;
  esac
}

echo "trace_size: $(uptime | sed 's/.*load/load/')"
printf "%-13s %-8s %6s %10s %12s %11s  %s\n" app length ranks events stream_bytes bytes/event target
total_events=0
total_bytes=0
worst=0
for length in $LENGTHS; do
  for app in $APPS; do
    [[ -x $BUILD_DIR/bin/$app ]] || { echo "trace_size: $BUILD_DIR/bin/$app not built (target miniapps)" >&2; exit 1; }
    read -r -a args <<< "$(args_for "$app" "$length")"
    out=$WORK/$length/$app
    rm -rf "$out"
    counts=$(echo "$COUNTS" | tr ' ' ',')
    (cd "$BUILD_DIR/bin" && ./pas2p trace -n "$counts" --out "$out" -- "./$app" "${args[@]}") \
      > "$WORK/trace.log" 2>&1 || { cat "$WORK/trace.log" >&2; exit 1; }
    for n in $COUNTS; do
      dir=$out/$app.$n
      events=$("$PAS2P" dump --summary "$dir" | awk '$1 == "total" {print $2}')
      bytes=$(cat "$dir"/rank-*.p2t | wc -c)
      total_events=$((total_events + events))
      total_bytes=$((total_bytes + bytes))
      awk -v a="$app" -v l="$length" -v n="$n" -v e="$events" -v b="$bytes" -v t="$TARGET" 'BEGIN {
        r = b / e; printf "%-13s %-8s %6d %10d %12d %11.2f  <= %d %s\n", a, l, n, e, b, r, t, (r <= t ? "ok" : "OVER") }'
      worst=$(awk -v w="$worst" -v e="$events" -v b="$bytes" 'BEGIN { r = b / e; print (r > w ? r : w) }')
    done
  done
done
awk -v e="$total_events" -v b="$total_bytes" -v w="$worst" -v t="$TARGET" 'BEGIN {
  printf "overall: %d events, %d stream bytes -> %.2f bytes/event (target <= %d); worst trace %.2f (target <= %d)\n",
    e, b, b / e, t, w, t }'
