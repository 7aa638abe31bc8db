#!/usr/bin/env bash
# Installs what the project needs, builds it, and runs the main job.
# Today that is the rules core's self-check: perft from every preset's start
# position against the known values, then the perft speed benchmark.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build build -j "$(nproc)"
./build/ultima selfcheck
./build/ultima bench perft
