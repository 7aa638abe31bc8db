#!/usr/bin/env bash
# Installs what the project needs, builds it, and runs the whole test suite:
# the Release build's tests, then the engine layers' tests (rules, search,
# MCTS, play) again under AddressSanitizer and UndefinedBehaviorSanitizer.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)

bash scripts/install-deps.sh

echo "== build (Release)"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build build -j "$jobs"
echo "== tests (Release)"
ctest --test-dir build --output-on-failure -j "$jobs"

echo "== engine tests under AddressSanitizer + UndefinedBehaviorSanitizer"
cmake -S . -B build-sanitize -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DULTIMA_SANITIZE=ON -DULTIMA_ENGINE_ONLY=ON
cmake --build build-sanitize -j "$jobs"
ctest --test-dir build-sanitize --output-on-failure -j "$jobs"
