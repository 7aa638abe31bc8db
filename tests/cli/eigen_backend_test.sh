#!/usr/bin/env bash
# A network player on the Eigen backend (backend=eigen) plays from a model
# file without loading LibTorch at all, and says which backend it is; the
# same player on the default backend loads it. Bad backend settings are
# refused by name.
# Usage: eigen_backend_test.sh ULTIMA CONFIGS_DIR
set -euo pipefail
ultima=$1
configs=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

"$ultima" init --run-dir "$work/run" --config "$configs/tiny.yaml" > /dev/null
model="$work/run/models/model-000000.unn"
out=$(LD_DEBUG=files "$ultima" match --player1 "mcts:weights=$model,backend=eigen,playouts=8" \
  --player2 level:novice --games 2 2>&1) || fail "the Eigen player's match failed: $out"
grep -q "(Eigen)" <<< "$out" || fail "the player does not say it runs on Eigen: $out"
! grep -q "libultima_nn.so\|libtorch" <<< "$out" || fail "the LibTorch module was loaded for backend=eigen"
out=$(LD_DEBUG=files "$ultima" match --player1 "mcts:weights=$model,playouts=8" --player2 level:novice \
  --games 2 2>&1) || fail "the LibTorch player's match failed"
grep -q "libtorch" <<< "$out" || fail "the default backend did not load LibTorch (is LD_DEBUG working?)"

out=$("$ultima" match --player1 "mcts:weights=random,backend=eigen" --player2 level:novice --games 2 2>&1) &&
  fail "backend=eigen with random weights was accepted"
grep -q "backend=eigen needs weights" <<< "$out" || fail "unclear message: $out"
out=$("$ultima" match --player1 "mcts:weights=$model,backend=onnx" --player2 level:novice --games 2 2>&1) &&
  fail "backend=onnx was accepted"
grep -q "'onnx' is not torch or eigen" <<< "$out" || fail "unclear message: $out"
echo PASS
