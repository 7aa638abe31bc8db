// Puzzles at the player's level (docs/web.md, "Puzzles"): anonymous
// players known by a token their browser keeps, each with a Glicko-2
// rating (glicko2.h); puzzles rated the same way, starting from the rating
// the puzzle file gives them (the weakest level that solves them) and
// learning from every first attempt. An attempt is a game between the
// player and the puzzle: solved, the player wins. Only a player's first
// attempt at a puzzle is rated, as it alone is played blind. Everything is
// kept in the server's database (store.h).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "engine/play/puzzle.h"
#include "frontends/server/store.h"

namespace ultima {

class PuzzleTrainer {
 public:
  using Clock = std::function<std::int64_t()>;  // Unix time in milliseconds

  // `puzzles` must outlive the trainer. `seed` draws the next puzzles (0:
  // a seed from the system's entropy; tests give one).
  PuzzleTrainer(Store& store, const std::vector<Puzzle>& puzzles, Clock now = {}, std::uint64_t seed = 0);

  // A new anonymous player (1500, deviation 350), stored.
  StoredPlayer new_player();
  std::optional<StoredPlayer> player(const std::string& token);

  // A puzzle's rating now: learnt from attempts, or its starting one (the
  // level's Elo of the puzzle file, 3000 for one no level solves;
  // deviation 300).
  PuzzleRating rating_of(const Puzzle& puzzle);

  // A puzzle the player has not tried, with `tag` when one is given, drawn
  // among the `pool` whose ratings are nearest the player's; null when none
  // is left.
  const Puzzle* next(const StoredPlayer& player, const std::string& tag, int pool = 12);

  struct Outcome {
    bool rated = false;      // the player's first attempt at the puzzle
    StoredPlayer player;     // after the attempt
    PuzzleRating puzzle;     // after the attempt
    double delta = 0;        // the player's rating change
  };
  // The end of an attempt: solved or failed. Rated (both ratings and the
  // player's streak move) only for the player's first attempt at it.
  // Throws std::invalid_argument for an unknown token.
  Outcome attempt(const std::string& token, const Puzzle& puzzle, bool solved);

 private:
  Store& store_;
  const std::vector<Puzzle>& puzzles_;
  Clock now_;
  std::mutex mutex_;          // learnt_ and rng_
  std::mutex attempts_;       // one attempt at a time: a player's row is read, then written
  std::map<std::string, PuzzleRating> learnt_;  // the store's puzzle ratings, read once
  std::mt19937_64 rng_;
};

}  // namespace ultima
