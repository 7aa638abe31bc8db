#include "engine/play/puzzle.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "engine/base/paths.h"
#include "engine/base/file_io.h"
#include "engine/play/pgn.h"
#include "engine/rules/movegen.h"
#include "engine/rules/notation.h"
#include "engine/rules/replay.h"
#include "engine/search/static_eval.h"

namespace ultima {
namespace {

using json = nlohmann::json;

// Every search here starts from an empty table, so that its answer depends
// on the position alone: a check run later, in any order, sees the same.
SearchResult fresh_search(Searcher& searcher, Position& pos, const SearchLimits& limits) {
  searcher.clear();
  return searcher.search(pos, limits);
}

struct MateFound {
  int moves = 0;  // 0: no mate within the bound
  Move best;
  std::vector<Move> pv;
};

// The shortest mate within `most` moves (the exact mate search), among
// `only` when given.
MateFound mate_search(Searcher& searcher, Position& pos, int most, const std::vector<Move>& only = {}) {
  SearchLimits limits;
  limits.mate = most;
  limits.root_moves = only;
  const SearchResult r = fresh_search(searcher, pos, limits);
  MateFound found;
  if (r.lines.empty() || r.score < kMateBound) return found;
  const int moves = (kMateScore - r.score + 1) / 2;
  if (moves > most) return found;
  found.moves = moves;
  found.best = r.best;
  found.pv = r.lines[0].pv;
  return found;
}

std::vector<Move> legal_moves_except(const Position& pos, const Move& except) {
  MoveList list;
  generate_legal(pos, list);
  std::vector<Move> out;
  for (const Move& m : list)
    if (!(m == except)) out.push_back(m);
  return out;
}

// Does any move but `best` mate within `moves`?
bool another_mate(Searcher& searcher, Position& pos, const Move& best, int moves) {
  const std::vector<Move> others = legal_moves_except(pos, best);
  if (others.empty()) return false;
  return mate_search(searcher, pos, moves, others).moves > 0;
}

int mate_moves_of(int score) { return (kMateScore - score + 1) / 2; }

int material_balance(const Position& pos, Color us) {
  static const EvalWeights weights;
  return material(pos, us, weights) - material(pos, ~us, weights);
}

struct TwoBest {
  Move best;
  int best_score = 0;
  int second_score = 0;
  bool ok = false;  // two lines were searched
};

TwoBest two_best(Searcher& searcher, Position& pos, int depth) {
  SearchLimits limits;
  limits.depth = depth;
  limits.multipv = 2;
  const SearchResult r = fresh_search(searcher, pos, limits);
  TwoBest t;
  if (r.lines.size() < 2) return t;
  t.best = r.lines[0].pv.empty() ? r.best : r.lines[0].pv[0];
  t.best_score = r.lines[0].score;
  t.second_score = r.lines[1].score;
  t.ok = true;
  return t;
}

bool decisive(const TwoBest& t, const PuzzleSettings& s) {
  return t.ok && t.best_score >= s.win_cp && t.second_score < s.win_cp && t.best_score - t.second_score >= s.margin_cp;
}

std::optional<Puzzle> find_mate(Position& pos, int bound, Searcher& searcher) {
  const MateFound first = mate_search(searcher, pos, bound);
  if (first.moves == 0) return std::nullopt;
  Puzzle puzzle;
  puzzle.kind = PuzzleKind::kMate;
  puzzle.mate_in = first.moves;
  int left = first.moves;
  int made = 0;
  bool ok = false;
  while (true) {
    const MateFound here = mate_search(searcher, pos, left);
    if (here.moves != left) break;  // the line's reply was not the best defence
    if (another_mate(searcher, pos, here.best, left)) break;
    puzzle.solution.push_back(here.best);
    pos.make(here.best);
    ++made;
    if (left == 1) {
      ok = game_status(pos).over();
      break;
    }
    if (here.pv.size() < 2) break;
    // The defence the search found for its mate: one that lasts longest.
    const Move reply = here.pv[1];
    MoveList list;
    generate_legal(pos, list);
    if (std::find(list.begin(), list.end(), reply) == list.end()) break;
    puzzle.solution.push_back(reply);
    pos.make(reply);
    ++made;
    --left;
  }
  for (; made > 0; --made) pos.unmake();
  if (!ok) return std::nullopt;
  return puzzle;
}

std::optional<Puzzle> find_gain(Position& pos, const TwoBest& screen, const PuzzleSettings& settings,
                                Searcher& searcher) {
  const Color us = pos.side_to_move();
  const int start_balance = material_balance(pos, us);
  // A search two plies deeper must agree on the move, the win and the margin.
  const TwoBest deep = two_best(searcher, pos, settings.screen_depth + 2);
  if (!decisive(deep, settings) || !(deep.best == screen.best) || deep.best_score >= kMateBound) return std::nullopt;
  Puzzle puzzle;
  puzzle.kind = PuzzleKind::kGain;
  puzzle.depth = settings.screen_depth + 2;
  puzzle.score_cp = deep.best_score;
  puzzle.second_cp = deep.second_score;
  int made = 0;
  bool ok = false;
  for (int k = 0; k < settings.max_gain_moves; ++k) {
    Move move = screen.best;
    if (k > 0) {
      const TwoBest here = two_best(searcher, pos, settings.screen_depth);
      if (!decisive(here, settings)) break;
      move = here.best;
    }
    puzzle.solution.push_back(move);
    pos.make(move);
    ++made;
    if (game_status(pos).over()) break;  // a mate along the way: found as a mate, not here
    const int gained = material_balance(pos, us) - start_balance;
    // The material is won, and the opponent cannot win it back.
    SearchLimits limits;
    limits.depth = settings.screen_depth;
    if (gained >= settings.material_cp && -fresh_search(searcher, pos, limits).score >= settings.win_cp) {
      puzzle.material_cp = gained;
      ok = true;
      break;
    }
    SearchLimits reply_limits;
    reply_limits.depth = settings.screen_depth;
    const SearchResult reply = fresh_search(searcher, pos, reply_limits);
    if (reply.best.is_null()) break;
    puzzle.solution.push_back(reply.best);
    pos.make(reply.best);
    ++made;
  }
  for (; made > 0; --made) pos.unmake();
  if (!ok) return std::nullopt;
  return puzzle;
}

std::uint64_t mix(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

const char* mode_of(Kind capturer) {
  switch (capturer) {
    case kPawn: return "pinch";
    case kWithdrawer: return "withdrawal";
    case kLeaper: return "leap";
    case kCoordinator: return "coordination";
    case kKing: return "king";
    default: return nullptr;
  }
}

}  // namespace

const std::set<std::string>& known_puzzle_tags() {
  static const std::set<std::string> tags = {"pinch",    "withdrawal", "leap",    "coordination", "king", "chameleon",
                                             "immobilization", "removal", "mate", "stalemate"};
  return tags;
}

const char* puzzle_kind_name(PuzzleKind kind) { return kind == PuzzleKind::kMate ? "mate" : "gain"; }

std::optional<Puzzle> find_puzzle(const Position& position, const PuzzleSettings& settings, Searcher& searcher) {
  if (position.halfmove_clock() >= settings.max_halfmove_clock) return std::nullopt;
  if (game_status(position).over()) return std::nullopt;
  Position pos = Position::from_fen(position.fen(), position.rules());
  if (count_legal(pos) < 2) return std::nullopt;
  searcher.set_weights(EvalWeights{});
  searcher.set_eval_noise(0, 0);
  const TwoBest screen = two_best(searcher, pos, settings.screen_depth);
  if (!screen.ok) return std::nullopt;
  std::optional<Puzzle> puzzle;
  if (screen.best_score >= kMateBound) {
    const int moves = mate_moves_of(screen.best_score);
    if (moves <= settings.mate_moves) puzzle = find_mate(pos, moves, searcher);
  } else {
    // The mate probe: a mate the screen did not see, shown by a search to
    // the depth of the longest mate looked for, makes a mate position,
    // proven by the exact mate search as the others (and no gain: the mate
    // is the point).
    int probed = 0;
    if (settings.deep_mate && screen.best_score >= settings.deep_mate_cp) {
      SearchLimits deep;
      deep.depth = 2 * settings.mate_moves - 1;
      const int score = fresh_search(searcher, pos, deep).score;
      if (score >= kMateBound && mate_moves_of(score) <= settings.mate_moves) probed = mate_moves_of(score);
    }
    if (probed > 0)
      puzzle = find_mate(pos, probed, searcher);
    else if (decisive(screen, settings))
      puzzle = find_gain(pos, screen, settings, searcher);
  }
  if (!puzzle) return std::nullopt;
  puzzle->fen = pos.fen();
  puzzle->rules = pos.rules();
  puzzle->tags = puzzle_tags(pos, puzzle->solution);
  return puzzle;
}

namespace {

// One game of random play from the start, probed for a mate within `most`
// moves (and not quicker than `least`) wherever `probe_here` says; the
// first one found, or nothing when the game ends or reaches `max_plies`.
// `pick` chooses each move from the legal ones.
template <typename ProbeHere, typename Pick>
std::optional<RandomMate> random_play_mate(const Rules& rules, int most, int least, Searcher& searcher, int max_plies,
                                           ProbeHere probe_here, Pick pick) {
  Position pos = Position::start(rules);
  RandomMate found;
  for (int ply = 0; ply < max_plies && !game_status(pos).over(); ++ply) {
    if (probe_here(ply, pos)) {
      Position probe = pos;
      const int moves = mate_search(searcher, probe, most).moves;
      if (moves >= least) {
        found.pos = pos;
        found.moves = moves;
        return found;
      }
    }
    MoveList list;
    generate_legal(pos, list);
    const Move move = pick(list);
    found.line.push_back(move);
    pos.make(move);
  }
  return std::nullopt;
}

}  // namespace

std::optional<RandomMate> random_game_mate(std::mt19937_64& rng, const Rules& rules, int most, Searcher& searcher,
                                           int least) {
  return random_play_mate(
      rules, most, least, searcher, 200, [](int ply, const Position&) { return ply >= 20 && ply % 3 == 0; },
      [&](const MoveList& list) { return list[rng() % list.size()]; });
}

std::optional<RandomMate> random_sparse_mate(std::mt19937_64& rng, const Rules& rules, int most, Searcher& searcher,
                                             int max_pieces, int least) {
  MoveList captures;
  return random_play_mate(
      rules, most, least, searcher, 400,
      [&](int, const Position& pos) { return popcount(pos.occupied()) <= max_pieces; },
      [&](const MoveList& list) {
        captures.clear();
        for (const Move& m : list)
          if (m.captures) captures.push(m);
        const bool capture = !captures.empty() && rng() % 4 != 0;
        return capture ? captures[rng() % captures.size()] : list[rng() % list.size()];
      });
}

std::vector<Move> mating_moves(const Position& position, int moves, Searcher& searcher, int limit) {
  Position pos = position;
  std::vector<Move> found;
  MoveList list;
  generate_legal(pos, list);
  std::vector<Move> left(list.begin(), list.end());
  while (static_cast<int>(found.size()) < limit && !left.empty()) {
    const MateFound mate = mate_search(searcher, pos, moves, left);
    if (mate.moves != moves) break;  // none left that mates (or a faster one: not a mate in `moves`)
    found.push_back(mate.best);
    left.erase(std::find(left.begin(), left.end(), mate.best));
  }
  return found;
}

std::vector<std::string> puzzle_tags(const Position& start, const std::vector<Move>& solution) {
  Position pos = start;
  std::set<std::string> tags;
  const Color us = pos.side_to_move();
  for (std::size_t i = 0; i < solution.size(); ++i) {
    const Move& m = solution[i];
    if (i % 2 == 0) {
      if (m.is_removal()) tags.insert("removal");
      const Kind mover = kind_of(pos.piece_on(m.from()));
      if (m.captures) {
        if (mover == kChameleon) {
          tags.insert("chameleon");
          for (Bitboard b = m.captures; b;) {
            const char* mode = mode_of(kind_of(pos.piece_on(pop_lsb(b))));
            if (mode) tags.insert(mode);
          }
        } else if (const char* mode = mode_of(mover)) {
          tags.insert(mode);
        }
      }
      const Bitboard frozen_before = pos.frozen(~us);
      pos.make(m);
      if (!m.is_removal() && (mover == kImmobilizer || mover == kChameleon) && (pos.frozen(~us) & ~frozen_before))
        tags.insert("immobilization");
    } else {
      pos.make(m);
    }
  }
  const GameStatus status = game_status(pos);
  if (status.termination == Termination::kCheckmate || status.termination == Termination::kKingCaptured)
    tags.insert("mate");
  if (status.termination == Termination::kNoLegalMove) tags.insert("stalemate");
  return {tags.begin(), tags.end()};
}

bool has_tagged_move(const Position& position, const std::vector<std::string>& tags) {
  if (tags.empty()) return false;
  const bool freezing = std::find(tags.begin(), tags.end(), "immobilization") != tags.end();
  const bool ending = std::find(tags.begin(), tags.end(), "mate") != tags.end() ||
                      std::find(tags.begin(), tags.end(), "stalemate") != tags.end();
  MoveList list;
  generate_legal(position, list);
  for (const Move& m : list) {
    // Only a capture or a removal tags a move, but for freezing and ending
    // the game.
    if (!m.captures && !m.is_removal() && !freezing && !ending) continue;
    for (const std::string& t : puzzle_tags(position, {m}))
      if (std::find(tags.begin(), tags.end(), t) != tags.end()) return true;
  }
  return false;
}

std::string puzzle_position_key(const std::string& fen) {
  std::istringstream in(fen);
  std::string placement, side;
  in >> placement >> side;
  return placement + " " + side;
}

namespace {

// Does `level` play the same move whatever the seed? (No random moves, no
// noise, full skill, and a budget of depth or nodes, not time.)
bool plays_without_chance(const Level& level) {
  return level.blunder_rate == 0 && level.eval_noise_cp == 0 && level.skill >= Level::kMaxSkill &&
         level.movetime_ms == 0;
}

// The chance that run `run` of `level` plays every solver move of the
// solution: at each solver position the search (the level without its
// random moves) plays the solution's move or not, and a random move is the
// solution's one time in the number of legal moves.
double run_solves(const Puzzle& puzzle, const Level& level, const Level& searching, int run, Searcher& searcher) {
  Position pos = Position::from_fen(puzzle.fen, puzzle.rules);
  searcher.clear();
  double chance = 1;
  for (std::size_t i = 0; i < puzzle.solution.size(); ++i) {
    if (i % 2 == 0) {
      const std::uint64_t seed = mix(mix(static_cast<std::uint64_t>(run) + 1) ^ i);
      const bool found = play_level_move(searcher, searching, pos, seed).move == puzzle.solution[i];
      const double random_hit = 1.0 / count_legal(pos);
      chance *= (1 - level.blunder_rate) * (found ? 1 : 0) + level.blunder_rate * random_hit;
    }
    pos.make(puzzle.solution[i]);
  }
  return chance;
}

bool at_least_half(const LevelSolves& s) { return s.runs > 0 && s.solve >= 0.5; }

}  // namespace

InterpolatedRating interpolated_rating(const std::vector<LevelSolves>& solves) {
  InterpolatedRating r;
  for (std::size_t k = 0; k < solves.size(); ++k) {
    const LevelSolves& hi = solves[k];
    if (!at_least_half(hi)) continue;
    r.level = hi.level;
    r.elo = hi.elo;
    if (k > 0 && hi.elo > 0 && solves[k - 1].elo > 0 && solves[k - 1].runs > 0) {
      const LevelSolves& lo = solves[k - 1];
      const double t = (0.5 - lo.solve) / (hi.solve - lo.solve);  // p0 < 1/2 <= p1: t in (0, 1]
      r.elo = static_cast<int>(std::lround(lo.elo + t * (hi.elo - lo.elo)));
    }
    return r;
  }
  return r;
}

std::string rating_problem(const Puzzle& puzzle) {
  if (puzzle.solves.empty()) return {};
  const InterpolatedRating r = interpolated_rating(puzzle.solves);
  if (r.level != puzzle.rating || r.elo != puzzle.rating_elo)
    return "the solves give the rating " + r.level + " (Elo " + std::to_string(r.elo) + "), not " + puzzle.rating +
           " (Elo " + std::to_string(puzzle.rating_elo) + ")";
  for (std::size_t k = 0; k + 1 < puzzle.solves.size(); ++k)
    if (at_least_half(puzzle.solves[k]))
      return "the solves go on after " + puzzle.solves[k].level + ", whose chance is already at least one half";
  return {};
}

void rate_puzzle(Puzzle& puzzle, const std::vector<Level>& levels, int runs) {
  puzzle.solves.clear();
  Searcher searcher(16);
  for (const Level& level : levels) {
    searcher.set_hash_mb(level.hash_mb);
    Level searching = level;
    searching.blunder_rate = 0;
    LevelSolves s;
    s.level = level.name;
    s.elo = level.has_elo ? level.elo : 0;
    s.runs = plays_without_chance(level) ? 1 : runs;
    double sum = 0;
    for (int run = 0; run < s.runs; ++run) sum += run_solves(puzzle, level, searching, run, searcher);
    s.solve = std::round(sum / s.runs * 10000) / 10000;
    puzzle.solves.push_back(s);
    if (at_least_half(s)) break;
  }
  const InterpolatedRating r = interpolated_rating(puzzle.solves);
  puzzle.rating = r.level;
  puzzle.rating_elo = r.elo;
}

std::string replay_problem(const Puzzle& puzzle) {
  Position pos;
  try {
    pos = Position::from_fen(puzzle.fen, puzzle.rules);
  } catch (const std::exception& e) {
    return std::string("bad FEN: ") + e.what();
  }
  if (puzzle.solution.empty() || puzzle.solution.size() % 2 == 0)
    return "the solution must have an odd number of moves (the solver's first and last)";
  const Color us = pos.side_to_move();
  const int start_balance = material_balance(pos, us);
  for (std::size_t i = 0; i < puzzle.solution.size(); ++i) {
    if (game_status(pos).over()) return "the game is over before move " + std::to_string(i + 1);
    MoveList list;
    generate_legal(pos, list);
    const Move& m = puzzle.solution[i];
    if (std::find(list.begin(), list.end(), m) == list.end())
      return "move " + std::to_string(i + 1) + " (" + to_coordinate(m) + ") is not legal";
    pos.make(*std::find(list.begin(), list.end(), m));
  }
  if (puzzle.kind == PuzzleKind::kMate) {
    const GameStatus status = game_status(pos);
    const bool won = status.over() && status.outcome == (us == kWhite ? Outcome::kWhiteWins : Outcome::kBlackWins);
    if (!won) return "the line does not end in a won game";
    if (static_cast<int>(puzzle.solution.size()) != 2 * puzzle.mate_in - 1)
      return "the line's length does not match mate_in " + std::to_string(puzzle.mate_in);
  } else {
    const int gained = material_balance(pos, us) - start_balance;
    if (gained != puzzle.material_cp)
      return "the line wins " + std::to_string(gained) + " cp of material, not the stated " +
             std::to_string(puzzle.material_cp);
    if (gained <= 0) return "the line wins no material";
  }
  return {};
}

std::string confirm_problem(const Puzzle& puzzle, Searcher& searcher, bool every_move) {
  const std::string replay = replay_problem(puzzle);
  if (!replay.empty()) return replay;
  searcher.set_weights(EvalWeights{});
  searcher.set_eval_noise(0, 0);
  Position pos = Position::from_fen(puzzle.fen, puzzle.rules);
  PuzzleSettings settings;
  const int screen_depth = puzzle.depth - 2;
  for (std::size_t i = 0; i < puzzle.solution.size(); ++i) {
    const Move& m = puzzle.solution[i];
    if (i % 2 == 0 && (i == 0 || every_move)) {
      const std::string at = "solver move " + std::to_string(i / 2 + 1) + " (" + to_coordinate(m) + "): ";
      if (puzzle.kind == PuzzleKind::kMate) {
        const int left = puzzle.mate_in - static_cast<int>(i / 2);
        const MateFound found = mate_search(searcher, pos, left);
        if (found.moves != left) return at + "no mate in " + std::to_string(left) + " found";
        if (!(found.best == m)) {
          if (found.best.is_null()) return at + "the search found no move";
          return at + "the search mates with " + to_coordinate(found.best) + " instead";
        }
        if (another_mate(searcher, pos, m, left)) return at + "another move also mates in " + std::to_string(left);
      } else {
        const TwoBest t = two_best(searcher, pos, i == 0 ? puzzle.depth : screen_depth);
        if (!t.ok) return at + "fewer than two legal moves";
        if (!(t.best == m)) return at + "the search prefers " + to_coordinate(t.best);
        if (!decisive(t, settings))
          return at + "not decisive: best " + std::to_string(t.best_score) + " cp, second " +
                 std::to_string(t.second_score) + " cp";
      }
    }
    pos.make(m);
  }
  return {};
}

std::string puzzle_to_json(const Puzzle& p) {
  json j;
  j["id"] = p.id;
  j["fen"] = p.fen;
  j["rules"] = p.rules.name();
  j["kind"] = puzzle_kind_name(p.kind);
  if (p.kind == PuzzleKind::kMate) {
    j["mate_in"] = p.mate_in;
  } else {
    j["depth"] = p.depth;
    j["score_cp"] = p.score_cp;
    j["second_cp"] = p.second_cp;
    j["material_cp"] = p.material_cp;
  }
  std::vector<std::string> moves;
  for (const Move& m : p.solution) moves.push_back(to_coordinate(m));
  j["solution"] = moves;
  j["tags"] = p.tags;
  j["rating"] = p.rating;
  j["rating_elo"] = p.rating_elo;
  if (!p.solves.empty()) {
    json solves = json::array();
    for (const LevelSolves& s : p.solves)
      solves.push_back({{"level", s.level}, {"elo", s.elo}, {"solve", s.solve}, {"runs", s.runs}});
    j["solves"] = solves;
  }
  j["source"] = p.source;
  return j.dump();
}

Puzzle puzzle_from_json(std::string_view line, const std::string& origin) {
  auto fail = [&](const std::string& what) -> PuzzleError { return PuzzleError(origin + ": " + what); };
  json j;
  try {
    j = json::parse(line);
  } catch (const std::exception& e) {
    throw fail(std::string("not JSON: ") + e.what());
  }
  if (!j.is_object()) throw fail("not a JSON object");
  auto text = [&](const char* key) -> std::string {
    if (!j.contains(key) || !j[key].is_string()) throw fail(std::string("field '") + key + "' missing or not a string");
    return j[key].get<std::string>();
  };
  auto number = [&](const char* key, int lo, int hi) -> int {
    if (!j.contains(key) || !j[key].is_number_integer())
      throw fail(std::string("field '") + key + "' missing or not an integer");
    const auto v = j[key].get<long long>();
    if (v < lo || v > hi)
      throw fail(std::string("field '") + key + "' is " + std::to_string(v) + ", outside " + std::to_string(lo) +
                 ".." + std::to_string(hi));
    return static_cast<int>(v);
  };
  auto strings = [&](const char* key) -> std::vector<std::string> {
    if (!j.contains(key) || !j[key].is_array()) throw fail(std::string("field '") + key + "' missing or not a list");
    std::vector<std::string> out;
    for (const json& e : j[key]) {
      if (!e.is_string()) throw fail(std::string("field '") + key + "' holds a non-string");
      out.push_back(e.get<std::string>());
    }
    return out;
  };
  Puzzle p;
  p.id = text("id");
  if (p.id.empty()) throw fail("empty id");
  try {
    p.rules = Rules::parse(text("rules"));
  } catch (const std::invalid_argument& e) {
    throw fail(std::string("bad rules: ") + e.what());
  }
  p.fen = text("fen");
  Position pos;
  try {
    pos = Position::from_fen(p.fen, p.rules);
  } catch (const std::exception& e) {
    throw fail(std::string("bad FEN: ") + e.what());
  }
  const std::string kind = text("kind");
  if (kind == "mate") {
    p.kind = PuzzleKind::kMate;
    p.mate_in = number("mate_in", 1, 50);
  } else if (kind == "gain") {
    p.kind = PuzzleKind::kGain;
    p.depth = number("depth", 3, 60);
    p.score_cp = number("score_cp", -kMateScore, kMateScore);
    p.second_cp = number("second_cp", -kMateScore, kMateScore);
    p.material_cp = number("material_cp", 1, 100000);
  } else {
    throw fail("kind '" + kind + "' is neither mate nor gain");
  }
  const std::vector<std::string> moves = strings("solution");
  if (moves.empty()) throw fail("empty solution");
  try {
    p.solution = replay_game(pos, moves, "solution").moves;
  } catch (const ReplayError& e) {
    throw fail(e.what());
  }
  p.tags = strings("tags");
  for (const std::string& t : p.tags)
    if (!known_puzzle_tags().count(t)) throw fail("unknown tag '" + t + "'");
  p.rating = text("rating");
  if (p.rating.empty()) throw fail("empty rating");
  p.rating_elo = number("rating_elo", 0, 10000);
  if (j.contains("solves")) {
    if (!j["solves"].is_array()) throw fail("field 'solves' is not a list");
    for (std::size_t k = 0; k < j["solves"].size(); ++k) {
      const json& e = j["solves"][k];
      const std::string at = "solves[" + std::to_string(k) + "]";
      if (!e.is_object()) throw fail(at + " is not an object");
      auto field = [&](const char* key) -> const json& {
        if (!e.contains(key)) throw fail(at + " has no '" + key + "'");
        return e[key];
      };
      LevelSolves s;
      if (!field("level").is_string() || field("level").get<std::string>().empty())
        throw fail(at + ": 'level' is not a level name");
      s.level = field("level").get<std::string>();
      auto integer = [&](const char* key, int lo, int hi) {
        const json& v = field(key);
        if (!v.is_number_integer() || v.get<long long>() < lo || v.get<long long>() > hi)
          throw fail(at + ": '" + key + "' is not an integer from " + std::to_string(lo) + " to " + std::to_string(hi));
        return static_cast<int>(v.get<long long>());
      };
      s.elo = integer("elo", 0, 10000);
      s.runs = integer("runs", 1, 10000);
      const json& solve = field("solve");
      if (!solve.is_number() || !(solve.get<double>() >= 0 && solve.get<double>() <= 1))
        throw fail(at + ": 'solve' is not a probability from 0 to 1");
      s.solve = solve.get<double>();
      p.solves.push_back(s);
    }
  }
  if (j.contains("source")) p.source = text("source");
  return p;
}

std::vector<Puzzle> read_puzzles(std::string_view text, const std::string& origin) {
  std::vector<Puzzle> out;
  std::size_t start = 0;
  int line_number = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    ++line_number;
    std::string_view line = text.substr(start, end - start);
    start = end + 1;
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    out.push_back(puzzle_from_json(line, origin + " line " + std::to_string(line_number)));
  }
  return out;
}

std::vector<Puzzle> read_puzzle_file(const std::string& path) {
  std::string text;
  try {
    text = read_file(path);
  } catch (const std::exception& e) {
    throw PuzzleError(e.what());
  }
  return read_puzzles(text, path);
}

void write_puzzle_file(const std::string& path, const std::vector<Puzzle>& puzzles) {
  std::string text;
  for (const Puzzle& p : puzzles) text += puzzle_to_json(p) + "\n";
  write_file_atomically(path, text);
}

std::string default_puzzle_file() {
  if (const char* env = std::getenv("ULTIMA_PUZZLES"); env && *env) return env;
  return data_path("configs/puzzles/puzzles.jsonl");
}

void random_mate_suite(int count, std::uint64_t seed, std::vector<Position>& in_one, std::vector<Position>& in_two,
                       int sparse) {
  std::mt19937_64 rng(seed);
  Searcher searcher(4);
  for (int games = 0; (static_cast<int>(in_one.size()) < count || static_cast<int>(in_two.size()) < count) &&
                      games < 100000;
       ++games) {
    const std::optional<RandomMate> mate = sparse > 0 ? random_sparse_mate(rng, Rules{}, 2, searcher, sparse)
                                                      : random_game_mate(rng, Rules{}, 2, searcher);
    if (!mate) continue;
    std::vector<Position>& suite = mate->moves == 1 ? in_one : in_two;
    if (static_cast<int>(suite.size()) < count) suite.push_back(mate->pos);
  }
}

std::size_t mate_suite_from_pgn(const std::vector<std::string>& files, int count, std::vector<Position>& in_one,
                       std::vector<Position>& in_two) {
  Searcher searcher(4);
  std::size_t skipped = 0;
  for (const std::string& file : files) {
    std::vector<GameRecord> games;
    try {
      games = read_pgn_file(file);
    } catch (const std::exception& e) {
      throw std::runtime_error(file + ": " + e.what());
    }
    for (const GameRecord& game : games) {
      const Position pos = final_position(game);
      std::vector<Position>* suite = nullptr;
      if (!mating_moves(pos, 1, searcher, 1).empty())
        suite = &in_one;
      else if (!mating_moves(pos, 2, searcher, 1).empty())
        suite = &in_two;
      if (!suite)
        ++skipped;
      else if (static_cast<int>(suite->size()) < count)
        suite->push_back(pos);
    }
  }
  return skipped;
}

}  // namespace ultima
