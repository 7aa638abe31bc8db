#include "engine/play/match.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <random>
#include <thread>

#include "engine/rules/hash.h"
#include "engine/rules/movegen.h"
#include "engine/rules/notation.h"

namespace ultima {
namespace {

std::uint64_t combine(std::uint64_t h, std::uint64_t v) { return mix64(h ^ mix64(v)); }

// Domain tags keep the opening and the move seed streams apart.
constexpr std::uint64_t kOpeningStream = 0x6f70656e696e67ull;
constexpr std::uint64_t kMoveStream = 0x6d6f7665ull;
constexpr int kOpeningAttempts = 1000;


void validate(const MatchConfig& c) {
  if (c.games < 1) throw std::invalid_argument("a match needs at least one game");
  if (c.concurrency < 1) throw std::invalid_argument("concurrency must be at least 1");
  if (c.opening_min_plies < 0 || c.opening_max_plies < c.opening_min_plies)
    throw std::invalid_argument("opening plies must be a range MIN-MAX with 0 <= MIN <= MAX");
  if (c.max_plies < 1) throw std::invalid_argument("max plies must be at least 1");
  if (c.record_every < 0) throw std::invalid_argument("record_every must not be negative");
  for (std::size_t i = 0; i < c.opening_fens.size(); ++i) {
    Position pos;
    try {
      pos = Position::from_fen(c.opening_fens[i], c.rules);
    } catch (const FenError& e) {
      throw std::invalid_argument("opening " + std::to_string(i + 1) + ": " + e.what());
    }
    const GameStatus status = game_status(pos);
    if (status.over())
      throw std::invalid_argument("opening " + std::to_string(i + 1) + ": the game is already over (" +
                                  termination_name(status.termination) + ")");
  }
}

// Player names as records show them: told apart when both are the same.
std::pair<std::string, std::string> record_names(const Player& p1, const Player& p2) {
  std::string a = p1.name(), b = p2.name();
  if (a == b) {
    a += " (1)";
    b += " (2)";
  }
  return {a, b};
}

class MatchRunner {
 public:
  MatchRunner(const PlayerFactory& player1, const PlayerFactory& player2, const MatchConfig& config,
              const MatchProgressCallback& progress)
      : factory1_(player1),
        factory2_(player2),
        config_(config),
        progress_(progress),
        finished_(config.games),
        resumed_(config.games, 0) {}

  MatchResult run() {
    start_ = std::chrono::steady_clock::now();
    for (const GameRecord& record : config_.resumed) admit(record);
    const int workers = std::min(config_.concurrency, config_.games);
    std::vector<std::thread> threads;
    for (int i = 0; i < workers; ++i) threads.emplace_back([this] { work(); });
    for (std::thread& t : threads) t.join();

    MatchResult result;
    result.player1 = name1_;
    result.player2 = name2_;
    result.seconds = elapsed();
    const int counted = sprt_stop_at_ >= 0 ? sprt_stop_at_ : prefix_;
    for (int i = 0; i < counted; ++i) result.games.push_back(*finished_[i]);
    if (!error_.empty()) {
      // Keep the games that did finish, then report the failure.
      std::vector<GameRecord> records;
      for (const auto& g : finished_)
        if (g) records.push_back(g->record);
      try {
        if (!config_.record_path.empty()) write_pgn_file(config_.record_path, records);
      } catch (const std::exception& e) {
        error_ += std::string("; and ") + e.what();
      }
      throw MatchError(error_);
    }
    for (const MatchGame& g : result.games) {
      result.results.add(g.player1_points());
      result.style1.add(game_style(g.record, g.player1_white));
      result.style2.add(game_style(g.record, !g.player1_white));
    }
    for (int i = 0; i + 1 < counted; i += 2)
      result.pairs.add(result.games[i].player1_points() + result.games[i + 1].player1_points());
    result.sprt = sprt_;
    result.stopped_by_sprt = sprt_stop_at_ >= 0;
    result.stopped = outside_stop() && sprt_stop_at_ < 0 && counted < config_.games;
    if (!config_.record_path.empty()) {
      std::vector<GameRecord> records;
      for (const MatchGame& g : result.games) records.push_back(g.record);
      try {
        write_pgn_file(config_.record_path, records);
      } catch (const std::exception& e) {
        throw MatchError(e.what());
      }
    }
    return result;
  }

 private:
  double elapsed() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }

  bool outside_stop() const { return config_.stop && config_.stop->load(std::memory_order_relaxed); }
  bool stopping() const { return stop_ || outside_stop(); }

  void fail(const std::string& message) {
    std::lock_guard lock(mutex_);
    if (error_.empty()) error_ = message;
    stop_ = true;
  }

  std::unique_ptr<Player> make(const PlayerFactory& factory, int which) {
    std::unique_ptr<Player> p;
    try {
      p = factory();
    } catch (...) {
      throw MatchError("cannot create player " + std::to_string(which) + ": " +
                       describe_exception(std::current_exception()));
    }
    if (!p) throw MatchError("cannot create player " + std::to_string(which) + ": the factory gave none");
    return p;
  }

  void work() {
    try {
      std::unique_ptr<Player> p1 = make(factory1_, 1);
      std::unique_ptr<Player> p2 = make(factory2_, 2);
      const auto [name1, name2] = record_names(*p1, *p2);
      {
        std::lock_guard lock(mutex_);
        if (name1_.empty()) {
          name1_ = name1;
          name2_ = name2;
          check_resumed_names();
        }
      }
      while (!stopping()) {
        int index = next_game_++;
        while (index < config_.games && resumed_[index]) index = next_game_++;
        if (index >= config_.games) break;
        std::optional<MatchGame> game = play_game(index, *p1, *p2, name1, name2);
        if (!game) break;
        finish(std::move(*game));
      }
    } catch (const std::exception& e) {
      fail(e.what());
    }
  }

  // Game `index` before it is played: its opening pair and colours.
  static MatchGame round_game(int index) {
    MatchGame game;
    game.index = index;
    game.opening = index / 2;
    game.player1_white = index % 2 == 0;
    return game;
  }

  // One game; nullopt when the match stopped while it was being played.
  std::optional<MatchGame> play_game(int index, Player& p1, Player& p2, const std::string& name1,
                                     const std::string& name2) {
    MatchGame game = round_game(index);
    GameRecord& record = game.record;
    record.event = config_.event;
    record.site = config_.site;
    record.date = config_.date;
    record.round = std::to_string(index + 1);
    record.white = game.player1_white ? name1 : name2;
    record.black = game.player1_white ? name2 : name1;
    record.rules = config_.rules;
    const Opening opening = make_opening(config_, game.opening);
    record.fen = opening.fen;
    record.moves = opening.plies;
    record.opening_plies = static_cast<int>(opening.plies.size());
    Position pos = first_position(record);
    for (const Move& m : opening.plies) pos.make(m);

    const auto who = [&](bool player1, Color side) {
      return "player " + std::string(player1 ? "1 '" + name1 : "2 '" + name2) + "' (" +
             (side == kWhite ? "White" : "Black") + ")";
    };
    for (int which = 1; which <= 2; ++which) {
      try {
        (which == 1 ? p1 : p2).new_game();
      } catch (...) {
        throw MatchError("player " + std::to_string(which) + " failed to start game " + std::to_string(index + 1) +
                         ": " + describe_exception(std::current_exception()));
      }
    }
    for (int ply = 0;; ++ply) {
      const GameStatus status = game_status(pos);
      if (status.over()) {
        record.result = status.outcome;
        record.termination = termination_name(status.termination);
        break;
      }
      if (ply >= config_.max_plies) {
        record.result = Outcome::kDraw;
        record.termination = kMaxPliesTermination;
        break;
      }
      if (stopping()) return std::nullopt;
      const Color side = pos.side_to_move();
      const bool player1_moves = (side == kWhite) == game.player1_white;
      Player& mover = player1_moves ? p1 : p2;
      const std::string where =
          "in game " + std::to_string(index + 1) + ", ply " + std::to_string(record.moves.size() + 1);
      const std::uint64_t key = pos.key();
      const int game_ply = pos.game_ply();
      MoveChoice choice;
      try {
        choice = mover.choose(pos, move_seed(config_.seed, index, ply));
      } catch (...) {
        throw MatchError(who(player1_moves, side) + " failed " + where + ": " +
                         describe_exception(std::current_exception()));
      }
      if (pos.key() != key || pos.game_ply() != game_ply)
        throw MatchError(who(player1_moves, side) + " left the position changed " + where);
      MoveList legal;
      generate_legal(pos, legal);
      const Move* found = std::find(legal.begin(), legal.end(), choice.move);
      if (found == legal.end())
        throw MatchError(who(player1_moves, side) + " chose the illegal move '" + to_coordinate(choice.move) + "' " +
                         where + " (" + pos.fen() + ")");
      pos.make(*found);
      record.moves.push_back(*found);
    }
    return game;
  }

  // A game of the earlier run, checked against what this match would play
  // in its round, then counted as if just played (no progress report).
  void admit(const GameRecord& record) {
    const std::string which = "resumed game (Round \"" + record.round + "\")";
    int index = -1;
    const auto [end, ec] = std::from_chars(record.round.data(), record.round.data() + record.round.size(), index);
    if (ec != std::errc() || end != record.round.data() + record.round.size() || index < 1 || index > config_.games)
      throw std::invalid_argument(which + ": the round must be a number from 1 to the match's " +
                                  std::to_string(config_.games) + " games");
    --index;
    if (resumed_[index]) throw std::invalid_argument(which + ": the round appears twice");
    if (record.result == Outcome::kOngoing) throw std::invalid_argument(which + ": the game has no result");
    if (!(record.rules == config_.rules))
      throw std::invalid_argument(which + ": played under the rules '" + record.rules.name() + "', not '" +
                                  config_.rules.name() + "'");
    const Opening opening = make_opening(config_, index / 2);
    const bool same_opening =
        record.fen == opening.fen && record.opening_plies == static_cast<int>(opening.plies.size()) &&
        record.moves.size() >= opening.plies.size() &&
        std::equal(opening.plies.begin(), opening.plies.end(), record.moves.begin());
    if (!same_opening)
      throw std::invalid_argument(which +
                                  ": not this match's opening for its round (resume with the --seed, --rules, "
                                  "--openings and --opening-plies of the run that wrote it)");
    resumed_[index] = true;
    MatchGame game = round_game(index);
    game.record = record;
    std::lock_guard lock(mutex_);
    count(std::move(game));
  }

  // Under the lock, once the players' names are known.
  void check_resumed_names() {
    for (int i = 0; i < config_.games; ++i) {
      if (!resumed_[i] || !finished_[i]) continue;
      const GameRecord& r = finished_[i]->record;
      const bool player1_white = finished_[i]->player1_white;
      const std::string& white = player1_white ? name1_ : name2_;
      const std::string& black = player1_white ? name2_ : name1_;
      if (r.white != white || r.black != black)
        throw MatchError("resumed game (Round \"" + r.round + "\"): played by '" + r.white + "' (White) and '" +
                         r.black + "' (Black), but this match's players are '" + white + "' and '" + black +
                         "' in that round");
    }
  }

  void finish(MatchGame game) {
    std::lock_guard lock(mutex_);
    if (!count(std::move(game))) return;
    try {
      if (!config_.record_path.empty() && config_.record_every > 0 && games_done_ % config_.record_every == 0) {
        std::vector<GameRecord> records;
        for (const auto& g : finished_)
          if (g) records.push_back(g->record);
        write_pgn_file(config_.record_path, records);
      }
      if (progress_) {
        MatchProgress p;
        p.games_done = games_done_;
        p.games_resumed = static_cast<int>(config_.resumed.size());
        p.games_total = config_.games;
        p.results = finished_results_;
        p.seconds = elapsed();
        p.sprt = sprt_;
        progress_(p);
      }
    } catch (const std::exception& e) {
      if (error_.empty()) error_ = e.what();
      stop_ = true;
    }
  }

  // Counts a finished game (under the lock); false when it lies beyond
  // the SPRT's decision and does not count.
  bool count(MatchGame game) {
    const int index = game.index;
    if (sprt_stop_at_ >= 0 && index >= sprt_stop_at_) return false;
    finished_results_.add(game.player1_points());
    ++games_done_;
    finished_[index] = std::move(game);
    // The SPRT looks at the games in index order, so where it stops does not
    // depend on which worker finished first.
    while (prefix_ < config_.games && finished_[prefix_] && sprt_stop_at_ < 0) {
      prefix_results_.add(finished_[prefix_]->player1_points());
      ++prefix_;
      if (config_.sprt) {
        sprt_ = sprt(prefix_results_, *config_.sprt);
        if (sprt_->verdict != SprtVerdict::kContinue) {
          sprt_stop_at_ = prefix_;
          stop_ = true;
        }
      }
    }
    return true;
  }

  const PlayerFactory& factory1_;
  const PlayerFactory& factory2_;
  const MatchConfig& config_;
  const MatchProgressCallback& progress_;
  std::chrono::steady_clock::time_point start_;

  std::atomic<int> next_game_{0};
  std::atomic<bool> stop_{false};

  std::mutex mutex_;  // guards everything below
  std::vector<std::optional<MatchGame>> finished_;  // by index
  std::vector<char> resumed_;  // by index: from config.resumed (set before the workers start)
  int games_done_ = 0;
  Wdl finished_results_;
  int prefix_ = 0;  // games 0..prefix_-1 have all finished
  Wdl prefix_results_;
  std::optional<SprtState> sprt_;
  int sprt_stop_at_ = -1;
  std::string error_;
  std::string name1_, name2_;
};

}  // namespace

std::string describe_exception(const std::exception_ptr& error) {
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
    return "an unknown exception";
  }
}

std::uint64_t move_seed(std::uint64_t match_seed, int game, int ply) {
  return combine(combine(combine(match_seed, kMoveStream), static_cast<std::uint64_t>(game)),
                 static_cast<std::uint64_t>(ply));
}

Opening make_opening(const MatchConfig& config, int k) {
  Opening opening;
  if (!config.opening_fens.empty()) opening.fen = config.opening_fens[k % config.opening_fens.size()];
  const Position base =
      opening.fen.empty() ? Position::start(config.rules) : Position::from_fen(opening.fen, config.rules);
  // The start position given as a FEN is still the start position: records
  // then carry no FEN tag.
  if (base.fen() == Position::start(config.rules).fen()) opening.fen.clear();
  const int span = config.opening_max_plies - config.opening_min_plies + 1;
  for (int attempt = 0; attempt < kOpeningAttempts; ++attempt) {
    // Plain modulo instead of std::uniform_int_distribution: the same
    // openings with every standard library.
    std::mt19937_64 rng(combine(combine(combine(config.seed, kOpeningStream), static_cast<std::uint64_t>(k)),
                                static_cast<std::uint64_t>(attempt)));
    const int plies = config.opening_min_plies + static_cast<int>(rng() % static_cast<std::uint64_t>(span));
    Position pos = base;
    opening.plies.clear();
    bool over = game_status(pos).over();
    for (int i = 0; i < plies && !over; ++i) {
      MoveList list;
      generate_legal(pos, list);
      const Move m = list[static_cast<int>(rng() % static_cast<std::uint64_t>(list.size()))];
      pos.make(m);
      opening.plies.push_back(m);
      over = game_status(pos).over();
    }
    if (!over) return opening;
  }
  throw MatchError("no opening found for opening " + std::to_string(k + 1) + " in " +
                   std::to_string(kOpeningAttempts) + " tries: every one ended the game");
}

double MatchGame::player1_points() const {
  switch (record.result) {
    case Outcome::kWhiteWins: return player1_white ? 1.0 : 0.0;
    case Outcome::kBlackWins: return player1_white ? 0.0 : 1.0;
    default: return 0.5;
  }
}

MatchResult play_match(const PlayerFactory& player1, const PlayerFactory& player2, const MatchConfig& config,
                       const MatchProgressCallback& progress) {
  validate(config);
  if (!config.record_path.empty()) {
    // Fail before playing, not after an hour of games, when the file cannot
    // be written; the probe uses the temporary name, so an existing record
    // file stays as it is until the match writes it.
    const std::string probe = config.record_path + ".tmp";
    if (!std::ofstream(probe, std::ios::app))
      throw std::invalid_argument("cannot write '" + config.record_path + "': " + std::strerror(errno));
    std::error_code ignored;
    std::filesystem::remove(probe, ignored);
  }
  MatchRunner runner(player1, player2, config, progress);
  return runner.run();
}

}  // namespace ultima
