#!/usr/bin/env bash
# The README's test command: installs dependencies, builds, and runs every test: unit, MPI
# integration (label mpi) and the comparisons against SimGrid (label peer).
# Tests labelled `acceptance` check targets of open work that are not met yet; they are
# left out here and run with `ctest --test-dir build -L acceptance`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh
cd "${BUILD_DIR:-build}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
ctest --output-on-failure -j"$(nproc)" --timeout 900 -LE acceptance "$@"
