#!/usr/bin/env bash
# Installs every Debian 12 package the project needs to build, test and train,
# on a bare machine (no compiler, no cmake). Run as root or with sudo.
set -euo pipefail

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

PACKAGES=(
  # toolchain
  build-essential cmake ninja-build pkg-config git ca-certificates
  # tests and benchmarks; clang and its runtime for the libFuzzer programs
  # (scripts/fuzz.sh)
  libgtest-dev libgmock-dev libbenchmark-dev clang libclang-rt-14-dev
  # the Kubernetes manifests' check (tests/cli/k8s_manifests_test.py); a
  # one-node Slurm for the batch scripts' test (tests/cli/slurm_test.sh)
  python3 python3-yaml slurm-wlm munge
  # pgrep/pkill for the tests that kill one rank of a trainer
  procps
  # command line, logging, config, data
  libcli11-dev libspdlog-dev libfmt-dev nlohmann-json3-dev libyaml-cpp-dev libzstd-dev
  # the web board's HTTP server (`ultima serve`) and its database, and the headless browser
  # that drives its page in the tests
  libcpp-httplib-dev libsqlite3-dev chromium chromium-driver python3-selenium
  # numerics and the LibTorch stack; libopenblas0-openmp keeps LibTorch off
  # the reference BLAS (5-28x slower), libgloo-dev provides the c10d headers
  libeigen3-dev libtorch-dev libopenblas0-openmp libgloo-dev
)

export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${PACKAGES[@]}"
