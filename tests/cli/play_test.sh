#!/usr/bin/env bash
# `ultima play` as a person uses it, with the moves piped in: the game ends
# at the end of input or at a mate, the record file is written, and bad
# options are short errors.
# usage: play_test.sh PATH/TO/ultima
set -u
ultima=$(realpath "$1")
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1

# Two moves, a bad one between them, then the end of input: the game is
# saved unfinished with both moves and the bot's replies.
out=$(printf 'd2d5\nd2d9\nPb2-b4\n' | "$ultima" play --bot random --seed 3 --pgn game.pgn 2>&1)
rc=$?
[ $rc -eq 0 ] || fail "piped game: exit $rc: $out"
case "$out" in *"squares are a-h followed by 1-8"*) ;; *) fail "piped game: no message for d2d9";; esac
case "$out" in *"End of input."*"saved unfinished in game.pgn"*) ;; *) fail "piped game: no end-of-input message";; esac
grep -qx '\[Result "\*"\]' game.pgn || fail "piped game: Result is not *"
grep -qx '\[Black "random"\]' game.pgn || fail "piped game: the bot is not Black"
grep -Eq '^1\. d2d5 [a-h][1-8][a-h][1-8] 2\. b2b4 [a-h][1-8][a-h][1-8] \*$' game.pgn \
  || fail "piped game: moves line [$(grep '^1\.' game.pgn)]"
# The same seed gives the same replies.
printf 'd2d5\nd2d9\nPb2-b4\n' | "$ultima" play --bot random --seed 3 --pgn again.pgn >/dev/null 2>&1
[ "$(grep '^1\.' game.pgn)" = "$(grep '^1\.' again.pgn)" ] || fail "same seed, different replies"
grep -qx '\[Seed "3"\]' game.pgn || fail "the record lacks its Seed tag"
# Without --seed each game draws its own, says it and records it; replayed
# with that seed the bot answers as it did.
for name in drawn1 drawn2; do
  printf 'd2d5\nb2b4\nf2f5\n' | "$ultima" play --bot random --pgn $name.pgn >/dev/null 2>&1
done
seed1=$(sed -n 's/^\[Seed "\([0-9]*\)"\]$/\1/p' drawn1.pgn)
seed2=$(sed -n 's/^\[Seed "\([0-9]*\)"\]$/\1/p' drawn2.pgn)
[ -n "$seed1" ] && [ -n "$seed2" ] || fail "drawn seeds not recorded: [$seed1] [$seed2]"
[ "$seed1" != "$seed2" ] || fail "two games without --seed drew the same seed $seed1"
printf 'd2d5\nb2b4\nf2f5\n' | "$ultima" play --bot random --seed "$seed1" --pgn replay.pgn >/dev/null 2>&1
[ "$(grep '^1\.' drawn1.pgn)" = "$(grep '^1\.' replay.pgn)" ] || fail "the recorded seed does not replay the game"

# A mate ends the game with its result, in the file too.
out=$(printf 'c1c6\n' | "$ultima" play --bot random --fen "p7/8/8/4k3/4I3/8/8/2P4K w 0 1" --pgn mate.pgn 2>&1)
case "$out" in *"Game over: checkmate, you win (1-0)"*) ;; *) fail "mate: [$out]";; esac
grep -qx '\[Result "1-0"\]' mate.pgn || fail "mate: Result"
grep -qx '\[Termination "checkmate"\]' mate.pgn || fail "mate: Termination"

# As Black the bot moves first; without --pgn the file is named by the date
# in the current folder, and the program says which.
mkdir default && cd default || exit 1
out=$("$ultima" play --bot random --as black </dev/null 2>&1)
cd .. || exit 1
files=(default/ultima-*.pgn)
[ ${#files[@]} -eq 1 ] && [ -f "${files[0]}" ] || fail "default record file: [$(ls default)]"
case "$out" in *"saved to $(basename "${files[0]}")"*) ;; *) fail "default record file not named: [$out]";; esac
case "$out" in *"random plays 1. "*) ;; *) fail "as black: the bot did not move first";; esac
grep -qx '\[White "random"\]' "${files[0]}" || fail "as black: the bot is not White"

# Colours only when asked for or on a terminal: none in a pipe by default.
esc=$(printf '\033')
out=$(printf 'quit\n' | "$ultima" play --bot random --pgn colour.pgn 2>&1)
case "$out" in *"$esc"*) fail "colour escapes in a pipe";; esac
out=$(printf 'quit\n' | "$ultima" play --bot random --pgn colour.pgn --colour always 2>&1)
case "$out" in *"$esc[1mK$esc[0m"*) ;; *) fail "--colour always: no escapes";; esac

expect_error() {  # expect_error "message part" args...
  local part=$1; shift
  local err; err=$("$ultima" "$@" 2>&1 </dev/null >/dev/null); local rc=$?
  [ $rc -ne 0 ] || fail "'$*' exited 0"
  [ $rc -lt 128 ] || fail "'$*' crashed (exit $rc)"
  case "$err" in *"$part"*) ;; *) fail "'$*': error [$err] lacks [$part]";; esac
}
expect_error "--bot 'nobody'" play --bot nobody --pgn x.pgn
expect_error "--as" play --as green --pgn x.pgn
expect_error "--colour" play --colour pink --pgn x.pgn
expect_error "FEN" play --fen "8/8/8 w" --pgn x.pgn
expect_error "already over (checkmate)" play --fen "p7/8/2P5/4k3/4I3/8/8/7K b 0 1" --pgn x.pgn
expect_error "no-such-folder" play --bot random --pgn no-such-folder/x.pgn
[ ! -e x.pgn ] || fail "a refused command wrote x.pgn"

[ $failures -eq 0 ] && echo "play_test: all passed"
exit $((failures > 0))
