#!/bin/sh
# Phase analysis of a ~1M-event trace: time and peak memory (issue 4 targets: <= 2 s, memory
# that does not grow with the trace length). Also analyses a 4x shorter trace of the same
# run: equal peak memory shows that memory follows the phases, not the events.
#   bench/phases_bench.sh [BUILD_DIR]     (default: build; needs target phases_bench,
#                                          best configured with -DCMAKE_BUILD_TYPE=Release)
set -eu
build=${1:-build}
bin="$build/bin/phases_bench"
[ -x "$bin" ] || { echo "build $bin first: cmake --build $build --target phases_bench" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "load: $(uptime)"
"$bin" generate "$tmp/t1m" 1000000 16
"$bin" generate "$tmp/t250k" 250000 16
short=$("$bin" analyze "$tmp/t250k")
long=$("$bin" analyze "$tmp/t1m")
echo "$short"
echo "$long"
field() { echo "$1" | sed -n "s/.*\"$2\": \([0-9.]*\).*/\1/p"; }
echo "analyze 1M events: $(field "$long" seconds) s        (target <= 2 s)"
echo "peak RSS 1M events: $(field "$long" peak_rss_mib) MiB; 250k events: $(field "$short" peak_rss_mib) MiB" \
     "(target: about equal, memory follows the distinct phases, not the trace length)"
