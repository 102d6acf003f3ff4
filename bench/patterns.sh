#!/bin/sh
# Prints the patterns benchmarks (fit cost; every rank's peers at 2^20 ranks).
# Usage: bench/patterns.sh [BUILD_DIR]   (default: build, configured RelWithDebInfo or Release)
set -e
BUILD=${1:-build}
cmake --build "$BUILD" -j2 --target patterns_bench >/dev/null
"$BUILD"/bin/patterns_bench --benchmark_repetitions=1
