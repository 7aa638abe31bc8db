#!/usr/bin/env bash
# Does a second search thread buy strength? `Threads 2` against `Threads 1`
# of the same program at the same time per move, as two UCI engines under
# `ultima match`, until an SPRT decides (or GAMES are played). One game at
# a time: the two-thread engine has both cores while it thinks and the
# other waits (no pondering), so both get the same wall-clock time.
#
# The figure means something only on an otherwise idle machine: a build or
# a fuzzer on one core takes the second thread's core away.
#
# The test can be run a piece at a time: a SIGINT/SIGTERM (or `timeout`)
# stops it with its finished games in OUT/games.pgn, and running the script
# again with the same arguments goes on from them (ultima match --resume).
# Delete OUT (SMP_OUT, default BUILD_DIR/smp-sprt) to start a new test.
#
# usage: scripts/smp-sprt.sh [BUILD_DIR (build)] [MOVETIME_MS (200)] [GAMES (2000)] [ELO0,ELO1 (0,10)] [THREADS (2)]
# e.g.   scripts/smp-sprt.sh build 200 2000 0,10      # the check of issue 18
#        scripts/smp-sprt.sh build 50 8 0,10          # a sanity run: plays, proves nothing
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
movetime=${2:-200}
games=${3:-2000}
bounds=${4:-0,10}
threads=${5:-2}
ultima="$build/ultima"
[ -x "$ultima" ] || { echo "no $ultima: build the program first (cmake --build $build)" >&2; exit 1; }
out="${SMP_OUT:-$build/smp-sprt}"
mkdir -p "$out"

engine() {  # engine THREADS: a player spec for `ultima uci` with THREADS threads
  echo "uci:movetime=$movetime,option.Threads=$1,option.Hash=64:$ultima uci"
}
echo "Threads $threads vs Threads 1, $movetime ms a move, up to $games games, SPRT elo0,elo1 = $bounds"
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
# A SIGINT/SIGTERM sent to the whole process group (Ctrl-C, `timeout`) is
# for the match, which then ends its games and prints its table: the script
# waits for it, and tee ignores the signal so that the table still reaches
# the terminal and result.txt.
trap 'echo "signal: the match is writing its finished games" >&2' INT TERM
status=0
"$ultima" match --player1 "$(engine "$threads")" --player2 "$(engine 1)" \
  --games "$games" --concurrency 1 --seed 1 --sprt "$bounds" --pgn "$out/games.pgn" --pgn-every 1 --resume \
  | (trap '' INT TERM; exec tee "$out/result.txt") || status=$?
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
exit "$status"
