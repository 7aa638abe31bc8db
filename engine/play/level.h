// Graded bots: a level is a search budget plus deliberate weaknesses
// (evaluation noise, blunders) and a style (evaluation weights), read from a
// documented file in configs/levels/.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/play/player.h"
#include "engine/search/search.h"
#include "engine/search/static_eval.h"

namespace ultima {

struct Level {
  std::string name;          // as used in specs and the UCI Level option
  std::string description;
  std::string style = "graded";  // a word or short phrase for the bot catalogue
  int order = 0;             // weakest first
  int depth = 0;             // 0: no depth limit
  std::uint64_t nodes = 0;   // 0: no node limit
  std::int64_t movetime_ms = 0;
  int eval_noise_cp = 0;     // +- centipawns added to every evaluation
  double blunder_rate = 0;   // share of moves played at random
  // Strength limiting in Stockfish's manner: below kMaxSkill the search
  // looks at several best lines (MultiPV) and picks among them with a
  // seeded weakness that grows as the skill falls (skill_pick below).
  int skill = kMaxSkill;
  static constexpr int kMaxSkill = 20;
  int elo = 0;               // measured on the ladder (random mover = 0)
  bool has_elo = false;
  std::size_t hash_mb = kDefaultHashMb;
  int threads = 1;           // search threads (Lazy SMP) of a SearchPlayer
  EvalWeights weights;
  // A learned evaluation (engine/nnue) in place of the weights: as given
  // ("default" for the shipped network, see load_nnue; relative paths in a
  // level file are read from the file's folder), and the network read from
  // it when the level was parsed.
  std::string nnue;
  std::shared_ptr<const nnue::Network> network;

  // Throws std::invalid_argument naming the file and the bad key or value.
  static Level load(const std::string& path);
  static Level parse(const std::string& yaml_text, const std::string& origin, const std::string& base_dir = "");
  // From "key=value,key=value" (the search: player spec).
  static Level from_pairs(const std::string& pairs);
};

// The learned evaluation that ships with the program: the file named by
// $ULTIMA_NNUE, else configs/nnue/nets/<kDefaultNnue> beside the program's
// source tree, else under ./configs/nnue/nets/.
constexpr const char* kDefaultNnue = "nnue-1.unnue";
std::string default_nnue_file();
// A learned evaluation by name: "default" the shipped network, "none" or
// empty the hand-written evaluation (null), else a network file (relative to
// `base_dir` when one is given), read once per path for the program's life.
// Throws nnue::FileError naming the file and the problem.
std::shared_ptr<const nnue::Network> load_nnue(const std::string& name, const std::string& base_dir = "");

// The keys of a search: player spec (those of a level file but name,
// description, order and weights), one line each with its default.
std::string level_keys_help();

// Skill limiting: how many best lines a level of this skill searches (1 at
// full skill, up to 8 at skill 0), and the pick among them. Each line's
// score gets a seeded bonus from 0 to the weakness, (kMaxSkill - skill) * 12
// centipawns, and the highest total wins; lines more than twice the
// weakness below the best are never picked. Lines best first; returns the
// index of the chosen one (0 at full skill).
int skill_lines(int skill);
int skill_pick(int skill, const std::vector<SearchInfo>& lines, std::uint64_t seed);

// One move of a level: a random move at the blunder rate, else a search
// with the level's noise, within both the level's budget and `limits` (the
// tighter of each). `on_info` sees the search's progress.
MoveChoice play_level_move(Searcher& searcher, const Level& level, Position& pos, std::uint64_t seed,
                           const SearchLimits& limits = {},
                           const std::function<void(const SearchInfo&)>& on_info = {});

// Plays by alpha-beta search within a level's budget and weaknesses.
class SearchPlayer : public Player {
 public:
  explicit SearchPlayer(Level level);
  std::string name() const override { return level_.name; }
  void new_game() override { searcher_.clear(); }
  // Within the level's budget and the caller's limits, whichever ends first.
  MoveChoice choose(Position& pos, std::uint64_t seed, const MoveLimits& limits = {}) override;
  void stop() override { searcher_.stop(); }
  const Level& level() const { return level_; }

 private:
  Level level_;
  Searcher searcher_;
};

}  // namespace ultima
