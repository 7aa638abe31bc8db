// The rules core's public header: positions, rules, move generation, move
// text, symmetries and perft. No LibTorch here or below.
#pragma once

#include "bitboard.h"
#include "movegen.h"
#include "notation.h"
#include "perft.h"
#include "position.h"
#include "rules.h"
#include "symmetry.h"
#include "types.h"
