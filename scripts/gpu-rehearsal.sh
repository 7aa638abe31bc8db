#!/usr/bin/env bash
# Rehearses scripts/gpu-check.sh's build on a machine like the GPU machines
# this project may be lent: a container from debian:12 (scripts/image-check.sh
# makes one) with only a compiler, CMake, ninja and python3, plus Debian's
# LibTorch standing in for pip's (with libgloo-dev, the c10d headers pip's
# torch ships); none of the project's Debian libraries, no pkg-config, no
# network needed after this machine's apt-get. The tree and deps/debs
# (scripts/gpu-deps.sh fetch, run first when missing) are copied in; the
# libraries come from deps/debs alone, unpacked as gpu-check.sh does. Then
# the program and its tests are built there, and `ultima selfcheck`, the
# network tests on the CPU and a network bot's match run.
#
#   sudo scripts/gpu-rehearsal.sh
set -euo pipefail
cd "$(dirname "$0")/.."
export STORAGE_DRIVER=${STORAGE_DRIVER:-vfs}
[ -d deps/debs ] || bash scripts/gpu-deps.sh fetch
buildah inspect --type image docker.io/library/debian:12 > /dev/null 2>&1 ||
  { echo "gpu-rehearsal: no debian:12 image (scripts/image-check.sh makes one)" >&2; exit 1; }
work=$(mktemp -d /var/tmp/ultima-gpu-rehearsal.XXXXXX)
ctr=$(buildah from --pull=false docker.io/library/debian:12)
trap 'buildah rm "$ctr" > /dev/null 2>&1 || true; rm -rf "$work"' EXIT
echo "== a bare machine: compiler, CMake, ninja, python3, LibTorch"
buildah run --isolation chroot "$ctr" -- bash -c 'apt-get update -qq &&
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends build-essential cmake ninja-build \
    python3 libtorch-dev libgloo-dev libopenblas0-openmp > /dev/null' || { echo "gpu-rehearsal: apt-get failed" >&2; exit 1; }
mkdir -p "$work/src"
git ls-files -z --cached --others --exclude-standard | while IFS= read -r -d '' f; do
  [ -e "$f" ] && printf '%s\0' "$f"
done | tar --null -T - -cf - | tar -C "$work/src" -xf -
cp -r deps "$work/src/"
buildah copy "$ctr" "$work/src" /src > /dev/null
echo "== build with deps/debs alone"
buildah run --isolation chroot "$ctr" -- bash -c '
  set -euo pipefail
  cd /src
  for lib in spdlog yaml-cpp CLI11 nlohmann_json GTest; do
    if ls /usr/lib/x86_64-linux-gnu/cmake /usr/share/cmake* 2> /dev/null | grep -qi "^$lib"; then
      echo "the system has $lib: not a bare machine" >&2; exit 1
    fi
  done
  command -v pkg-config > /dev/null && { echo "the system has pkg-config: not a bare machine" >&2; exit 1; }
  source scripts/gpu-deps.sh unpack /opt/deps
  cmake -S . -B /tmp/b -G Ninja -DCMAKE_BUILD_TYPE=Release -DULTIMA_NATIVE=OFF \
    -DCMAKE_PREFIX_PATH="$ULTIMA_DEPS_PREFIX" > /tmp/configure.log 2>&1 || { tail -20 /tmp/configure.log; exit 1; }
  cmake --build /tmp/b -j "$(nproc)" > /tmp/build.log 2>&1 || { grep -E "error|Error" /tmp/build.log | head -20; exit 1; }
  /tmp/b/ultima selfcheck | tail -1
  /tmp/b/tests/nn_tests --gtest_brief=1 --gtest_filter="NnNetwork*:NnEncoding*:DataParallel*" | tail -1
  /tmp/b/ultima match --player1 net-m7 --player2 random --games 2 --max-plies 40 | head -4
'
echo "gpu-rehearsal: passed"
