#!/usr/bin/env bash
# The critical path of a large prediction, one command:
#   bench/phase_sim_bench.sh [BUILD_DIR] [TARGET] [OCCURRENCES]
#     (defaults: build, 1048576, 3; needs BUILD_DIR/bin/phase_sim_bench)
# `pas2p predict --target N` simulates each repeated phase alone with K occurrences (and
# once); at a million ranks the K-occurrence run of the bundled stencil's main phase is the
# longest job and sets the wall time. This times that one job twice on the bundled stencil2d
# traces: generating every rank's events without simulating them, and synthesis plus
# simulation. The difference is the engine's own cost.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
build="$(cd "${1:-$here/build}" && pwd)"
target="${2:-1048576}"
occurrences="${3:-3}"
bench="$build/bin/phase_sim_bench"
[ -x "$bench" ] || { echo "phase_sim_bench: $bench is not built" >&2; exit 1; }
echo "load before: $(uptime | sed 's/.*load average: //') on $(nproc) cores"
"$bench" "$target" "$occurrences" "$here/datasets/traces/stencil2d"
