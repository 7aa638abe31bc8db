#!/usr/bin/env bash
# Installs what the project needs, builds it, and runs the main job: the
# self-play / training / evaluation loop on its built-in config
# (configs/cpu.yaml, no generation started after 110 minutes) in runs/main.
# Run again, it resumes where it stopped. Arguments, when given, replace
# the loop's (e.g. --config configs/tiny.yaml --run-dir runs/tiny).
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build build -j "$(nproc)"
./build/ultima selfcheck
if [ $# -gt 0 ]; then
  ./build/ultima loop "$@"
else
  ./build/ultima loop --run-dir runs/main
fi
