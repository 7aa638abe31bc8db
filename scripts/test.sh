#!/usr/bin/env bash
# Installs what the project needs, builds it, and runs the whole test suite:
# the Release build's tests; then every test that needs no LibTorch (the
# engine layers, the pipeline on the material evaluator, the CLI forms)
# under AddressSanitizer and UndefinedBehaviorSanitizer; then the threaded
# ones (MCTS threads, the batching evaluator, self-play, match concurrency,
# UCI stop, the loop's stages) under ThreadSanitizer. docs/testing.md says
# what each stage covers and what it leaves out.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)
stage_start=$SECONDS
stage_done() { echo "== $1 took $((SECONDS - stage_start)) s"; stage_start=$SECONDS; }

bash scripts/install-deps.sh
stage_done "install"

echo "== build (Release)"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build build -j "$jobs"
stage_done "Release build"
echo "== tests (Release)"
ctest --test-dir build --output-on-failure -j "$jobs"
stage_done "Release tests"

# LibTorch is not built with the sanitizers, so these builds leave out the
# network module and its tests (ULTIMA_TORCH=OFF).
echo "== tests without LibTorch under AddressSanitizer + UndefinedBehaviorSanitizer"
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" -DULTIMA_SANITIZE=address -DULTIMA_TORCH=OFF
cmake --build build-asan -j "$jobs"
ctest --test-dir build-asan --output-on-failure -j "$jobs"
stage_done "AddressSanitizer build and tests"

echo "== threaded tests under ThreadSanitizer"
cmake -S . -B build-tsan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" -DULTIMA_SANITIZE=thread -DULTIMA_TORCH=OFF
cmake --build build-tsan -j "$jobs" --target search_tests mcts_tests play_tests frontend_tests pipeline_tests
threaded='^(SearchLimits|SearchThreads|Mcts.*|MateScan|Match|Uci.*|AnalysisService|NnBatchingEvaluator|RunSelfPlay|SelfPlayGame|LoopSelfPlayStage|LoopEvaluationStage)\.'
# Some kernels randomize the address space more than ThreadSanitizer's
# fixed layout allows; setarch -R runs the tests without that.
norandom=()
if setarch "$(uname -m)" -R true 2> /dev/null; then norandom=(setarch "$(uname -m)" -R); fi
TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" \
  "${norandom[@]}" ctest --test-dir build-tsan --output-on-failure -j "$jobs" -R "$threaded"
stage_done "ThreadSanitizer build and tests"
