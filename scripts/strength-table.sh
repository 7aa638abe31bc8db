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
#                             [--rates ab-hand=N,ENGINE=N,...]
#
# Engines (ENGINE): ab-nnue (the shipped learned evaluation), ab-hand-2t and
# ab-nnue-2t (two threads), mcts-material (the network-free evaluator),
# mcts-net-eigen and mcts-net-torch (the tree search with --net on each
# backend; default: the catalogue's strongest network bot's file).
# --rates: time fixed in nodes instead, for a machine that cannot be kept
# idle: each engine's nodes (alpha-beta) or playouts (tree search) a second,
# measured on the idle machine, and ab-hand's for the reference; a move of
# T ms gets rate x T / 1000 of them. Games go to OUT/ENGINE-Tms-nodes.pgn.
# `ultima bench smp` gives the alpha-beta engines' rates; docs/benchmarks.md
# says why the tree search's are not yet measured this way.
set -euo pipefail
shopt -s inherit_errexit
cd "$(dirname "$0")/.."
ultima=${ULTIMA:-build/ultima}
out=runs/strength-table
movetimes=100,1000
games=400
only=""
net=configs/bots/nets/net-m15.unn
rates=""
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out=$2; shift 2 ;;
    --movetimes) movetimes=$2; shift 2 ;;
    --games) games=$2; shift 2 ;;
    --only) only=$2; shift 2 ;;
    --net) net=$2; shift 2 ;;
    --rates) rates=$2; shift 2 ;;
    -h|--help) sed -n '2,24p' "$0"; exit 0 ;;
    *) echo "strength-table.sh: unknown argument '$1' (--help lists them)" >&2; exit 2 ;;
  esac
done
[ -x "$ultima" ] || { echo "strength-table.sh: no program at $ultima (build first, or set ULTIMA)" >&2; exit 1; }
[ -f "$net" ] || { echo "strength-table.sh: no network file '$net' (--net FILE)" >&2; exit 1; }
mkdir -p "$out"

# With --rates, an engine's nodes or playouts for a move of $1 ms.
budget() {
  local rate
  rate=$(tr ',' '\n' <<< "$rates" | awk -F= -v e="$2" '$1 == e { print $2 }')
  [[ "$rate" =~ ^[0-9]+$ ]] || { echo "strength-table.sh: --rates has no whole number for '$2'" >&2; exit 2; }
  echo $((rate * $1 / 1000))
}

# The spec of an engine at a thinking time (the reference: ab-hand), and
# the games it plays at once.
spec() {
  local t=$1 ab mc
  if [ -n "$rates" ]; then
    ab="nodes=$(budget "$t" "$2")"
    mc="playouts=${ab#nodes=}"
  else
    ab="movetime_ms=$t" mc="movetime=$t"
  fi
  case "$2" in
    ab-hand) echo "search:$ab" ;;
    ab-nnue) echo "search:$ab,nnue=default" ;;
    ab-hand-2t) echo "search:$ab,threads=2" ;;
    ab-nnue-2t) echo "search:$ab,threads=2,nnue=default" ;;
    mcts-material) echo "mcts:$mc,mate_scan=true" ;;
    mcts-net-eigen) echo "mcts:weights=$net,backend=eigen,$mc,mate_scan=true" ;;
    mcts-net-torch) echo "mcts:weights=$net,backend=torch,$mc,mate_scan=true" ;;
    *) echo "strength-table.sh: unknown engine '$2'" >&2; exit 2 ;;
  esac
}
# Fixed nodes do not depend on the load, so every pair then plays two at once.
concurrency() { case "$1" in *-2t) [ -n "$rates" ] && echo 2 || echo 1 ;; *) echo 2 ;; esac; }

engines=(ab-nnue ab-hand-2t ab-nnue-2t mcts-material mcts-net-eigen mcts-net-torch)
if [ -n "$only" ]; then IFS=, read -r -a engines <<< "$only"; fi
IFS=, read -r -a times <<< "$movetimes"

echo "engine,movetime_ms,games,wins,draws,losses,score,elo,elo_low,elo_high,sprt" > "$out/table.csv.tmp"
for t in "${times[@]}"; do
  for e in "${engines[@]}"; do
    player=$(spec "$t" "$e")
    reference=$(spec "$t" ab-hand)
    name="$e-${t}ms${rates:+-nodes}"
    pgn="$out/$name.pgn"
    log="$out/$name.log"
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
    echo "$e,$t${rates:+ (nodes)},$g,$w,$d,$l,$score,$elo,$low,$high,${verdict:-none}" >> "$out/table.csv.tmp"
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
