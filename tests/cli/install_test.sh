#!/usr/bin/env bash
# An installed copy runs on its own. `cmake --install` puts the build into
# a fresh prefix; then, from a folder outside the source tree, with no
# ULTIMA_* variable set, the installed program finds its levels, bots,
# puzzles, the learned evaluation and the network module under the prefix
# (it never reads the source tree: only a program run from its build folder
# does), and it still does after the whole prefix is moved elsewhere.
#   tests/cli/install_test.sh BUILD_DIR
set -u
build=$(cd "$1" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() {
  echo "install_test: $*" >&2
  exit 1
}
cmake --install "$build" --prefix "$work/prefix" > "$work/install.log" 2>&1 ||
  fail "cmake --install failed: $(tail -5 "$work/install.log")"
unset ULTIMA_DATA ULTIMA_LEVELS ULTIMA_BOTS ULTIMA_PUZZLES ULTIMA_NNUE ULTIMA_NN_MODULE
cd "$work"

check_prefix() {  # check_prefix PREFIX: the installed program's data is PREFIX's
  local prefix=$1 ultima=$1/bin/ultima share=$1/share/ultima/configs
  [ -x "$ultima" ] || fail "no program at $ultima"
  local list
  list=$("$ultima" bots list) || fail "bots list: exit $?"
  printf '%s\n' "$list" | grep -qF "levels from $share/levels, bot files from $share/bots" ||
    fail "bots list does not read the prefix's catalogue: [$(printf '%s\n' "$list" | tail -1)]"
  local id
  id=$(head -1 "$share/puzzles/puzzles.jsonl" | grep -o '"id":"[^"]*"' | cut -d'"' -f4)
  [ -n "$id" ] || fail "no puzzle in $share/puzzles/puzzles.jsonl"
  "$ultima" puzzles show "$id" > "$work/puzzle.txt" 2>&1 || fail "puzzles show $id: $(cat "$work/puzzle.txt")"
  # The engine's default evaluation is the shipped network, read from the prefix.
  local uci
  uci=$(printf 'position startpos\ngo depth 2\n' | "$ultima" uci) || fail "uci: exit $?"
  printf '%s\n' "$uci" | grep -q '^bestmove ' || fail "uci: no bestmove: [$uci]"
  if printf '%s\n' "$uci" | grep -q 'info string error'; then fail "uci: [$uci]"; fi
  # A level and, where the network module was built, a network bot.
  "$ultima" match --player1 novice --player2 random --games 2 --max-plies 40 > "$work/match.txt" 2>&1 ||
    fail "match with a level: $(tail -3 "$work/match.txt")"
  if [ -f "$prefix/lib/ultima/libultima_nn.so" ]; then
    "$ultima" match --player1 net-m7 --player2 random --games 2 --max-plies 40 > "$work/net.txt" 2>&1 ||
      fail "match with a network bot: $(tail -3 "$work/net.txt")"
  fi
  "$ultima" loop --print-config | grep -q '^selfplay:' || fail "loop --print-config"
}

check_prefix "$work/prefix"
mv "$work/prefix" "$work/moved"
check_prefix "$work/moved"
echo "install_test: passed"
