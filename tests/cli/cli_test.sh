#!/usr/bin/env bash
# The `ultima` program's exact output forms and its errors on bad input.
# usage: cli_test.sh PATH/TO/ultima
set -u
ultima=$1
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

expect_output() {  # expect_output "description" "expected stdout" args...
  local what=$1 expected=$2; shift 2
  local out; out=$("$ultima" "$@" 2>/dev/null); local rc=$?
  [ $rc -eq 0 ] || fail "$what: exit $rc"
  [ "$out" = "$expected" ] || fail "$what: got [$out], expected [$expected]"
}

expect_error() {  # expect_error "message part" args...
  local part=$1; shift
  local err; err=$("$ultima" "$@" 2>&1 >/dev/null); local rc=$?
  [ $rc -ne 0 ] || fail "'$*' exited 0"
  [ $rc -lt 128 ] || fail "'$*' crashed (exit $rc)"
  case "$err" in *"$part"*) ;; *) fail "'$*': error [$err] lacks [$part]";; esac
  [ "$(printf '%s\n' "$err" | grep -c .)" -le 2 ] || fail "'$*': error is not short: [$err]"
}

version=$(sed -n 's/^project(ultima VERSION \([0-9.]*\).*/\1/p' "$(dirname "$0")/../../CMakeLists.txt")
expect_output "version" "ultima $version" --version
expect_output "perft depth 3" "nodes 42762" perft --depth 3
# Every player-spec kind and key with its default, from --help and from the spec 'mcts:help'.
for args in "match --help" "match --player1 mcts:help --player2 novice"; do
  # shellcheck disable=SC2086
  out=$("$ultima" $args 2>&1) || fail "$args: exit $?"
  for word in "search:KEY=VALUE" "blunder_rate" "gumbel_c_scale" "default 1.745" "novice"; do
    case "$out" in *"$word"*) ;; *) fail "$args lacks [$word]";; esac
  done
done
expect_error "did you mean 'playouts'" match --player1 mcts:playout=3 --player2 novice
expect_output "perft startpos" "nodes 944" perft --depth 2 --fen startpos
expect_output "perft abbott1962" "nodes 42738" perft --depth 3 --rules abbott1962
expect_output "perft with a switch" "nodes 42738" perft --depth 3 \
  --rules abbott1963,leaper=single --fen "clxwkxli/pppppppp/8/8/8/8/PPPPPPPP/ILXWKXLC w 0 1"

divide=$("$ultima" perft --depth 2 --divide 2>/dev/null)
[ "$(printf '%s\n' "$divide" | wc -l)" -eq 33 ] || fail "divide: expected 32 moves and a total"
[ "$(printf '%s\n' "$divide" | tail -n 1)" = "nodes 944" ] || fail "divide: last line"
[ "$(printf '%s\n' "$divide" | head -n 1)" = "a2a3: 31" ] || fail "divide: first line [$(printf '%s\n' "$divide" | head -n 1)]"
sorted=$(printf '%s\n' "$divide" | head -n 32 | LC_ALL=C sort)
[ "$sorted" = "$(printf '%s\n' "$divide" | head -n 32)" ] || fail "divide: not sorted"

# A withdrawer move and a removal: 'moves' prints captures sorted, or '-'.
moves=$("$ultima" moves --fen "k7/8/8/3p4/3W4/8/1P6/2i4K w 0 1")
printf '%s\n' "$moves" | grep -qx "d4d1 d5" || fail "moves: withdrawal d4d1 d5 missing"
printf '%s\n' "$moves" | grep -qx "xb2 -" || fail "moves: removal xb2 missing"
[ "$moves" = "$(printf '%s\n' "$moves" | LC_ALL=C sort)" ] || fail "moves: not sorted"

# Under king capture a taken king is the game's end: White's pawn stays, yet
# 'moves' lists no move (it says the game is over) and perft counts nothing
# past it.
taken="8/8/8/8/8/8/k7/7P w 0 1"
expect_output "moves after a king is taken" "game over: king captured 0-1" moves --rules zillions --fen "$taken"
expect_output "perft after a king is taken" "nodes 0" perft --depth 2 --rules zillions --fen "$taken"
divide=$("$ultima" perft --depth 2 --divide --rules zillions --fen "8/8/8/8/8/1k6/K7/7P b 0 1" 2>/dev/null)
printf '%s\n' "$divide" | grep -qx "b3a2: 0" || fail "divide: king capture b3a2 not 0 in [$divide]"
printf '%s\n' "$divide" | grep -qx "b3b2: 19" || fail "divide: b3b2 not 19 in [$divide]"
expect_error "Black has no king yet White is to move" moves --rules zillions --fen "8/8/8/8/8/8/P7/3K4 w 0 1"

# A finished game is said as such by moves and eval: checkmate (Kc4-d5# of
# RULES.md 10.1), and bare kings (a draw).
mated="p7/8/8/3Kk3/5I2/3w4/8/8 b 0 2"
expect_output "moves at checkmate" "game over: checkmate 1-0" moves --fen "$mated"
expect_output "moves with bare kings" "game over: bare kings 1/2-1/2" moves --fen "3k4/8/8/8/8/8/8/3K4 w 0 1"
eval_over=$("$ultima" eval --fen "$mated" 2>/dev/null | tail -n 1)
[ "$eval_over" = "game over: checkmate 1-0" ] || fail "eval at checkmate: [$eval_over]"

# analyze: JSON lines in and out; answers carry the query's id and turn; a
# bad query is answered with its error and the next one still answered.
analysis=$(printf '%s\n' '{"id":"a","moves":["d2d5"],"analyze_turns":[0,1],"max_depth":2}' \
  '{"id":"b","fenn":"startpos"}' '{"id":"v","action":"query_version"}' | "$ultima" analyze --parallel 2)
[ "$(printf '%s\n' "$analysis" | grep -c '"final":true')" -eq 2 ] || fail "analyze: two final answers expected: [$analysis]"
printf '%s\n' "$analysis" | grep -q '"id":"a".*"turn":1\|"turn":1.*"id":"a"' || fail "analyze: no answer for turn 1"
printf '%s\n' "$analysis" | grep -q '^{"error":"unknown field .fenn. (did you mean .fen.?)","field":"fenn","id":"b"}$' \
  || fail "analyze: no error naming the id and the field: [$analysis]"
printf '%s\n' "$analysis" | grep -q "\"version\":\"$version\"" || fail "analyze: query_version"
# The one-shot form from the shell.
oneshot=$("$ultima" analyze --fen "6pk/5K1p/8/8/3W4/2p5/8/8 w 0 1" --depth 3 --multipv 2)
printf '%s\n' "$oneshot" | grep -q '^1\. d4g7  mate 1  wdl 1000 0 0  pv d4g7$' || fail "analyze --fen: [$oneshot]"
[ "$(printf '%s\n' "$oneshot" | grep -c '^[0-9]\. ')" -eq 2 ] || fail "analyze --fen: two lines expected"
"$ultima" analyze --fen startpos --depth 1 --json | grep -q '^{"final":true,"id":"shell",' || fail "analyze --json"
bench=$("$ultima" bench analyze --material --queries 3 --visits 20 --parallel 2) || fail "bench analyze: exit $?"
[ "$(printf '%s\n' "$bench" | grep -Ec '^ +[12] at once +3 answered ')" -eq 2 ] || fail "bench analyze: [$bench]"
solver=$("$ultima" bench solver --positions 2 --movetime 100) || fail "bench solver: exit $?"
printf '%s\n' "$solver" | grep -Eq '^mate in 1 +[0-9]+/2 proven wins' || fail "bench solver: [$solver]"
# With one playout no mate in two is proven (the scan is off): each is
# printed with a FEN that loads and its key move's prior rank and visits.
missed=$("$ultima" bench solver --positions 2 --playouts 1 --show-missed) || fail "bench solver --show-missed: exit $?"
printf '%s\n' "$missed" | grep -Eq '^mate in 2 +0/2 proven wins' || fail "bench solver --show-missed: [$missed]"
[ "$(printf '%s\n' "$missed" | grep -c '^  missed mate in 2: ')" -eq 2 ] || fail "show-missed: two misses: [$missed]"
[ "$(printf '%s\n' "$missed" | grep -Ec '^    [a-h][1-8][a-h][1-8][^ ]* +prior 0\.[0-9]+ \(rank [0-9]+ of [0-9]+\), [01] visits$')" -ge 2 ] \
  || fail "show-missed: a key move line per miss: [$missed]"
# Search settings as in a player spec; a bad key is named.
"$ultima" bench solver --positions 1 --playouts 50 --mcts cpuct=3.5,policy_temperature=1.4 | grep -Eq '^mate in 1 +[01]/1 ' \
  || fail "bench solver --mcts"
expect_error "unknown MCTS setting 'cpuctt'" bench solver --positions 1 --playouts 5 --mcts cpuctt=2
while IFS= read -r fen; do
  "$ultima" moves --fen "$fen" >/dev/null || fail "show-missed: the FEN [$fen] does not load"
done < <(printf '%s\n' "$missed" | sed -n 's/^  missed mate in 2: \(.*\) ([0-9]* moves, .*$/\1/p')
# --pgn: the final positions of a PGN file's games make the suite; the two
# mates in two above stay mates in two, the start position is skipped.
pgn_dir=$(mktemp -d)
{
  while IFS= read -r fen; do
    printf '[Event "t"]\n[Result "*"]\n[SetUp "1"]\n[FEN "%s"]\n\n*\n\n' "$fen"
  done < <(printf '%s\n' "$missed" | sed -n 's/^  missed mate in 2: \(.*\) ([0-9]* moves, .*$/\1/p')
  printf '[Event "t"]\n[Result "*"]\n\n*\n'
} > "$pgn_dir/mates.pgn"
from_pgn=$("$ultima" bench solver --pgn "$pgn_dir/mates.pgn" --playouts 1) || fail "bench solver --pgn: exit $?"
printf '%s\n' "$from_pgn" | grep -Eq '^bench solver: 0 mates in one, 2 in two from 1 PGN file, 1 final position without a mate in two skipped' \
  || fail "bench solver --pgn: [$from_pgn]"
printf '%s\n' "$from_pgn" | grep -Eq '^mate in 2 +0/2 proven wins' || fail "bench solver --pgn: [$from_pgn]"
expect_error "$pgn_dir/none.pgn" bench solver --pgn "$pgn_dir/none.pgn"
printf '[Event "t"]\n[FEN "not a fen"]\n\n*\n' > "$pgn_dir/bad.pgn"
expect_error "$pgn_dir/bad.pgn: game 1: FEN tag" bench solver --pgn "$pgn_dir/bad.pgn"
rm -rf "$pgn_dir"
expect_output "analyze --fen at checkmate" "game over: checkmate 1-0" analyze --fen "$mated"
expect_error "--moves: moves[0] 'a1a1'" analyze --fen startpos --moves a1a1
expect_error "--depth" analyze --fen startpos --depth 0
expect_error "--fen" analyze --depth 3

expect_error "unknown piece letter" perft --depth 1 --fen "4k3/8/8/8/8/8/8/3Q4 w 0 1"
expect_error "no side to move" moves --fen "4k3/8/8/8/8/8/8/3K4"
expect_error "unknown rule preset 'nope'" perft --depth 1 --rules nope
expect_error "unknown rule switch 'color'" perft --depth 1 --rules abbott1963,color=red
expect_error "unknown value 'triple'" moves --rules abbott1963,leaper=triple
expect_error "depth" perft
expect_error "unknown command 'frobnicate'" frobnicate
expect_error "" perft --depth -3

# match: a tiny random-vs-random match prints the final table; the same seed
# gives the same game records.
tmp=$(mktemp -d)
match=$("$ultima" match --player1 random --player2 random --games 4 --max-plies 20 --seed 5 --pgn "$tmp/a.pgn" 2>/dev/null) \
  || fail "match: exit $?"
printf '%s\n' "$match" | head -n 1 | grep -q '^match random (1) vs random (2): rules abbott1963, 2 openings' \
  || fail "match: header [$(printf '%s\n' "$match" | head -n 1)]"
printf '%s\n' "$match" | grep -Eq '^player +games +wins +draws +losses +score +Elo +95% interval$' || fail "match: table header"
printf '%s\n' "$match" | grep -Eq '^random \(1\) +4 +[0-9]+ +[0-9]+ +[0-9]+ +[0-9.]+% +[-+][0-9.inf]+ +\[' || fail "match: player 1 row"
printf '%s\n' "$match" | grep -Eq '^random \(2\) +4 ' || fail "match: player 2 row"
printf '%s\n' "$match" | grep -q '^ended by: max plies 4$' || fail "match: endings line"
[ "$(grep -c '^\[Variant "ultima"\]$' "$tmp/a.pgn")" -eq 4 ] || fail "match: 4 records with a Variant tag"
"$ultima" match --white random --black random --games 4 --max-plies 20 --seed 5 --concurrency 2 --pgn "$tmp/b.pgn" >/dev/null 2>&1
cmp -s "$tmp/a.pgn" "$tmp/b.pgn" || fail "match: same seed, different records"
printf 'clxwkxli/pppppppp/8/8/8/8/PPPPPPPP/ILXKWXLC w 0 1\n# a comment\nk7/8/8/8/8/8/8/Q6K w 0 1\n' >"$tmp/openings.fen"

# bench smp: one row per thread count, the first at a speed-up of 1.00x.
smp=$("$ultima" bench smp --threads 1,2 --seconds 0.05 2>&1) || fail "bench smp: exit $?"
[ "$(printf '%s\n' "$smp" | grep -cE '^[12] +[0-9]+ +[0-9.]+x +[0-9.]+$')" -eq 2 ] || fail "bench smp: [$smp]"
printf '%s\n' "$smp" | grep -qE '^1 +[0-9]+ +1\.00x ' || fail "bench smp: the first row is not 1.00x: [$smp]"
expect_error "--threads: Value 0 not in range" bench smp --threads 0
# bench smp --nnue: the header names the learned evaluation; a missing file is named.
"$ultima" bench smp --threads 1 --seconds 0.05 --nnue default 2>&1 | grep -q "learned evaluation" \
  || fail "bench smp --nnue default: no learned evaluation in the header"
expect_error "cannot read nosuch.unnue" bench smp --threads 1 --nnue nosuch.unnue
# bench mcts --net material: the network-free evaluator, no network module needed.
mc=$("$ultima" bench mcts --net material --batch 8 --seconds 0.1 2>&1) || fail "bench mcts --net material: exit $?"
printf '%s\n' "$mc" | grep -qE '^mcts +[0-9]+ playouts/s' || fail "bench mcts --net material: [$mc]"

# match --resume: a 4-game match grown to 8 from its record file ends with the
# 8-game match's records; a SIGTERM ends a match with its finished games
# written, and --resume goes on from them.
"$ultima" match --player1 random --player2 novice --games 8 --max-plies 20 --seed 5 --pgn "$tmp/whole.pgn" >/dev/null 2>&1
"$ultima" match --player1 random --player2 novice --games 4 --max-plies 20 --seed 5 --pgn "$tmp/grown.pgn" >/dev/null 2>&1
resumed=$("$ultima" match --player1 random --player2 novice --games 8 --max-plies 20 --seed 5 --pgn "$tmp/grown.pgn" \
  --resume 2>&1 >/dev/null) || fail "match --resume: exit $?"
case "$resumed" in *"resuming: the 4 games of $tmp/grown.pgn count as played"*) ;; *) fail "match --resume: [$resumed]";; esac
cmp -s "$tmp/whole.pgn" "$tmp/grown.pgn" || fail "match --resume: the grown match's records differ from the whole match's"
"$ultima" match --player1 random --player2 random --games 1000000 --pgn "$tmp/long.pgn" --pgn-every 0 >/dev/null \
  2>"$tmp/long.err" &
long=$!
for _ in $(seq 100); do
  sleep 0.1
  grep -q "games/s" "$tmp/long.err" && break  # the progress line: games are being played
done
kill -TERM "$long"
wait "$long" || fail "match stopped by SIGTERM: exit $?"
grep -q "stopped by a signal: [0-9]* of 1000000 games counted; --resume" "$tmp/long.err" || fail "match stopped by SIGTERM: [$(cat "$tmp/long.err")]"
played=$(grep -c '^\[Round ' "$tmp/long.pgn")
[ "$played" -ge 1 ] || fail "match stopped by SIGTERM: no game written"
"$ultima" match --player1 random --player2 random --games $((played + 2)) --pgn "$tmp/long.pgn" --resume >/dev/null 2>&1 \
  || fail "match --resume after SIGTERM: exit $?"
[ "$(grep -c '^\[Round ' "$tmp/long.pgn")" -eq $((played + 2)) ] || fail "match --resume after SIGTERM: not $((played + 2)) games"
expect_error "--resume needs --pgn" match --player1 random --player2 random --resume
expect_error "resumed game (Round \"1\"): played by 'random (1)' (White) and 'random (2)' (Black), but this match's players are 'random' and 'novice'" \
  match --player1 random --player2 novice --games $((played + 2)) --pgn "$tmp/long.pgn" --resume

# Another UCI program as a player: this one, through its own uci command.
uci_match=$("$ultima" match --player1 "uci:depth=1:$ultima uci" --player2 random --games 2 --max-plies 10 2>/dev/null) \
  || fail "match against a uci: engine: exit $?"
printf '%s\n' "$uci_match" | grep -Eq '^Ultima [0-9.]+ +2 ' || fail "match against a uci: engine: [$uci_match]"
expect_error "uci engine '/nonexistent/engine': it exited with status 127" match --player1 "uci:/nonexistent/engine" --player2 random
expect_error "--player1 'nope': " match --player1 nope --player2 random
expect_error "openings.fen', line 3: FEN placement has an unknown piece letter" match --player1 random --player2 random --openings "$tmp/openings.fen"
expect_error "cannot read openings file" match --player1 random --player2 random --openings "$tmp/missing.fen"
expect_error "MIN is above MAX" match --player1 random --player2 random --opening-plies 5-2
expect_error "--games must be at least 1" match --player1 random --player2 random --games 0
expect_error "elo0 must be below elo1" match --player1 random --player2 random --sprt 5,0

# The self-play / training commands on bad input.
configs=$(cd "$(dirname "$0")/../../configs" && pwd)
expect_error "config: cannot read $tmp/none.yaml" loop --config "$tmp/none.yaml" --run-dir "$tmp/run"
printf 'selfplay:\n  parallel_games: many\n' > "$tmp/bad.yaml"
expect_error "selfplay.parallel_games must be an integer, not 'many'" loop --config "$tmp/bad.yaml" --run-dir "$tmp/run"
printf 'selfplay:\n  batch: 0\n' > "$tmp/bad.yaml"
expect_error "selfplay.batch has a bad value: expected an integer from 1 to 1024, got '0'" loop --config "$tmp/bad.yaml" --run-dir "$tmp/run"
printf 'selfplay:\n  parallel_game: 4\n' > "$tmp/bad.yaml"
expect_error "did you mean 'parallel_games'?" loop --config "$tmp/bad.yaml" --run-dir "$tmp/run"
printf 'inference:\n  device: gpu\n' > "$tmp/bad.yaml"
expect_error "inference.device must be cpu, cuda or cuda:N, not 'gpu'" loop --config "$tmp/bad.yaml" --run-dir "$tmp/run"
printf 'inference:\n  precision: fp8\n' > "$tmp/bad.yaml"
expect_error "inference.precision must be auto, fp32, fp16 or bf16, not 'fp8'" loop --config "$tmp/bad.yaml" --run-dir "$tmp/run"
printf 'training:\n  optimizer: adam\n' > "$tmp/bad.yaml"
expect_error "optimizer must be sgd or adamw, not 'adam'" loop --config "$tmp/bad.yaml" --run-dir "$tmp/run"
# Workers and trainers join a run; they never create one.
expect_error "was never created: create it with ultima init" train --run-dir "$tmp/fresh1" --config "$configs/tiny.yaml"
[ -e "$tmp/fresh1" ] && fail "a refused train left $tmp/fresh1 behind"
expect_error "was never created" selfplay --run-dir "$tmp/fresh2" --config "$configs/tiny.yaml" --games 1
[ -e "$tmp/fresh2" ] && fail "a refused selfplay left $tmp/fresh2 behind"
expect_error "was never created" status --run-dir "$tmp/fresh3"
# A refused init creates nothing either.
printf 'selfplay:\n  batch: 0\n' > "$tmp/bad.yaml"
expect_error "selfplay.batch" init --run-dir "$tmp/fresh4" --config "$tmp/bad.yaml"
[ -e "$tmp/fresh4" ] && fail "a refused init left $tmp/fresh4 behind"
# These need the network module (a build without LibTorch, such as the
# sanitizer builds, has none: they then expect its clear error instead).
if [ -e "$(dirname "$ultima")/libultima_nn.so" ]; then
  "$ultima" init --run-dir "$tmp/run" --config "$configs/tiny.yaml" > /dev/null || fail "init failed"
  [ -e "$tmp/run/models/model-000000.unn" ] || fail "init made no model 0"
  "$ultima" init --run-dir "$tmp/run" --config "$configs/tiny.yaml" > /dev/null || fail "init again failed"
  expect_error "no samples in" train --run-dir "$tmp/run"
  expect_error "model-000005.unn" selfplay --run-dir "$tmp/run" --model 5 --games 1
  expect_error "the tag may hold letters, digits and _ only" selfplay --run-dir "$tmp/run" --tag "a b"
  expect_error "--model: 'x' is not best, latest or a version number" selfplay --run-dir "$tmp/run" --model x
  # One worker per tag, one trainer per run: a second one is refused while the
  # first lives, and a dead one's lock is taken over with a warning.
  "$ultima" selfplay --run-dir "$tmp/run" --tag w1 --watch > /dev/null 2>&1 &
  worker=$!
  for _ in $(seq 100); do [ -e "$tmp/run/locks/worker-w1.lock" ] && break; sleep 0.1; done
  [ -e "$tmp/run/locks/worker-w1.lock" ] || fail "a worker holds no lock file"
  expect_error "the role worker-w1 of $tmp/run is held by pid $worker" selfplay --run-dir "$tmp/run" --tag w1 --games 1
  status=$("$ultima" status --run-dir "$tmp/run") || fail "status failed"
  case "$status" in *"worker-w1"*"alive"*"pid $worker"*) ;; *) fail "status does not show the live worker: [$status]";; esac
  kill -9 "$worker"; wait "$worker" 2> /dev/null
  case "$("$ultima" status --run-dir "$tmp/run")" in *"worker-w1"*"stale"*) ;; *) fail "status does not show the dead worker as stale";; esac
  "$ultima" selfplay --run-dir "$tmp/run" --tag w1 --games 1 > /dev/null 2> "$tmp/takeover.log" ||
    { cat "$tmp/takeover.log"; fail "the dead worker's tag was not taken over"; }
  grep -q "took over the stale role worker-w1 (pid $worker" "$tmp/takeover.log" || fail "no warning on taking over a stale tag"
  [ -e "$tmp/run/locks/worker-w1.lock" ] && fail "a finished worker left its lock"
  # --tactics: proven mates from random play as TAG-mates shards, each a
  # mate the exact search confirms from the game record; a repeat adds none.
  "$ultima" selfplay --run-dir "$tmp/run" --tactics --tag tx --games 3 > /dev/null 2> "$tmp/tx.log" ||
    { cat "$tmp/tx.log"; fail "selfplay --tactics"; }
  ls "$tmp/run/selfplay" | grep -q '^tx-mates-000000\.shard$' || fail "selfplay --tactics wrote no tx-mates shard"
  tx_sum=$(cat "$tmp/run/selfplay"/tx-mates-* | cksum)
  tx_mates=$("$ultima" bench solver --pgn "$tmp/run/games"/tx-mates-*.pgn --playouts 1) || fail "bench solver on --tactics games"
  printf '%s\n' "$tx_mates" | grep -Eq '^bench solver: [0-3] mates in one, [0-3] in two from [0-9]+ PGN files?, 0 final positions' \
    || fail "selfplay --tactics: its positions are not all mates in one or two: [$tx_mates]"
  tx_counts=$(printf '%s\n' "$tx_mates" | sed -nE 's/^bench solver: ([0-9]+) mates in one, ([0-9]+) in two.*/\1 \2/p')
  [ "$(( ${tx_counts% *} + ${tx_counts#* } ))" = 3 ] || fail "selfplay --tactics: not 3 mates: [$tx_mates]"
  "$ultima" selfplay --run-dir "$tmp/run" --tactics --tag tx --games 3 > /dev/null 2>&1 || fail "selfplay --tactics again"
  [ "$(cat "$tmp/run/selfplay"/tx-mates-* | cksum)" = "$tx_sum" ] || fail "a repeated selfplay --tactics changed its shards"
  expect_error "give --games, or tactics.positions" selfplay --run-dir "$tmp/run" --tactics
  expect_error "--watch excludes --tactics" selfplay --run-dir "$tmp/run" --tactics --watch --games 1
  # A network that reads the tactics planes (network.input_planes: 33): made
  # by init, trained on those mates, and searched with.
  printf 'base: %s\nnetwork:\n  input_planes: 33\n' "$configs/tiny.yaml" > "$tmp/planes.yaml"
  "$ultima" init --run-dir "$tmp/planes" --config "$tmp/planes.yaml" > /dev/null || fail "init with input_planes 33"
  header=$(head -c 300 "$tmp/planes/models/model-000000.unn" | tr -d '\000')
  case "$header" in *$'\nencoding 2\n'*$'\ninput_planes 33\n'*) ;; *) fail "model 0 does not read encoding 2: [$header]";; esac
  cp "$tmp/run/selfplay"/tx-mates-* "$tmp/planes/selfplay/"
  "$ultima" train --run-dir "$tmp/planes" --steps 2 > /dev/null 2> "$tmp/planes.log" ||
    { cat "$tmp/planes.log"; fail "training a 33-plane network"; }
  planes_bench=$("$ultima" bench solver --positions 1 --playouts 16 --net "weights=$tmp/planes/models/model-000001.unn") ||
    fail "bench solver with a 33-plane network"
  case "$planes_bench" in *"mate in 2"*) ;; *) fail "bench solver with a 33-plane network: [$planes_bench]";; esac
  head -c 300 "$tmp/run/models/model-000000.unn" > "$tmp/short.unn" && mv "$tmp/short.unn" "$tmp/run/models/model-000000.unn"
  expect_error "model-000000.unn: truncated" selfplay --run-dir "$tmp/run" --games 2
  # bench selfplay measures the main job's own self-play (its network,
  # planes, Gumbel root and mate scan) unless told otherwise.
  selfplay=$("$ultima" bench selfplay --games 2 --parallel-games 2 --max-plies 12) || fail "bench selfplay: exit $?"
  printf '%s\n' "$selfplay" | grep -q "^bench selfplay (the main job's settings): net 4x32 se8, 33 input planes .*Gumbel root, mate scan on" \
    || fail "bench selfplay: not the main job's settings: [$selfplay]"
  printf '%s\n' "$selfplay" | grep -Eq '^selfplay: 2 games, ' || fail "bench selfplay: [$selfplay]"
  "$ultima" bench selfplay --games 1 --parallel-games 1 --max-plies 6 --puct --no-mate-scan --input-planes 25 |
    grep -q ", 25 input planes .*PUCT root, mate scan off" || fail "bench selfplay --puct --no-mate-scan --input-planes 25"
  expect_error "--input-planes reads 30 input planes" bench selfplay --input-planes 30
else
  expect_error "libultima_nn.so does not exist" init --run-dir "$tmp/run" --config "$configs/tiny.yaml"
  expect_error "libultima_nn.so does not exist" bench selfplay --games 1
fi
# Puzzles: a small extraction checks out and shows; a malformed puzzle file
# is refused with its line named; an unknown id is an error.
"$ultima" puzzles extract --white novice --black beginner --games 2 --out "$tmp/p.jsonl" > "$tmp/p.log" 2>&1 ||
  { cat "$tmp/p.log"; fail "puzzles extract"; }
grep -q "puzzles: .* written to" "$tmp/p.log" || fail "puzzles extract: no summary line"
if [ -s "$tmp/p.jsonl" ]; then
  "$ultima" puzzles check "$tmp/p.jsonl" > /dev/null 2>&1 || fail "puzzles check of a fresh extraction"
  shown=$("$ultima" puzzles show P00001 --file "$tmp/p.jsonl")
  grep -q "^solution " <<< "$shown" || fail "puzzles show: $shown"
fi
{ head -n 1 "$tmp/p.jsonl"; echo '{"id":"x"}'; } > "$tmp/bad.jsonl"
expect_error "bad.jsonl line 2" puzzles check "$tmp/bad.jsonl"
expect_error "no puzzle 'nosuch'" puzzles show nosuch --file "$tmp/p.jsonl"
# Rating a file again writes what the extraction wrote (the same seeded
# runs), in place; --existing keeps a file's puzzles byte for byte and
# numbers the new ones after them.
cp "$tmp/p.jsonl" "$tmp/r.jsonl"
"$ultima" puzzles rate --in "$tmp/r.jsonl" --out "$tmp/r.jsonl" > /dev/null 2>&1 || fail "puzzles rate"
cmp -s "$tmp/p.jsonl" "$tmp/r.jsonl" || fail "puzzles rate changed a freshly rated file"
"$ultima" puzzles extract --existing "$tmp/p.jsonl" --white beginner --black novice --games 2 --seed 9 \
  --out "$tmp/q.jsonl" > /dev/null 2>&1 || fail "puzzles extract --existing"
n=$(grep -c . "$tmp/p.jsonl")
head -n "$n" "$tmp/q.jsonl" | cmp -s - "$tmp/p.jsonl" || fail "puzzles extract --existing changed the kept puzzles"
if [ "$(grep -c . "$tmp/q.jsonl")" -gt "$n" ]; then
  next=$(printf 'P%05d' $((n + 1)))
  sed -n "$((n + 1))p" "$tmp/q.jsonl" | grep -q "\"id\":\"$next\"" || fail "puzzles extract --existing: the new ids do not follow"
fi
expect_error "unknown tag 'fork'" puzzles extract --white novice --black beginner --only-tag fork --out "$tmp/x.jsonl"
expect_error "--tagged-moves-only needs --only-tag" puzzles extract --white novice --black beginner \
  --tagged-moves-only --out "$tmp/x.jsonl"
expect_error "nosuch.jsonl" puzzles rate --in "$tmp/nosuch.jsonl" --out "$tmp/x.jsonl"
# The learned evaluation: a small set of positions, a network from them,
# its use by a search player, and bad files and keys named.
"$ultima" nnue data --out "$tmp/g.data" --games 3 --nodes 300 --concurrency 2 > /dev/null 2>&1 \
  || fail "nnue data failed"
printf 'train:\n  epochs: 2\n  batch: 64\n' > "$tmp/recipe.yaml"
"$ultima" nnue train --data "$tmp/g.data" --out "$tmp/n.unnue" --config "$tmp/recipe.yaml" > /dev/null 2>&1 \
  || fail "nnue train --data failed"
"$ultima" nnue eval --net "$tmp/n.unnue" | grep -q "^features: pieces-frozen$" || fail "nnue eval: no feature set"
"$ultima" match --player1 "search:nodes=200,nnue=$tmp/n.unnue" --player2 "search:nodes=200" --games 2 2>&1 \
  | grep -q "^games 2/2" || fail "a match with nnue=FILE did not play its two games"
expect_error "$tmp/none.unnue" nnue eval --net "$tmp/none.unnue"
head -c 100 "$tmp/n.unnue" > "$tmp/cut.unnue"
expect_error "truncated network file" match --player1 "search:nodes=200,nnue=$tmp/cut.unnue" --player2 random --games 2
head -c 30 "$tmp/g.data" > "$tmp/cut.data"
expect_error "truncated record file" nnue train --data "$tmp/cut.data" --out "$tmp/x.unnue"
printf 'train:\n  epoch: 2\n' > "$tmp/bad.yaml"
expect_error "unknown key 'train.epoch'" nnue train --data "$tmp/g.data" --out "$tmp/x.unnue" --config "$tmp/bad.yaml"
expect_error "give --run-dir, or --data and --out" nnue train
# serve reads --weights before it listens: a missing or damaged network
# stops it at once, naming the file (a server that listened instead is
# ended by the timeout and fails here).
printf 'not a network' > "$tmp/garbage.unn"
for weights in "$tmp/no-such.unn" "$tmp/garbage.unn"; do
  err=$(timeout 60 "$ultima" serve --port 0 --weights "$weights" 2>&1 >/dev/null); rc=$?
  [ $rc -ne 0 ] && [ $rc -ne 124 ] && [ $rc -lt 128 ] || fail "serve --weights $weights: exit $rc"
  case "$err" in *"--weights '$weights'"*) ;; *) fail "serve --weights $weights: error [$err]";; esac
done
rm -rf "$tmp"

if [ $failures -eq 0 ]; then echo "cli_test: all passed"; else echo "cli_test: $failures failed"; exit 1; fi
