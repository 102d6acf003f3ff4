#!/usr/bin/env bash
# Patterns of real codes beyond the bundled mini-apps, traced on this machine and checked the
# way issue 5 asks: `pas2p validate` (leave-largest-out) and `pas2p validate --against` a run
# at a larger count. One command:
#   bench/pattern_zoo.sh [BUILD_DIR]   (default: build; needs BUILD_DIR/bin/pas2p, mpicc)
#   ONLY="waitany cannon" bench/pattern_zoo.sh ...   runs only the patterns named
#   TRACES=DIR bench/pattern_zoo.sh ...   keeps the traces in DIR and reuses those already
#                                         there: two builds compared on the same traces
# Prints one line per check: pattern_match, collective_match, bytes, compute, time error, or
# the error pas2p gave. Traces go to a temporary directory (a few seconds per count).
set -uo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
build="$(cd "${1:-$here/build}" && pwd)"
pas2p="$build/bin/pas2p"
[ -x "$pas2p" ] || { echo "pattern_zoo: $pas2p is not built" >&2; exit 1; }
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
mpicc -O2 -o "$tmp/pattern_zoo" "$here/bench/pattern_zoo.c" -lm || exit 1
echo "load: $(uptime | sed 's/.*load average: //')"
printf '%-8s %-18s %6s %9s %9s %9s %9s %9s\n' mode check count pattern colls bytes compute time
check() {  # name label args...
  local name="$1" label="$2"
  shift 2
  if "$pas2p" validate --json --noise-draws 0 "$@" >"$tmp/v.json" 2>"$tmp/err.txt"; then
    python3 - "$name" "$label" "$tmp/v.json" <<'PY'
import json, sys
name, label, path = sys.argv[1:4]
v = json.load(open(path))
print("%-8s %-18s %6d %8.2f%% %8.2f%% %8.2f%% %8.2f%% %8.2f%%" % (
    name, label, v["count"], 100 * v["pattern_match"], 100 * v.get("collective_match", 1),
    100 * v["bytes_error"], 100 * v["compute_error"], 100 * v["time_error"]))
PY
  else
    printf '%-8s %-18s error: %s\n' "$name" "$label" "$(grep -m1 'error' "$tmp/err.txt" | cut -c1-150)"
  fi
}
zoo() {  # name counts held-out mode n iters
  local name="$1" counts="$2" held="$3"
  shift 3
  if [ -n "${ONLY:-}" ] && [[ " $ONLY " != *" $name "* ]]; then return; fi
  local dir="${TRACES:-$tmp}"
  mkdir -p "$dir"
  if [ ! -d "$dir/$name" ] || [ ! -d "$dir/$name-held" ]; then
    rm -rf "${dir:?}/$name" "${dir:?}/$name-held"
    "$pas2p" trace -n "$counts" -o "$dir/$name" -- "$tmp/pattern_zoo" "$@" >/dev/null 2>&1
    "$pas2p" trace -n "$held" -o "$dir/$name-held" -- "$tmp/pattern_zoo" "$@" >/dev/null 2>&1
  fi
  check "$name" leave-largest-out "$dir/$name"
  check "$name" "held-out $held" --against "$dir/$name-held/pattern_zoo.$held" "$dir/$name"
}
zoo matvec 4,6,8,12,16 24 1 4800 20
zoo groups 4,8,12,16,20 32 2 20000000 30
zoo halo27 8,12,18,27 36 3 48 20
zoo gather 4,6,8,12,16 24 4 20000000 30
zoo waitany 4,6,8,12,16 24 5 2400 40
zoo cannon 4,9,16,25 36 6 720 3
zoo persist 4,6,8,12,16 24 7 12000000 40
zoo sparse 4,6,8,12,16 24 8 480000 20
zoo procnull 8,12,18,27 36 9 96 20
zoo nbcoll 4,6,8,12,16 24 10 480000 30
zoo prefix 4,6,8,12,16 24 11 48000 20
zoo recdbl 4,6,8,12,16 24 12 4096 20
zoo rotroot 4,6,8,12,16 24 13 480000 24
zoo probe 4,6,8,12,16 24 14 96000 20
zoo scatterv 4,6,8,12,16 24 15 1000003 20
zoo rowcol 4,6,8,12,16 24 16 480000 30
zoo anyhalo 4,6,8,12,16 24 17 480000 30
zoo chain 4,6,8,12,16 24 18 480000 10
zoo neighbor 4,6,8,12,16 24 19 480000 30
zoo waitsome 4,6,8,12,16 24 20 480000 30
zoo halfring 4,6,8,12,16 24 21 480000 30
zoo reducebc 4,6,8,12,16 24 22 480000 30
zoo polling 4,6,8,12,16 24 23 480000 30
zoo nbody 4,6,8,12,16 24 24 4800 3
zoo oddeven 4,6,8,12,16 24 25 480000 4
zoo pencil 4,6,8,12,16 24 26 960000 20
zoo bintree 4,6,8,12,16 24 27 480000 30
zoo kba 4,6,8,12,16 24 28 480000 10
zoo checker 4,6,8,12,16 24 29 960000 20
zoo stride 4,8,12,16,20 32 30 960000 30
zoo uneven 4,6,8,12,16 24 31 480000 20
zoo openhalo 8,12,18,27 36 32 96 20
zoo nbtree 4,6,8,12,16 24 33 480000 30
zoo doubling 4,6,8,12,16 24 34 480000 30
zoo bingather 4,6,8,12,16 24 35 480000 30
zoo nine 4,6,8,12,16 24 36 2000 30
zoo growing 4,6,8,12,16 24 37 4000000 0
zoo coupled 4,6,8,12,16 24 38 480000 30
zoo interlv 4,6,8,12,16 24 39 480000 30
zoo cplworld 4,6,8,12,16 24 40 480000 30
zoo lasttree 4,6,8,12,16 24 41 480000 30
zoo cplcheck 4,6,8,12,16 24 42 480000 30
zoo libdbl 4,6,8,12,16 24 43 4096 20
zoo pairwise 4,6,8,12,16 24 44 4000000 10
zoo bruck 4,6,8,12,16 24 45 480000 20
zoo ringred 4,6,8,12,16 24 46 960000 20
zoo tworows 4,6,8,12,16 24 47 2400 30
zoo unequal 8,12,16,20,24 32 48 480000 30
zoo unequalnorm 8,12,16,20,24 32 50 480000 30
zoo ringbc 4,6,8,12,16 24 49 480000 48
zoo owndomain 8,12,16,20,24 32 51 2400 30
