#!/usr/bin/env bash
# The README's main command: installs dependencies, builds, and predicts the bundled 2-D
# stencil (traced at 4, 9, 16, 25, 36 ranks, datasets/traces/stencil2d) at 1024 ranks on
# the documented default machine (datasets/machines/default.toml).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh
echo
echo "\$ pas2p predict --target 1024 datasets/traces/stencil2d"
"${BUILD_DIR:-build}/bin/pas2p" predict --target 1024 datasets/traces/stencil2d
