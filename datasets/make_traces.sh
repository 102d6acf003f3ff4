#!/usr/bin/env bash
# Regenerates the bundled traces in datasets/traces/<app>/<app>.<count> (and the held-out
# runs in datasets/heldout/<app>/<app>.<count>) with `pas2p trace`.
#
#   datasets/make_traces.sh [BUILD_DIR] [APP ...]
#
# BUILD_DIR (default: build) must hold bin/pas2p, lib/libpas2p-trace.so and the mini-apps
# (cmake --build BUILD_DIR --target pas2p pas2p_trace miniapps). With APP names, only those
# apps are traced again. Every trace uses the app's default global problem size (strong
# scaling) and only fewer iterations than the default run, so that the bundle stays small
# (check with `du -sh datasets/traces`). The commands below are the exact ones that made
# the bundled traces; they run from BUILD_DIR/bin so that each trace records the command
# line as `./<app> ...`.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
build="$(cd "${1:-$here/../build}" && pwd)"
shift || true
out="$here/traces"
heldout="$here/heldout"
cd "$build/bin"
for tool in ./pas2p ../lib/libpas2p-trace.so; do
  [ -e "$tool" ] || { echo "make_traces: $build/bin/$tool is not built" >&2; exit 1; }
done

want() {  # is app $1 selected on the command line (or are all apps)?
  [ ${#selected[@]} -eq 0 ] && return 0
  local a
  for a in "${selected[@]}"; do [ "$a" = "$1" ] && return 0; done
  return 1
}
selected=("$@")

trace() {  # trace APP COUNTS ARGS...
  local app=$1 counts=$2
  shift 2
  want "$app" || return 0
  [ -x "./$app" ] || { echo "make_traces: $build/bin/$app is not built" >&2; exit 1; }
  rm -rf "${out:?}/$app"
  echo "make_traces: pas2p trace -n $counts --out ${out#"$(dirname "$here")/"}/$app -- ./$app $*" >&2
  ./pas2p trace -n "$counts" --out "$out/$app" -- "./$app" "$@"
}

trace stencil2d    4,9,16,25,36    --iters 50
trace stencil2d_f  4,9,16,25,36    --iters 50
trace halo3d       4,8,9,16,25,27,36 --iters 30
trace butterfly    4,8,16,32,64    --iters 30
trace transpose    4,9,16,25,36    --iters 16
trace wavefront    4,9,16,25,36    --iters 8
trace masterworker 4,9,16,25,36    --size 700
trace cg           4,9,16,25,36    --iters 75

# Held-out runs: one count larger than any in the bundle, traced with the same arguments.
# No test trains on them; they are what a prediction from the bundle is checked against
# (`pas2p validate --against datasets/heldout/<app>/<app>.<N> datasets/traces/<app>`).
out="$heldout"
trace stencil2d    49              --iters 50
trace stencil2d_f  49              --iters 50
trace halo3d       49              --iters 30
trace butterfly    128             --iters 30
trace transpose    49              --iters 16
trace wavefront    49              --iters 8
trace masterworker 49              --size 700
trace cg           49              --iters 75

du -sh "$here/traces" "$heldout" >&2
