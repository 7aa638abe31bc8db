#!/usr/bin/env bash
# Behaviour signatures of a build, for checking that a change changed no
# behaviour: perft node counts, a perft divide, the fixed-depth search's
# node-count signature, a fixed-seed ladder, and a deterministic tiny loop's
# generations.csv without its timing columns. Two builds with the same
# output behave the same on all of them.
#   scripts/signatures.sh [BUILD_DIR] > signatures.txt     (default build)
set -euo pipefail
cd "$(dirname "$0")/.."
ultima=${1:-build}/ultima
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "== bench perft"
"$ultima" bench perft 2>&1 | awk '$2 == "depth" { print $1, $2, $3, $4, $5 } $1 == "total" { print $1, $2, $3 }'
echo "== perft divide (cambridge, depth 3)"
"$ultima" perft --depth 3 --divide --rules cambridge
echo "== bench search"
"$ultima" bench search 2>&1 | sed -E 's/ +[0-9.]+ s +[0-9]+ nodes\/s//; s/ +seconds.*//'
echo "== ladder (4 games a pair, seed 1)"
"$ultima" ladder --games 4 --seed 1 --concurrency 2 2>&1 | sed -E 's/ +[0-9.]+ s$//'
echo "== tiny loop, deterministic (generations.csv without elapsed and rate columns)"
"$ultima" loop --config configs/experiments/tiny-deterministic.yaml --run-dir "$work/tiny" > /dev/null 2>&1
cut -d, -f1,3-12,15- "$work/tiny/generations.csv"
