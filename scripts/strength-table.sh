#!/usr/bin/env bash
# Strength at equal time: every engine against the alpha-beta search with
# the hand-written evaluation (one thread), at each thinking time, as an
# SPRT (elo0 0, elo1 20) of at most --games games; a lopsided pair stops
# early. Writes OUT/table.csv and OUT/table.md (one row per engine and
# time: games, W/D/L, score, Elo with its 95% interval, the SPRT's verdict)
# and keeps each pair's games in OUT/ENGINE-MSms.pgn, so a stopped table
# resumes where it stopped. Meant for an otherwise idle machine: pairs with
# a two-thread engine play one game at a time, the others two.
#
#   scripts/strength-table.sh [--out DIR] [--movetimes 100,1000] [--games 400]
#                             [--only ab-nnue,mcts-material,...] [--net FILE]
#
# Engines (ENGINE): ab-nnue (the shipped learned evaluation), ab-hand-2t and
# ab-nnue-2t (two threads), mcts-material (the network-free evaluator),
# mcts-net-eigen and mcts-net-torch (the tree search with --net on each
# backend; default: the catalogue's strongest network bot's file).
set -euo pipefail
cd "$(dirname "$0")/.."
ultima=${ULTIMA:-build/ultima}
out=runs/strength-table
movetimes=100,1000
games=400
only=""
net=configs/bots/nets/net-m15.unn
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out=$2; shift 2 ;;
    --movetimes) movetimes=$2; shift 2 ;;
    --games) games=$2; shift 2 ;;
    --only) only=$2; shift 2 ;;
    --net) net=$2; shift 2 ;;
    -h|--help) sed -n '2,18p' "$0"; exit 0 ;;
    *) echo "strength-table.sh: unknown argument '$1' (--help lists them)" >&2; exit 2 ;;
  esac
done
[ -x "$ultima" ] || { echo "strength-table.sh: no program at $ultima (build first, or set ULTIMA)" >&2; exit 1; }
[ -f "$net" ] || { echo "strength-table.sh: no network file '$net' (--net FILE)" >&2; exit 1; }
mkdir -p "$out"

# The spec of an engine at a thinking time, and the games it plays at once.
spec() {
  local t=$1
  case "$2" in
    ab-nnue) echo "search:movetime_ms=$t,nnue=default" ;;
    ab-hand-2t) echo "search:movetime_ms=$t,threads=2" ;;
    ab-nnue-2t) echo "search:movetime_ms=$t,threads=2,nnue=default" ;;
    mcts-material) echo "mcts:movetime=$t,mate_scan=true" ;;
    mcts-net-eigen) echo "mcts:weights=$net,backend=eigen,movetime=$t,mate_scan=true" ;;
    mcts-net-torch) echo "mcts:weights=$net,backend=torch,movetime=$t,mate_scan=true" ;;
    *) echo "strength-table.sh: unknown engine '$2'" >&2; exit 2 ;;
  esac
}
concurrency() { case "$1" in *-2t) echo 1 ;; *) echo 2 ;; esac; }

engines=(ab-nnue ab-hand-2t ab-nnue-2t mcts-material mcts-net-eigen mcts-net-torch)
if [ -n "$only" ]; then IFS=, read -r -a engines <<< "$only"; fi
IFS=, read -r -a times <<< "$movetimes"

echo "engine,movetime_ms,games,wins,draws,losses,score,elo,elo_low,elo_high,sprt" > "$out/table.csv.tmp"
for t in "${times[@]}"; do
  for e in "${engines[@]}"; do
    player=$(spec "$t" "$e")
    reference="search:movetime_ms=$t"
    pgn="$out/$e-${t}ms.pgn"
    log="$out/$e-${t}ms.log"
    resume=()
    [ -s "$pgn" ] && resume=(--resume)
    echo "== $e at $t ms: $player against $reference"
    "$ultima" match --player1 "$player" --player2 "$reference" --games "$games" \
      --concurrency "$(concurrency "$e")" --opening-plies 8 --seed 7 --sprt 0,20 \
      --pgn "$pgn" "${resume[@]}" 2>&1 | tee "$log" | grep -v '^games ' || true
    # Player 1's row of the result table (the line after its header); its
    # name may hold spaces, so the figures are read from the end:
    # games wins draws losses score Elo [low, high].
    row=$(awk '/95% interval/ { getline; print; exit }' "$log")
    if [ -z "$row" ]; then
      echo "strength-table.sh: no result for $e at $t ms (see $log)" >&2
      exit 1
    fi
    read -r g w d l score elo low high <<< "$(echo "$row" | awk '{ n = NF; print $(n-7), $(n-6), $(n-5), $(n-4), $(n-3), $(n-2), $(n-1), $n }' | tr -d '[],%+')"
    verdict=$(grep '^SPRT elo0' "$log" | tail -1 | sed -E 's/.*\]: //' || true)
    echo "$e,$t,$g,$w,$d,$l,$score,$elo,$low,$high,${verdict:-none}" >> "$out/table.csv.tmp"
  done
done
mv "$out/table.csv.tmp" "$out/table.csv"

{
  echo "| engine | ms a move | games | W/D/L | score | Elo against ab-hand | 95% interval | SPRT(0,20) |"
  echo "|---|---|---|---|---|---|---|---|"
  tail -n +2 "$out/table.csv" | while IFS=, read -r e t g w d l score elo low high verdict; do
    echo "| $e | $t | $g | $w/$d/$l | $score% | $elo | [$low, $high] | $verdict |"
  done
} > "$out/table.md"
cat "$out/table.md"
