#!/usr/bin/env bash
# The validation table of issue 5, for every bundled application, in one command:
#   leave-largest-out  `pas2p validate --json datasets/traces/<app>` (train on all but the
#                      largest traced count, predict it);
#   held-out           `pas2p validate --json --against datasets/heldout/<app>/<app>.<N>
#                      datasets/traces/<app>` (train on every bundled count, predict a real
#                      run at a larger count that was never trained on).
# Columns: pattern_match (target 100%), collective_match (collectives on the right members
# and root, 100%), bytes_error (target <= 2%), compute_error,
# time_error (target <= 5%, against the simulation of the real trace on the same machine),
# noise_floor (how far the real trace's own time moves when its compute noise is shuffled in
# time: the error a model that knew the traced noise exactly would still have); a
# self-scheduled run adds its master's partner match and its peers floor (the same match
# between the real trace and itself with its noise shuffled).
# A row that fails prints the first line of the error instead.
#
#   bench/validate_table.sh [BUILD_DIR]     (default: build; needs BUILD_DIR/bin/pas2p)
set -uo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
build="$(cd "${1:-$here/build}" && pwd)"
pas2p="$build/bin/pas2p"
[ -x "$pas2p" ] || { echo "validate_table: $pas2p is not built" >&2; exit 1; }
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
echo "load: $(uptime | sed 's/.*load average: //')"
printf '%-13s %-18s %6s %10s %9s %9s %9s %9s %9s %9s %9s  %s\n' app check count pattern colls bytes compute time floor quiet interval ok
printf '%-13s %-18s %6s %10s %9s %9s %9s %9s %9s %9s %9s\n' "" "" "" "(100%)" "(100%)" "(<=2%)" "" "(<=5%)" "(noise)" "(no noise)" "(real in)"
pass=0 total=0
row() {  # app check args...
  local app="$1" check="$2"
  shift 2
  total=$((total + 1))
  if "$pas2p" validate --json "$@" >"$tmp/out.json" 2>"$tmp/err.txt"; then
    python3 - "$app" "$check" "$tmp/out.json" <<'PY'
import json, sys
app, check, path = sys.argv[1:4]
v = json.load(open(path))
ok = (v["pattern_match"] == 1.0 and v.get("collective_match", 1.0) == 1.0
      and v["bytes_error"] <= 0.02 and v["time_error"] <= 0.05)
floor = "%8.2f%%" % (100 * v["noise_floor"]) if v.get("noise_floor") is not None else "%9s" % "-"
quiet = "%8.2f%%" % (100 * v["quiet_error"]) if v.get("quiet_error") is not None else "%9s" % "-"
peers_floor = v.get("scheduled_match_floor")
print("%-13s %-18s %6d %9.2f%% %8.2f%% %8.2f%% %8.2f%% %8.2f%% %s %s %9s  %s%s" % (
    app, check, v["count"], 100 * v["pattern_match"], 100 * v.get("collective_match", 1.0),
    100 * v["bytes_error"],
    100 * v["compute_error"], 100 * v["time_error"], floor, quiet,
    "yes" if v["in_interval"] else "no",
    "yes" if ok else "no",
    "" if peers_floor is None else "  (self-scheduled master: %.2f%% of its partners matched, "
    "peers floor %.2f%%)" % (100 * v["scheduled_match"], 100 * peers_floor)))
sys.exit(0 if ok else 3)
PY
    [ $? -eq 0 ] && pass=$((pass + 1))
  else
    printf '%-13s %-18s %6s  failed: %s\n' "$app" "$check" "-" \
      "$(grep -m1 -v '^\s*$' "$tmp/err.txt" | sed 's/^pas2p: error: //' | cut -c1-150)"
  fi
}
for dir in "$here"/datasets/traces/*/; do
  app="$(basename "$dir")"
  row "$app" leave-largest-out "$dir"
  for held in "$here"/datasets/heldout/"$app"/*; do
    [ -e "$held" ] || continue
    row "$app" "held-out" --against "$held" "$dir"
  done
done
echo "meeting every target: $pass of $total checks"
