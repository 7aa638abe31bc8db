// The rules core's public header: positions, rules, move generation, move
// text, symmetries and perft. No LibTorch here or below.
#pragma once

#include "engine/rules/bitboard.h"
#include "engine/rules/movegen.h"
#include "engine/rules/notation.h"
#include "engine/rules/perft.h"
#include "engine/rules/position.h"
#include "engine/rules/replay.h"
#include "engine/rules/rule_set.h"
#include "engine/rules/symmetry.h"
#include "engine/rules/types.h"
