#!/usr/bin/env bash
# Builds the libFuzzer programs (clang, AddressSanitizer and
# UndefinedBehaviorSanitizer, no LibTorch) and runs each target for a given
# time, starting from its kept inputs in tests/fuzz/corpus/<target>/. The
# corpus the fuzzer grows goes to build-fuzz/corpus/<target>/; a crashing
# input is written to build-fuzz/crashes/<target>/ and the script exits 1:
# fix the bug, then copy the input into tests/fuzz/corpus/<target>/ so that
# every ctest run replays it (fuzz_replay_tests).
# usage: scripts/fuzz.sh [SECONDS_PER_TARGET (default 60)] [TARGET...]
# With FUZZ_RUNS=N in the environment each target stops after N inputs or
# the time, whichever comes first (FUZZ_RUNS=1000000 for the million-input
# runs of docs/testing.md). With FUZZ_FORK=N the target runs in libFuzzer's
# fork mode, N processes at once, and FUZZ_RUNS counts the inputs of all
# of them together (one run, N cores).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(fen move_text uci_lines pgn run_config model_file checkpoint sample_shard nnue_file nnue_records
  server_requests)

CC=clang CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" -DULTIMA_FUZZ=ON -DULTIMA_SANITIZE=address -DULTIMA_TORCH=OFF \
  -DULTIMA_NATIVE=OFF > /dev/null
cmake --build build-fuzz -j "$(nproc)" --target "${targets[@]/#/fuzz_}"

# The file-reading targets write each input to a temporary file: memory is
# a hundred times faster than the disk for that.
if [ -z "${TMPDIR:-}" ] && [ -w /dev/shm ]; then export TMPDIR=/dev/shm; fi

status=0
for t in "${targets[@]}"; do
  mkdir -p "build-fuzz/corpus/$t" "build-fuzz/crashes/$t"
  echo "== $t for $seconds s"
  # The UCI target starts searches; the others parse and return at once.
  start=$(date +%s)
  if ! build-fuzz/tests/fuzz_"$t" -max_total_time="$seconds" ${FUZZ_RUNS:+-runs="$FUZZ_RUNS"} ${FUZZ_FORK:+-fork="$FUZZ_FORK"} -max_len=4096 -timeout=20 -rss_limit_mb=4096 \
      -print_final_stats=1 -artifact_prefix="build-fuzz/crashes/$t/" \
      "build-fuzz/corpus/$t" "tests/fuzz/corpus/$t" 2> "build-fuzz/$t.log"; then
    echo "FAIL: $t found a crash: $(ls "build-fuzz/crashes/$t")"
    status=1
  fi
  grep -E "stat::number_of_executed_units|stat::peak_rss_mb|fuzzed for [0-9]+ iterations" "build-fuzz/$t.log" | sed 's/^/  /'
  echo "  seconds: $(( $(date +%s) - start ))"
done
exit $status
