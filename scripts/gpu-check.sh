#!/usr/bin/env bash
# The GPU check: one run on a machine with a CUDA GPU and a pip `torch`
# (no network needed; the project's Debian libraries come from deps/debs,
# fetched beforehand with `scripts/gpu-deps.sh fetch` and carried with the
# tree, where the machine lacks them; scripts/gpu-rehearsal.sh tries that
# on a bare Debian 12), writing every figure, the logs and the trained
# model into OUTDIR, inside about 10 minutes:
#   1. the GPU and the LibTorch found (gpu.txt);
#   2. a Release build against that LibTorch through CMAKE_PREFIX_PATH;
#   3. the network and trainer tests (nn_tests);
#   4. bench nn (fp32, fp16, bf16), bench mcts, bench selfplay with hundreds
#      of games at once, bench train (fp32, bf16, fp16), all on cuda;
#   5. configs/experiments/gpu-check.yaml (gpu.yaml cut to minutes) as a loop;
#   6. bench smp: the alpha-beta search's nodes/s and depth by thread count.
# Each step's output goes to OUTDIR/NN-name.log; a failed step is recorded
# in OUTDIR/summary.txt and the next one still runs.
#   scripts/gpu-check.sh OUTDIR
set -uo pipefail
out=${1:?usage: gpu-check.sh OUTDIR}
cd "$(dirname "$0")/.."
mkdir -p "$out"
summary="$out/summary.txt"
: > "$summary"
step() {  # step NAME SECONDS COMMAND...: runs it with a time limit, logs it
  local name=$1 limit=$2; shift 2
  local start=$SECONDS
  timeout "$limit" "$@" > "$out/$name.log" 2>&1
  local rc=$?
  echo "$name: exit $rc in $((SECONDS - start)) s" | tee -a "$summary"
  return $rc
}

{
  nvidia-smi || echo "nvidia-smi: not found"
  python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, "devices", torch.cuda.device_count())'
  for tool in cmake ninja g++; do command -v "$tool" || echo "$tool: not found"; done
} > "$out/00-gpu.txt" 2>&1
prefix=$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)' 2> /dev/null) ||
  { echo "no python3 torch: nothing to build against" | tee -a "$summary"; exit 1; }
# The project's Debian libraries, where the machine has none: the packages
# fetched beforehand (scripts/gpu-deps.sh fetch, into deps/debs, carried
# with the tree) unpacked into a private prefix.
if [ -d deps/debs ]; then
  # shellcheck source=gpu-deps.sh
  source scripts/gpu-deps.sh unpack build-gpu-deps >> "$out/00-gpu.txt" 2>&1 ||
    { echo "deps/debs could not be unpacked" | tee -a "$summary"; exit 1; }
  prefix="$prefix;$ULTIMA_DEPS_PREFIX"
fi

# NCCL's header, for data-parallel training over NCCL, comes with pip's
# nvidia-nccl package when it is there (else Gloo carries CUDA tensors).
nccl=$(python3 -c 'import os, nvidia.nccl as n; print(os.path.join(list(n.__path__)[0], "include"))' 2> /dev/null || true)
jobs=$(nproc)
step 01-configure 120 cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DULTIMA_NATIVE=OFF \
  -DBUILD_TESTING=ON -DCMAKE_PREFIX_PATH="$prefix" ${nccl:+-DULTIMA_NCCL_INCLUDE="$nccl"} || exit 1
step 02-build 300 cmake --build build-gpu -j "$jobs" || exit 1
ultima=build-gpu/ultima

step 03-nn-tests 120 build-gpu/tests/nn_tests
for precision in fp32 fp16 bf16; do
  step "04-bench-nn-$precision" 60 "$ultima" bench nn --device cuda --precision "$precision" --blocks 10 \
    --channels 128 --se-channels 32 --batches 1,16,64,256,1024 --seconds 2
done
step 05-bench-mcts 60 "$ultima" bench mcts --net device=cuda,blocks=10,channels=128,se_channels=32 --threads 8 \
  --batch 32 --seconds 10
step 06-bench-selfplay 90 "$ultima" bench selfplay --device cuda --blocks 10 --channels 128 --se-channels 32 \
  --games 512 --parallel-games 512 --playouts 100 --mcts-batch 8 --max-batch 1024
for precision in fp32 bf16 fp16; do
  step "07-bench-train-$precision" 45 "$ultima" bench train --device cuda --precision "$precision" --blocks 10 \
    --channels 128 --se-channels 32 --batch-size 1024 --steps 30 --samples 20000
done
step 08-loop 330 "$ultima" loop --config configs/experiments/gpu-check.yaml --run-dir "$out/run"
"$ultima" status --run-dir "$out/run" > "$out/09-status.txt" 2>&1 || true
# The run's tables, logs and best model come back; its samples, games,
# checkpoints and other models stay behind.
rm -rf "$out/run/selfplay" "$out/run/games" "$out/run/checkpoints"
if [ -f "$out/run/models/best" ]; then
  keep=$(printf 'model-%06d.unn' "$(cat "$out/run/models/best")")
  find "$out/run/models" -name 'model-*.unn' ! -name "$keep" -delete
fi
# The machine's many cores, for the alpha-beta engine's Lazy SMP: nodes/s
# and depth by thread count (CPU only, about 35 s on 16 cores).
counts=1; for t in 2 4 8 16 32 64; do [ "$t" -le "$jobs" ] && counts="$counts,$t"; done
step 10-bench-smp 90 "$ultima" bench smp --threads "$counts" --seconds 1
echo "done; figures in $out" | tee -a "$summary"
