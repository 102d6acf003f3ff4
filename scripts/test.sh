#!/usr/bin/env bash
# The README's test command: installs dependencies, builds, and runs every test
# (unit, MPI integration, and the peer comparisons labelled "peer").
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh
cd "${BUILD_DIR:-build}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
ctest --output-on-failure -j"$(nproc)" --timeout 900 "$@"
