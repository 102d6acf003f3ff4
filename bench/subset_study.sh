#!/usr/bin/env bash
# How much the choice of training counts matters: every bundled mini-app trained on every
# subset of 3 of its traced counts below the largest, checked against the largest traced count
# and against its held-out run (datasets/heldout), with `pas2p validate --against`. One command:
#   bench/subset_study.sh [BUILD_DIR]   (default: build; needs BUILD_DIR/bin/pas2p)
#   ONLY="halo3d cg" bench/subset_study.sh ...   runs only the apps named
# Prints one line per run (training counts, checked count, pattern_match, collectives, bytes,
# compute and time error, or the error pas2p gave) and a summary: runs, refusals, runs meeting
# the issue's targets (peers 100%, bytes <= 2%, time <= 5%), mean time error where not refused.
set -uo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
build="$(cd "${1:-$here/build}" && pwd)"
pas2p="$build/bin/pas2p"
[ -x "$pas2p" ] || { echo "subset_study: $pas2p is not built" >&2; exit 1; }
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
echo "load: $(uptime | sed 's/.*load average: //')"
printf '%-13s %-14s %6s %9s %9s %9s %9s %9s\n' app trained count pattern colls bytes compute time
: >"$tmp/rows"
for dir in "$here"/datasets/traces/*/; do
  app="$(basename "$dir")"
  if [ -n "${ONLY:-}" ] && [[ " $ONLY " != *" $app "* ]]; then continue; fi
  mapfile -t counts < <(find "$dir" -maxdepth 1 -name "$app.*" -printf '%f\n' | sed "s/^$app\.//" | sort -n)
  largest="${counts[-1]}"
  against=("$dir/$app.$largest")
  for h in "$here/datasets/heldout/$app/$app".*; do [ -e "$h" ] && against+=("$h"); done
  n=$((${#counts[@]} - 1))
  for ((i = 0; i < n; ++i)); do
    for ((j = i + 1; j < n; ++j)); do
      for ((k = j + 1; k < n; ++k)); do
        train=("$dir/$app.${counts[i]}" "$dir/$app.${counts[j]}" "$dir/$app.${counts[k]}")
        label="${counts[i]},${counts[j]},${counts[k]}"
        for real in "${against[@]}"; do
          count="${real##*.}"
          if "$pas2p" validate --json --noise-draws 0 --against "$real" "${train[@]}" \
            >"$tmp/v.json" 2>"$tmp/err.txt"; then
            python3 - "$app" "$label" "$tmp/v.json" "$tmp/rows" <<'PY'
import json, sys
app, label, path, rows = sys.argv[1:5]
v = json.load(open(path))
r = (v["count"], v["pattern_match"], v.get("collective_match", 1), v["bytes_error"],
     v["compute_error"], v["time_error"])
print("%-13s %-14s %6d %8.2f%% %8.2f%% %8.2f%% %8.2f%% %8.2f%%" % (
    app, label, r[0], 100 * r[1], 100 * r[2], 100 * r[3], 100 * r[4], 100 * r[5]))
ok = r[1] >= 1 and r[2] >= 1 and r[3] <= 0.02 and r[5] <= 0.05
open(rows, "a").write("ok %d %.6f\n" % (ok, r[5]))
PY
          else
            printf '%-13s %-14s %6s error: %s\n' "$app" "$label" "$count" \
              "$(grep -m1 'error' "$tmp/err.txt" | cut -c1-140)"
            echo "refused" >>"$tmp/rows"
          fi
        done
      done
    done
  done
done
python3 - "$tmp/rows" <<'PY'
import sys
rows = [l.split() for l in open(sys.argv[1])]
done = [r for r in rows if r[0] == "ok"]
met = sum(int(r[1]) for r in done)
times = [float(r[2]) for r in done]
print("runs %d, refused %d, meeting every target %d, mean time error where not refused %.2f%%" % (
    len(rows), len(rows) - len(done), met, 100 * sum(times) / max(1, len(times))))
PY
