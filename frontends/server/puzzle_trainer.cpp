// Puzzles at the player's level (puzzle_trainer.h).
#include "frontends/server/puzzle_trainer.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <set>
#include <stdexcept>

#include "frontends/server/glicko2.h"
#include "frontends/server/ids.h"

namespace ultima {
using server_ids::new_token;
using server_ids::unix_ms;

PuzzleTrainer::PuzzleTrainer(Store& store, const std::vector<Puzzle>& puzzles, Clock now, std::uint64_t seed)
    : store_(store),
      puzzles_(puzzles),
      now_(now ? std::move(now) : Clock(unix_ms)),
      rng_(seed ? seed : std::random_device{}()) {
  for (const PuzzleRating& r : store_.puzzle_ratings()) learnt_[r.puzzle] = r;
}

StoredPlayer PuzzleTrainer::new_player() {
  StoredPlayer p;
  p.token = new_token();
  p.created_ms = now_();
  store_.put_player(p);
  return p;
}

std::optional<StoredPlayer> PuzzleTrainer::player(const std::string& token) {
  if (token.empty()) return std::nullopt;
  return store_.player(token);
}

PuzzleRating PuzzleTrainer::rating_of(const Puzzle& puzzle) {
  std::lock_guard lock(mutex_);
  const auto it = learnt_.find(puzzle.id);
  if (it != learnt_.end()) return it->second;
  PuzzleRating r;
  r.puzzle = puzzle.id;
  r.rating = puzzle.rating_elo > 0 ? puzzle.rating_elo : 3000;
  return r;
}

const Puzzle* PuzzleTrainer::next(const StoredPlayer& player, const std::string& tag, int pool) {
  const std::vector<std::string> tried = store_.attempted_by(player.token);
  const std::set<std::string> done(tried.begin(), tried.end());
  std::vector<std::pair<double, const Puzzle*>> near;
  for (const Puzzle& p : puzzles_) {
    if (done.count(p.id)) continue;
    if (!tag.empty() && std::find(p.tags.begin(), p.tags.end(), tag) == p.tags.end()) continue;
    near.emplace_back(std::abs(rating_of(p).rating - player.rating), &p);
  }
  if (near.empty()) return nullptr;
  const std::size_t n = std::min<std::size_t>(near.size(), static_cast<std::size_t>(std::max(1, pool)));
  std::partial_sort(near.begin(), near.begin() + static_cast<std::ptrdiff_t>(n), near.end(),
                    [](const auto& a, const auto& b) { return a.first < b.first || (a.first == b.first && a.second->id < b.second->id); });
  std::lock_guard lock(mutex_);
  return near[std::uniform_int_distribution<std::size_t>(0, n - 1)(rng_)].second;
}

PuzzleTrainer::Outcome PuzzleTrainer::attempt(const std::string& token, const Puzzle& puzzle, bool solved) {
  std::lock_guard serial(attempts_);
  std::optional<StoredPlayer> found = player(token);
  if (!found) throw std::invalid_argument("no player with this token");
  Outcome out;
  out.player = *found;
  out.puzzle = rating_of(puzzle);
  // Both sides rated from the ratings before the attempt.
  const Glicko me{out.player.rating, out.player.rd, out.player.vol};
  const Glicko it{out.puzzle.rating, out.puzzle.rd, out.puzzle.vol};
  const Glicko me_after = glicko2_update(me, {{it, solved ? 1.0 : 0.0}});
  const Glicko it_after = glicko2_update(it, {{me, solved ? 0.0 : 1.0}});
  StoredPlayer p = out.player;
  p.rating = me_after.rating;
  p.rd = std::max(45.0, me_after.rd);  // a floor, so that a rating keeps moving
  p.vol = me_after.vol;
  p.attempts += 1;
  p.solved += solved ? 1 : 0;
  p.streak = solved ? p.streak + 1 : 0;
  p.best_streak = std::max(p.best_streak, p.streak);
  PuzzleRating r = out.puzzle;
  r.rating = it_after.rating;
  r.rd = std::max(45.0, it_after.rd);
  r.vol = it_after.vol;
  r.attempts += 1;
  r.solved += solved ? 1 : 0;
  if (!store_.record_attempt(p, r, solved, now_())) return out;  // tried before: not rated
  {
    std::lock_guard lock(mutex_);
    learnt_[r.puzzle] = r;
  }
  out.rated = true;
  out.delta = p.rating - out.player.rating;
  out.player = p;
  out.puzzle = r;
  return out;
}

}  // namespace ultima
