// The play layer's public header: players (player.h) and the specs that
// name them (player_spec.h), graded levels and the learned evaluation by
// name (level.h), the bot catalogue (bot.h), style figures of games
// (style.h), the match runner with Elo and SPRT, game records (PGN), an
// engine over UCI as a player, value fitting and puzzles. The front ends
// that serve these (UCI, analysis, web server, terminal) are in frontends/.
#pragma once

#include "engine/play/bot.h"
#include "engine/play/elo.h"
#include "engine/play/level.h"
#include "engine/play/match.h"
#include "engine/play/mcts_player.h"
#include "engine/play/pgn.h"
#include "engine/play/player.h"
#include "engine/play/player_spec.h"
#include "engine/play/puzzle.h"
#include "engine/play/style.h"
#include "engine/play/uci_player.h"
#include "engine/play/value_fit.h"
