#!/usr/bin/env bash
# Installs every build and test dependency of pas2p from Debian packages. Safe to run twice:
# it installs only what is missing. Needs root (or sudo).
set -euo pipefail
packages=(
  build-essential cmake pkg-config gfortran clang-format python3
  libopenmpi-dev openmpi-bin            # tracing real runs, mini-apps, characterize
  libpapi-dev papi-tools                # hardware counters in the tracer
  libeigen3-dev libceres-dev            # regression
  libboost-regex-dev                    # text formats
  libgtest-dev libgmock-dev libbenchmark-dev
  libcli11-dev nlohmann-json3-dev libzstd-dev libtomlplusplus-dev
  libgoogle-perftools-dev               # TCMalloc, the pas2p executable's allocator
  libsimgrid-dev                        # peer comparison: smpirun -replay
  hyperfine
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages already installed"
  exit 0
fi
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
echo "install-deps: installing ${missing[*]}"
$SUDO apt-get update -q
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
