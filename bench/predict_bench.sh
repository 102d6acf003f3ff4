#!/usr/bin/env bash
# Whole-command benchmark of `pas2p predict` on the bundled stencil2d traces:
#   --target 65536   (goal: <= 5 s)
#   --target 1048576 (goal: <= 60 s and <= 8 GiB)
# Reports wall time and peak RSS from /usr/bin/time -v.
#
#   bench/predict_bench.sh [BUILD_DIR]     (default: build; needs BUILD_DIR/bin/pas2p)
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
build="$(cd "${1:-$here/build}" && pwd)"
pas2p="$build/bin/pas2p"
traces="$here/datasets/traces/stencil2d"
[ -x "$pas2p" ] || { echo "predict_bench: $pas2p is not built" >&2; exit 1; }
[ -d "$traces" ] || { echo "predict_bench: $traces is missing" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "predict_bench: /usr/bin/time (GNU time) is needed" >&2; exit 1; }
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
echo "load before: $(uptime | sed 's/.*load average: //') on $(nproc) cores"
printf '%-10s %10s %8s %12s %8s %s\n' target wall_s goal_s peak_rss_MiB goal_MiB predicted_time_s
for target in 65536 1048576; do
  /usr/bin/time -v "$pas2p" predict --json --target "$target" "$traces" >"$tmp/out.json" 2>"$tmp/time.txt" || {
    cat "$tmp/time.txt" >&2
    exit 1
  }
  wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {print $2}' "$tmp/time.txt")
  secs=$(echo "$wall" | awk -F: '{ if (NF == 3) print $1*3600 + $2*60 + $3; else print $1*60 + $2 }')
  rss_kb=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$tmp/time.txt")
  pred=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["predicted_time_s"])' "$tmp/out.json")
  if [ "$target" = 65536 ]; then goal_s=5; goal_mib=-; else goal_s=60; goal_mib=8192; fi
  printf '%-10s %10.2f %8s %12.1f %8s %s\n' "$target" "$secs" "$goal_s" "$(echo "$rss_kb / 1024" | bc -l)" "$goal_mib" "$pred"
done
echo "load after: $(uptime | sed 's/.*load average: //')"
