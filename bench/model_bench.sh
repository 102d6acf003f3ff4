#!/usr/bin/env bash
# Wall time, CPU time and peak RSS of `pas2p model` (analysis of every trace and the model's
# fit, as `predict` and `validate` do first) on directories of traces:
#
#   bench/model_bench.sh [BUILD_DIR [TRACE_DIR ...]]
#
# BUILD_DIR defaults to build; the trace directories to the bundled ones (datasets/traces/*).
# Give the traces of a real code (e.g. PETSc multigrid's, bench/petsc_mg_study.sh, or Meep's,
# bench/meep_study.sh) to see where building a model takes long. Models are built with
# --allow-remainder, so a code whose phases are partly unmodelled is timed too. Set
# PAS2P_OTHER=path/to/another/pas2p to time a second binary on the same traces in the same
# run, with the ratio of the wall times (other / this).
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
build="$(cd "${1:-$here/build}" && pwd)"
shift || true
pas2p="$build/bin/pas2p"
[ -x "$pas2p" ] || { echo "model_bench: $pas2p is not built" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "model_bench: /usr/bin/time (GNU time) is needed" >&2; exit 1; }
if [ $# -eq 0 ]; then set -- "$here"/datasets/traces/*/; fi
other="${PAS2P_OTHER:-}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
run() {  # binary dir -> "wall user rss_MiB"
  /usr/bin/time -f '%e %U %M' "$1" model -q --allow-remainder "$2" -o "$tmp/model.json" \
    >/dev/null 2>"$tmp/err" || { cat "$tmp/err" >&2; return 1; }
  tail -1 "$tmp/err" | awk '{printf "%s %s %.1f\n", $1, $2, $3 / 1024}'
}
echo "load before: $(uptime | sed 's/.*load average: //') on $(nproc) cores"
if [ -n "$other" ]; then
  printf '%-28s %8s %8s %8s | %8s %8s %8s %7s\n' traces wall_s cpu_s rss_MiB other_s \
    other_cpu other_MiB ratio
else
  printf '%-28s %8s %8s %8s\n' traces wall_s cpu_s rss_MiB
fi
for dir in "$@"; do
  name="$(basename "$(dirname "${dir%/}")")/$(basename "${dir%/}")"
  read -r wall cpu rss < <(run "$pas2p" "$dir")
  if [ -n "$other" ]; then
    read -r owall ocpu orss < <(run "$other" "$dir")
    printf '%-28s %8s %8s %8s | %8s %8s %8s %7.2f\n' "$name" "$wall" "$cpu" "$rss" "$owall" \
      "$ocpu" "$orss" "$(echo "$owall / $wall" | bc -l)"
  else
    printf '%-28s %8s %8s %8s\n' "$name" "$wall" "$cpu" "$rss"
  fi
done
echo "load after: $(uptime | sed 's/.*load average: //')"
