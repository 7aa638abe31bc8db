// The play layer's public header: players (player.h) and the specs that
// name them (player_spec.h), graded levels, the bot catalogue (bot.h),
// style figures of games (style.h), the match runner with Elo and SPRT,
// game records (PGN), a person's game against a bot at a terminal, the UCI
// engine, the JSON analysis engine (a shared service), the web board's
// server, value fitting, puzzles, and the atomic file writer.
#pragma once

#include "engine/play/analysis.h"
#include "engine/play/bot.h"
#include "engine/play/elo.h"
#include "engine/play/level.h"
#include "engine/play/match.h"
#include "engine/play/mcts_player.h"
#include "engine/play/pgn.h"
#include "engine/play/player.h"
#include "engine/play/player_spec.h"
#include "engine/play/puzzle.h"
#include "engine/play/server.h"
#include "engine/play/style.h"
#include "engine/play/terminal_game.h"
#include "engine/play/uci.h"
#include "engine/play/uci_player.h"
#include "engine/play/value_fit.h"
