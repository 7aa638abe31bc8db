// Self-play (selfplay/selfplay.h) with the material evaluator: games and
// their samples, resignation, the teacher's warm-start games and labels,
// tactics games' proven mates, and run_selfplay's exactly-once shards
// across a stop and a restart.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <filesystem>
#include <functional>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "engine/mcts/material_evaluator.h"
#include "engine/play/level.h"
#include "engine/play/match.h"
#include "engine/play/pgn.h"
#include "engine/play/puzzle.h"
#include "engine/play/value_fit.h"
#include "engine/rules/notation.h"
#include "engine/search/search.h"
#include "nn/data/run_dir.h"
#include "nn/data/sample.h"
#include "nn/policy_index.h"
#include "selfplay/selfplay.h"
#include "test_util.h"

namespace ultima {
namespace {

using namespace ultima::data;
using namespace ultima::selfplay;
namespace fs = std::filesystem;

using test::TempDir;
using test::file_names;

// ---------------------------------------------------------------------------
// Self-play games with the material evaluator

SelfPlayConfig tiny_selfplay() {
  SelfPlayConfig c;
  c.rules = Rules::parse("abbott1963");
  c.full_playouts = 8;
  c.cheap_playouts = 4;
  c.full_search_share = 0.5;
  c.mcts.batch_size = 4;
  c.max_plies = 60;
  c.parallel_games = 2;
  c.games_per_shard = 2;
  // The PUCT path with visit targets, resignation on and no adjudication
  // (the recipe's Gumbel root has tests of its own, which set it).
  c.policy_target = "visits";
  c.mcts.gumbel = false;
  c.mcts.gumbel_rescale_q = true;
  c.mcts.gumbel_c_scale = 0.1f;
  c.mcts.mate_scan = false;
  c.temperature_end = 0.1;
  c.temperature_halflife = 20;
  c.resign_threshold = 0.9;
  c.adjudicate_cp = 0;
  return c;
}

std::shared_ptr<Evaluator> material() { return std::make_shared<MaterialEvaluator>(); }

// Checks a game against its record: lengths, results, legal policy slots.
void check_game(const SelfPlayGame& game, const SelfPlayConfig& config) {
  const GameRecord& r = game.record;
  const int length = static_cast<int>(r.moves.size());
  ASSERT_NE(r.result, Outcome::kOngoing);
  ASSERT_LE(length, config.max_plies);
  if (game.cut) {
    EXPECT_EQ(length, config.max_plies);
    EXPECT_EQ(r.result, Outcome::kDraw);
    EXPECT_EQ(r.termination, kMaxPliesTermination);
    if (config.adjudicate_cp > 0) {
      EXPECT_LT(std::abs(material_lead(final_position(r))), config.adjudicate_cp);
    }
  } else if (game.adjudicated) {
    EXPECT_EQ(length, config.max_plies);
    EXPECT_EQ(r.termination, kMaterialAdjudication);
    const int lead = material_lead(final_position(r));
    EXPECT_GE(std::abs(lead), config.adjudicate_cp);
    EXPECT_GT(config.adjudicate_cp, 0);
    EXPECT_EQ(r.result, lead > 0 ? Outcome::kWhiteWins : Outcome::kBlackWins);
  } else if (!game.resigned) {
    const GameStatus status = game_status(final_position(r));
    EXPECT_TRUE(status.over());
    EXPECT_EQ(status.outcome, r.result);
  } else {
    EXPECT_EQ(r.termination, "resignation");
    EXPECT_NE(r.result, Outcome::kDraw);
  }
  Position pos = Position::start(config.rules);
  int ply = 0;
  for (const Sample& s : game.samples) {
    // The last sample may be the position where a side resigned.
    ASSERT_LE(s.ply, length) << "a sample after the game's end";
    if (s.ply == length) {
      EXPECT_TRUE(game.resigned) << "a sample of the final position";
    }
    EXPECT_EQ(s.ply + s.plies_to_end, length);
    while (ply < s.ply) pos.make(r.moves[ply++]);
    Sample expected;
    pack_position(pos, expected);
    EXPECT_EQ(expected.planes, s.planes) << "ply " << s.ply;
    EXPECT_EQ(s.white_to_move, pos.side_to_move() == kWhite ? 1 : 0);
    const int want = r.result == Outcome::kDraw ? 0 : ((r.result == Outcome::kWhiteWins) == (s.white_to_move == 1) ? 1 : -1);
    EXPECT_EQ(s.result, want) << "ply " << s.ply;
    // Only a game cut at the length limit lacks a result.
    EXPECT_EQ((s.flags & kNoResult) != 0, game.cut) << "ply " << s.ply;
    MoveList list;
    generate_legal(pos, list);
    std::set<int> legal;
    for (const Move& m : list) legal.insert(nn::policy_index(m));
    double sum = 0;
    std::set<int> slots;
    for (const PolicyTarget& t : s.policy) {
      EXPECT_TRUE(legal.count(t.slot)) << "ply " << s.ply << ": slot " << t.slot << " is no legal move";
      EXPECT_TRUE(slots.insert(t.slot).second) << "slot " << t.slot << " twice";
      EXPECT_GT(t.probability, 0.0f);
      sum += t.probability;
    }
    EXPECT_NEAR(sum, 1.0, 1e-4) << "ply " << s.ply;
  }
}

TEST(SelfPlayGame, AGameCutAtTheLimitMarksItsSamplesWithoutResult) {
  SelfPlayConfig config = tiny_selfplay();
  config.max_plies = 6;
  config.resign_threshold = 0;
  const SelfPlayGame game = play_selfplay_game(config, material(), 5, 0);
  ASSERT_TRUE(game.cut);
  ASSERT_FALSE(game.samples.empty());
  for (const Sample& s : game.samples) {
    EXPECT_TRUE(s.flags & kNoResult);
    EXPECT_EQ(s.result, 0);
  }
}

TEST(SelfPlayStats, EtaCountsTheGamesUnderWayAtTheirLengthSoFar) {
  SelfPlayStats s;
  s.seconds = 10;
  // Nothing finished: every game is expected to last max_plies.
  s.moves = 400;
  s.in_progress = 4;
  EXPECT_DOUBLE_EQ(s.eta_seconds(10, 300), (10 * 300 - 400) / 40.0);
  // Two short games finished (20 plies each) while four others are at 100
  // plies: the games under way set the expected length, not the short ones.
  s.games = 2;
  s.finished_moves = 40;
  s.moves = 440;
  EXPECT_DOUBLE_EQ(s.eta_seconds(10, 300), (8 * 100 - 400) / 44.0);
  // Finished games longer than the ones under way set it.
  s.finished_moves = 2 * 250;
  s.moves = 900;
  EXPECT_DOUBLE_EQ(s.eta_seconds(10, 300), (8 * 250 - 400) / 90.0);
  // Shards already there are not played again.
  s.games_skipped = 4;
  EXPECT_DOUBLE_EQ(s.eta_seconds(10, 300), (4 * 250 - 400) / 90.0);
}

TEST(SelfPlayGame, MaterialLeadCountsPieceValuesWithoutKings) {
  const Rules rules = Rules::parse("abbott1963");
  EXPECT_EQ(material_lead(Position::start(rules)), 0);
  // White: king, immobilizer, two pawns; Black: king, long leaper.
  const Position pos = Position::from_fen("4k3/8/8/2l5/8/8/PP6/I3K3 w 0 1", rules);
  EXPECT_EQ(material_lead(pos), 997 + 2 * 100 - 605);
}

TEST(SelfPlayGame, GamesAtTheLimitAreAdjudicatedOnMaterialOrCut) {
  SelfPlayConfig config = tiny_selfplay();
  config.max_plies = 24;
  config.resign_threshold = 0;
  int adjudicated = 0, cut = 0;
  for (int threshold : {150, 1500}) {
    config.adjudicate_cp = threshold;
    for (std::uint64_t seed = 1; seed <= 6; ++seed) {
      SCOPED_TRACE(testing::Message() << "threshold " << threshold << ", seed " << seed);
      const SelfPlayGame game = play_selfplay_game(config, material(), seed, 0);
      check_game(game, config);  // the result follows the final material
      adjudicated += game.adjudicated;
      cut += game.cut;
      if (game.adjudicated) {
        // Adjudicated samples train the value: no no-result flag.
        for (const Sample& s : game.samples) EXPECT_NE(s.result, 0);
      }
    }
  }
  EXPECT_GT(adjudicated, 0);
  EXPECT_GT(cut, 0);
  config.adjudicate_cp = -1;
  EXPECT_THROW(config.validate(), std::invalid_argument);
}

TEST(SelfPlayGame, AGumbelRootPlaysItsChoiceAndTargetsTheImprovedPolicy) {
  SelfPlayConfig config = tiny_selfplay();
  config.mcts.gumbel = true;
  config.policy_target = "gumbel";
  config.full_playouts = 16;
  const SelfPlayGame a = play_selfplay_game(config, material(), 9, 0);
  check_game(a, config);  // legal slots, targets summing to 1, results
  ASSERT_FALSE(a.samples.empty());
  // Improved-policy targets cover every legal move (visit targets only the
  // visited ones).
  bool wider = false;
  for (const Sample& s : a.samples) wider = wider || s.policy.size() > 16;
  EXPECT_TRUE(wider);
  const SelfPlayGame b = play_selfplay_game(config, material(), 9, 0);
  EXPECT_EQ(a.record.moves, b.record.moves);
  EXPECT_EQ(a.samples, b.samples);
  config.mcts.gumbel = false;  // the improved policy needs a Gumbel root
  EXPECT_THROW(config.validate(), std::invalid_argument);
}

// Uniform priors and a drawn value everywhere: only the rules say anything.
class UniformEvaluator : public Evaluator {
 public:
  void evaluate(std::span<const EvalInput> inputs, std::span<EvalOutput> outputs) override {
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      outputs[i].policy.assign(inputs[i].moves->size(), 1.0f);
      outputs[i].win = outputs[i].loss = 0;
      outputs[i].draw = 1;
    }
  }
  std::string name() const override { return "uniform"; }
};

// With the mate scan every mate in one is proven where it stands; self-play
// then plays it, even when the Gumbel plan never sampled it, and makes it
// the whole policy target.
TEST(SelfPlayGame, AProvenWinIsPlayedAndIsTheWholeTarget) {
  SelfPlayConfig config = tiny_selfplay();
  config.mcts.gumbel = true;
  config.policy_target = "gumbel";
  config.mcts.mate_scan = true;
  config.full_search_share = 1;  // a sample at every ply
  config.max_plies = 200;
  int mates = 0;
  for (const bool uniform : {false, true})
    for (std::uint64_t seed = 1; seed <= 6; ++seed) {
      SCOPED_TRACE((uniform ? "uniform, seed " : "material, seed ") + std::to_string(seed));
      const SelfPlayGame game = play_selfplay_game(
          config, uniform ? std::shared_ptr<Evaluator>(std::make_shared<UniformEvaluator>()) : material(), seed, 0);
      check_game(game, config);
      Position pos = Position::start(config.rules);
      std::size_t next_sample = 0;
      for (std::size_t ply = 0; ply < game.record.moves.size(); ++ply) {
        while (next_sample < game.samples.size() && game.samples[next_sample].ply < ply) ++next_sample;
        const Move played = game.record.moves[ply];
        MoveList list;
        generate_legal(pos, list);
        const bool mate_available =
            std::any_of(list.begin(), list.end(), [&](const Move& m) { return wins_at_once(pos, m); });
        if (mate_available) {
          ++mates;
          EXPECT_TRUE(wins_at_once(pos, played)) << "ply " << ply << ": a mate in one was not played";
          ASSERT_LT(next_sample, game.samples.size());
          const Sample& s = game.samples[next_sample];
          EXPECT_EQ(s.ply, ply);
          ASSERT_EQ(s.policy.size(), 1u);
          EXPECT_EQ(s.policy[0].slot, nn::policy_index(played));
        }
        pos.make(played);
      }
    }
  EXPECT_GT(mates, 0);
}

TEST(SelfPlayGame, SamplesAgreeWithTheGameRecord) {
  const SelfPlayConfig config = tiny_selfplay();
  int samples = 0;
  for (std::uint64_t seed = 1; seed <= 4; ++seed) {
    const SelfPlayGame game = play_selfplay_game(config, material(), seed, 3);
    SCOPED_TRACE("seed " + std::to_string(seed));
    check_game(game, config);
    for (const Sample& s : game.samples) EXPECT_EQ(s.game, 3u);
    samples += static_cast<int>(game.samples.size());
    EXPECT_GT(game.playouts, 0u);
  }
  EXPECT_GT(samples, 0);
}

TEST(SelfPlayGame, SameSeedSameGame) {
  const SelfPlayConfig config = tiny_selfplay();
  const SelfPlayGame a = play_selfplay_game(config, material(), 42, 0);
  const SelfPlayGame b = play_selfplay_game(config, material(), 42, 0);
  EXPECT_EQ(a.record.moves, b.record.moves);
  EXPECT_EQ(a.record.result, b.record.result);
  EXPECT_EQ(a.samples, b.samples);
  const SelfPlayGame c = play_selfplay_game(config, material(), 43, 0);
  EXPECT_NE(a.record.moves, c.record.moves);
}

// Value labels from the alpha-beta search (value_nodes): each sample's
// root_q is the learned evaluation's search of its position, history
// included, at the node budget; the game itself is the one played without
// them.
TEST(SelfPlayGame, ValueLabelsAreTheLearnedSearchOfEachSamplesPosition) {
  SelfPlayConfig plain = tiny_selfplay();
  plain.max_plies = 24;
  SelfPlayConfig labelled = plain;
  labelled.value_nodes = 400;
  labelled.value_nnue = "default";
  const SelfPlayGame game = play_selfplay_game(labelled, material(), 5, 0);
  const SelfPlayGame same = play_selfplay_game(plain, material(), 5, 0);
  ASSERT_EQ(game.record.moves, same.record.moves);
  ASSERT_EQ(game.samples.size(), same.samples.size());
  ASSERT_FALSE(game.samples.empty());
  check_game(game, labelled);
  Position pos = Position::start(labelled.rules);
  std::size_t next = 0;
  bool differs = false;  // from the MCTS root's value, somewhere
  for (std::size_t ply = 0; ply <= game.record.moves.size() && next < game.samples.size(); ++ply) {
    if (game.samples[next].ply == ply) {
      SCOPED_TRACE("ply " + std::to_string(ply));
      Searcher reference(2);  // another table size and a fresh searcher: the label does not depend on either
      reference.set_network(load_nnue("default"));
      EXPECT_FLOAT_EQ(game.samples[next].root_q, value_by_search(pos, 400, reference));
      Sample without = same.samples[next];
      differs = differs || without.root_q != game.samples[next].root_q;
      without.root_q = game.samples[next].root_q;
      EXPECT_EQ(without, game.samples[next]) << "only root_q changes";
      ++next;
    }
    if (ply < game.record.moves.size()) pos.make(game.record.moves[ply]);
  }
  EXPECT_EQ(next, game.samples.size());
  EXPECT_TRUE(differs) << "every label equals the MCTS root's value";
}

// On fixed positions the label is the search's score through the fitted
// logistic, the same from a searcher used before, and a mate in one is a
// win.
TEST(ValueBySearch, IsTheSearchsScoreThroughTheLogisticOnFixedPositions) {
  const auto net = load_nnue("default");
  for (const char* fen : {"6pk/5K1p/8/8/3W4/2p5/8/8 w 0 1", "c6k/2X5/4K3/4W3/8/8/3C4/8 w 0 1",
                          "1c6/3i4/8/4I3/8/8/3K4/k7 b 0 1"}) {
    SCOPED_TRACE(fen);
    const Position pos = Position::from_fen(fen);
    Searcher labeller(1), reference(1);
    labeller.set_network(net);
    reference.set_network(net);
    const float label = value_by_search(pos, 2000, labeller);
    SearchLimits limits;
    limits.nodes = 2000;
    Position searched = pos;
    const SearchResult result = reference.search(searched, limits);
    const WdlPermille wdl = score_to_wdl(result.score);
    EXPECT_FLOAT_EQ(label, static_cast<float>(wdl.win - wdl.loss) / 1000.0f);
    EXPECT_FLOAT_EQ(value_by_search(pos, 2000, labeller), label) << "a second label from the same searcher";
  }
  Searcher searcher(1);
  searcher.set_network(net);
  EXPECT_FLOAT_EQ(value_by_search(Position::from_fen("6pk/5K1p/8/8/3W4/2p5/8/8 w 0 1"), 2000, searcher), 1.0f);
}

TEST(SelfPlayConfig, ABadValueNetworkIsRefusedNamingTheKey) {
  SelfPlayConfig config = tiny_selfplay();
  config.value_nnue = "no-such-network.unnue";
  EXPECT_NO_THROW(config.validate()) << "value_nnue is read only with value_nodes";
  config.value_nodes = 100;
  try {
    config.validate();
    FAIL() << "a missing network accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("selfplay: value_nnue"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("no-such-network.unnue"), std::string::npos) << e.what();
  }
}

// Teacher games (the warm start): the alpha-beta searcher's games, every
// position a sample labelled by its MultiPV lines.
TeacherConfig small_teacher() {
  TeacherConfig t;
  t.depth = 1;
  t.multipv = 4;
  t.temperature_cp = 50;
  t.sample_plies = 8;
  return t;
}

TEST(TeacherGame, EveryPositionIsASampleOverTheSearchedLines) {
  SelfPlayConfig config = tiny_selfplay();
  config.max_plies = 40;
  config.adjudicate_cp = 100;
  const TeacherConfig teacher = small_teacher();
  for (std::uint64_t seed = 1; seed <= 3; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    const SelfPlayGame game = play_teacher_game(config, teacher, seed, 5);
    check_game(game, config);  // legal slots summing to 1, results, plies to the end
    ASSERT_EQ(game.samples.size(), game.record.moves.size());
    Position pos = Position::start(config.rules);
    for (std::size_t ply = 0; ply < game.samples.size(); ++ply) {
      const Sample& s = game.samples[ply];
      EXPECT_EQ(s.ply, ply);
      EXPECT_EQ(s.game, 5u);
      EXPECT_LE(s.policy.size(), static_cast<std::size_t>(teacher.multipv));
      EXPECT_GE(s.root_q, -1.0f);
      EXPECT_LE(s.root_q, 1.0f);
      // Past the sampled opening the teacher plays its best line: the
      // target's most likely move.
      const Move played = game.record.moves[ply];
      if (static_cast<int>(ply) >= teacher.sample_plies) {
        const auto top = std::max_element(s.policy.begin(), s.policy.end(), [](const auto& a, const auto& b) {
          return a.probability < b.probability;
        });
        EXPECT_EQ(top->slot, nn::policy_index(played)) << "ply " << ply;
      }
      pos.make(played);
    }
    EXPECT_GT(game.playouts, 0u);  // the searches' nodes
  }
}

// A warm-start label is the searcher's own MultiPV result on the position:
// each line's first move at its softmax weight, the best score through the
// fitted logistic as root_q, the planes of the position searched.
TEST(TeacherLabel, TargetsAreTheSearchedLinesOnFixedPositions) {
  TeacherConfig teacher = small_teacher();
  teacher.depth = 2;
  // The start, and two endgames (mates in three, beyond depth 2), one for each side.
  for (const Position& pos : {Position::start(), Position::from_fen("c6k/2X5/4K3/4W3/8/8/3C4/8 w 0 1"),
                              Position::from_fen("1c6/3i4/8/4I3/8/8/3K4/k7 b 0 1")}) {
    SCOPED_TRACE(pos.fen());
    Searcher labeller(4), reference(4);
    const TeacherLabel label = label_by_teacher(pos, teacher, labeller);
    SearchLimits limits;
    limits.depth = teacher.depth;
    limits.multipv = teacher.multipv;
    Position searched = pos;
    const SearchResult result = reference.search(searched, limits);
    ASSERT_FALSE(result.lines.empty());
    const int best = result.lines.front().score;
    ASSERT_LT(std::abs(best), kMateBound) << "a position without a forced mate";
    double total = 0;
    for (const SearchInfo& line : result.lines) total += std::exp((line.score - best) / teacher.temperature_cp);
    ASSERT_EQ(label.sample.policy.size(), result.lines.size());
    ASSERT_EQ(label.moves.size(), result.lines.size());
    for (std::size_t i = 0; i < result.lines.size(); ++i) {
      const SearchInfo& line = result.lines[i];
      EXPECT_EQ(label.moves[i], line.pv.front());
      EXPECT_EQ(label.sample.policy[i].slot, nn::policy_index(line.pv.front()));
      EXPECT_NEAR(label.sample.policy[i].probability,
                  std::exp((line.score - best) / teacher.temperature_cp) / total, 1e-6);
    }
    const WdlPermille wdl = score_to_wdl(best);
    EXPECT_FLOAT_EQ(label.sample.root_q, static_cast<float>(wdl.win - wdl.loss) / 1000.0f);
    Sample packed;
    pack_position(pos, packed);
    EXPECT_EQ(label.sample.planes, packed.planes);
    EXPECT_EQ(label.sample.white_to_move, packed.white_to_move);
    EXPECT_GT(label.nodes, 0u);
  }
  // A mate in one: the mating move is the whole target, and the value a win.
  const Position mate = Position::from_fen("6pk/5K1p/8/8/3W4/2p5/8/8 w 0 1");
  Searcher searcher(4);
  const TeacherLabel label = label_by_teacher(mate, teacher, searcher);
  ASSERT_EQ(label.sample.policy.size(), 1u);
  EXPECT_EQ(label.sample.policy[0].slot, nn::policy_index(parse_move(mate, "d4g7")));
  EXPECT_FLOAT_EQ(label.sample.policy[0].probability, 1.0f);
  EXPECT_GT(label.sample.root_q, 0.9f);
  EXPECT_GT(label.moves.size(), 1u);  // the other lines stay, at weight 0, for the game to skip
  EXPECT_EQ(label.weights[0], 1.0);
}

// With `nnue` set the teacher searches with that learned evaluation: each
// sample is the network searcher's label of its position, and a file that
// cannot be read is refused naming the key.
TEST(TeacherGame, TheLearnedEvaluationLabelsTheSamples) {
  SelfPlayConfig config = tiny_selfplay();
  config.max_plies = 6;
  TeacherConfig teacher = small_teacher();
  teacher.depth = 2;
  teacher.sample_plies = 0;
  teacher.nnue = "default";
  const SelfPlayGame game = play_teacher_game(config, teacher, 1, 0);
  ASSERT_EQ(game.samples.size(), game.record.moves.size());
  Position pos = Position::start(config.rules);
  bool differs = false;  // from the hand-written evaluation's label, somewhere
  for (std::size_t ply = 0; ply < game.samples.size(); ++ply) {
    SCOPED_TRACE("ply " + std::to_string(ply));
    Searcher learned(4), hand(4);
    learned.set_network(load_nnue("default"));
    const TeacherLabel label = label_by_teacher(pos, teacher, learned);
    EXPECT_EQ(game.samples[ply].policy, label.sample.policy);
    EXPECT_FLOAT_EQ(game.samples[ply].root_q, label.sample.root_q);
    const TeacherLabel other = label_by_teacher(pos, teacher, hand);
    differs = differs || other.sample.policy != label.sample.policy || other.sample.root_q != label.sample.root_q;
    pos.make(game.record.moves[ply]);
  }
  EXPECT_TRUE(differs) << "the learned evaluation labelled every position as the hand-written one";
  teacher.nnue = "no-such-network.unnue";
  try {
    teacher.validate();
    FAIL() << "a missing network accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("warm_start: nnue"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("no-such-network.unnue"), std::string::npos) << e.what();
  }
}

// A tactics sample: the position the record's random moves reach, where
// the side to move mates in N; the policy target spread evenly over moves
// that mate that fast (those of a mate in one checked by trying each legal
// move with the rules' end test); a win in 2N - 1 plies.
void check_tactics_game(const SelfPlayGame& game, const SelfPlayConfig& config, bool value = true) {
  const GameRecord& r = game.record;
  EXPECT_EQ(r.result, Outcome::kOngoing);
  EXPECT_EQ(r.opening_plies, static_cast<int>(r.moves.size()));
  ASSERT_EQ(game.samples.size(), 1u);
  const Sample& s = game.samples.front();
  Position pos = Position::start(config.rules);
  for (const Move& m : r.moves) pos.make(m);
  EXPECT_FALSE(game_status(pos).over());
  Sample expected;
  pack_position(pos, expected);
  EXPECT_EQ(s.planes, expected.planes);
  EXPECT_EQ(s.white_to_move, expected.white_to_move);
  EXPECT_EQ(s.ply, r.moves.size());
  // Without the value target: the policy alone, as a game cut without result.
  EXPECT_EQ(s.result, value ? 1 : 0);
  EXPECT_EQ(s.root_q, value ? 1.0f : 0.0f);
  EXPECT_EQ((s.flags & kNoResult) != 0, !value);
  const int moves = (s.plies_to_end + 1) / 2;
  ASSERT_TRUE(s.plies_to_end == 1 || s.plies_to_end == 3) << s.plies_to_end;
  EXPECT_EQ(r.termination, "mate in " + std::to_string(moves) + " to play");
  Searcher searcher(4);
  std::set<int> mating;
  for (const Move& m : mating_moves(pos, moves, searcher)) mating.insert(nn::policy_index(m));
  std::set<int> mate_in_one;
  for (const Move& m : test::mates_in_one_by_trying(pos)) mate_in_one.insert(nn::policy_index(m));
  EXPECT_EQ(mate_in_one.empty(), moves == 2) << "the mate's length";
  std::set<int> slots;
  for (const PolicyTarget& t : s.policy) {
    EXPECT_TRUE(slots.insert(t.slot).second) << "slot " << t.slot << " twice";
    EXPECT_FLOAT_EQ(t.probability, 1.0f / static_cast<float>(s.policy.size()));
    if (moves == 1) {
      EXPECT_TRUE(mate_in_one.count(t.slot)) << "slot " << t.slot << " does not mate";
    }
  }
  EXPECT_EQ(slots, mating);
  EXPECT_FALSE(slots.empty());
}

TEST(TacticsGame, TheSampleIsAProvenMateOverItsMatingMoves) {
  SelfPlayConfig config = tiny_selfplay();
  TacticsConfig tactics;
  int lengths[3] = {0, 0, 0};
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    const SelfPlayGame game = play_tactics_game(config, tactics, seed, 5);
    SCOPED_TRACE("seed " + std::to_string(seed));
    check_tactics_game(game, config);
    ASSERT_EQ(game.samples.size(), 1u);
    EXPECT_EQ(game.samples[0].game, 5u);
    ++lengths[(game.samples[0].plies_to_end + 1) / 2];
    // The seed gives the same sample.
    EXPECT_EQ(play_tactics_game(config, tactics, seed, 5).samples, game.samples);
  }
  EXPECT_GT(lengths[1], 0);
  EXPECT_GT(lengths[2], 0);
  // max_moves 1: mates in one only; value false: the policy target alone.
  tactics.max_moves = 1;
  tactics.value = false;
  for (std::uint64_t seed = 1; seed <= 3; ++seed) {
    const SelfPlayGame game = play_tactics_game(config, tactics, seed, 0);
    check_tactics_game(game, config, false);
    EXPECT_EQ(game.samples.at(0).plies_to_end, 1);
  }
  tactics.max_moves = 4;
  EXPECT_THROW(play_tactics_game(config, tactics, 1, 0), std::invalid_argument);
}

TEST(TacticsGame, TheLongestShareDrawsMatesOfTheLongestLength) {
  SelfPlayConfig config = tiny_selfplay();
  TacticsConfig tactics;
  // The seeds that give a mate in one with the first mate found.
  std::vector<std::uint64_t> quick;
  for (std::uint64_t seed = 1; seed <= 8; ++seed)
    if (play_tactics_game(config, tactics, seed, 0).samples.at(0).plies_to_end == 1) quick.push_back(seed);
  ASSERT_FALSE(quick.empty());
  // Share 1: every position is a proven mate in exactly two (the check
  // tries every move for a mate in one and finds none).
  tactics.longest_share = 1;
  for (std::uint64_t seed : quick) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    const SelfPlayGame game = play_tactics_game(config, tactics, seed, 0);
    check_tactics_game(game, config);
    EXPECT_EQ(game.samples.at(0).plies_to_end, 3);
    EXPECT_EQ(play_tactics_game(config, tactics, seed, 0).samples, game.samples);
  }
  // A share between draws both lengths over the seeds.
  tactics.longest_share = 0.5;
  int lengths[3] = {0, 0, 0};
  for (std::uint64_t seed = 1; seed <= 12; ++seed) {
    const SelfPlayGame game = play_tactics_game(config, tactics, seed, 0);
    check_tactics_game(game, config);
    ++lengths[(game.samples.at(0).plies_to_end + 1) / 2];
  }
  EXPECT_GT(lengths[1], 0);
  EXPECT_GT(lengths[2], 0);
  for (double bad : {-0.1, 1.5, std::nan("")}) {
    tactics.longest_share = bad;
    EXPECT_THROW(play_tactics_game(config, tactics, 1, 0), std::invalid_argument) << bad;
  }
}

TEST(TacticsGame, TheSparseShareDrawsMatesFromThinBoards) {
  SelfPlayConfig config = tiny_selfplay();
  TacticsConfig tactics;
  const auto pieces = [&](const SelfPlayGame& game) {
    Position pos = Position::start(config.rules);
    for (const Move& m : game.record.moves) pos.make(m);
    return popcount(pos.occupied());
  };
  // Share 1: every position stands on a thin board, and is a proven mate.
  tactics.sparse_share = 1;
  tactics.sparse_pieces = 10;
  for (std::uint64_t seed = 1; seed <= 4; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    const SelfPlayGame game = play_tactics_game(config, tactics, seed, 0);
    check_tactics_game(game, config);
    EXPECT_LE(pieces(game), 10);
    EXPECT_EQ(play_tactics_game(config, tactics, seed, 0).samples, game.samples);
  }
  // A share between draws both kinds over the seeds; ordinary random play
  // is probed from ply 20 on and rarely captures, so its boards stay full.
  tactics.sparse_share = 0.5;
  int thin = 0, full = 0;
  for (std::uint64_t seed = 1; seed <= 12; ++seed) {
    const SelfPlayGame game = play_tactics_game(config, tactics, seed, 0);
    check_tactics_game(game, config);
    ++(pieces(game) <= 10 ? thin : full);
  }
  EXPECT_GT(thin, 0);
  EXPECT_GT(full, 0);
  for (double bad : {-0.1, 1.5, std::nan("")}) {
    tactics.sparse_share = bad;
    EXPECT_THROW(play_tactics_game(config, tactics, 1, 0), std::invalid_argument) << bad;
  }
  tactics.sparse_share = 0.5;
  for (int bad : {2, 33}) {
    tactics.sparse_pieces = bad;
    EXPECT_THROW(play_tactics_game(config, tactics, 1, 0), std::invalid_argument) << bad;
  }
}

TEST(TeacherGame, TheSeedPicksTheOpeningAndNothingElse) {
  SelfPlayConfig config = tiny_selfplay();
  config.max_plies = 30;
  TeacherConfig teacher = small_teacher();
  const SelfPlayGame a = play_teacher_game(config, teacher, 11, 0);
  const SelfPlayGame b = play_teacher_game(config, teacher, 11, 0);
  EXPECT_EQ(a.record.moves, b.record.moves);
  EXPECT_EQ(a.samples, b.samples);
  EXPECT_NE(play_teacher_game(config, teacher, 12, 0).record.moves, a.record.moves);
  // Without sampled plies the searcher's best line is the whole game,
  // whatever the seed.
  teacher.sample_plies = 0;
  EXPECT_EQ(play_teacher_game(config, teacher, 11, 0).record.moves,
            play_teacher_game(config, teacher, 12, 0).record.moves);
}

TEST(TeacherGame, ASharperTemperatureConcentratesTheTarget) {
  SelfPlayConfig config = tiny_selfplay();
  config.max_plies = 16;
  TeacherConfig teacher = small_teacher();
  teacher.sample_plies = 0;
  auto mean_top = [&](double temperature) {
    teacher.temperature_cp = temperature;
    const SelfPlayGame game = play_teacher_game(config, teacher, 3, 0);
    double sum = 0;
    for (const Sample& s : game.samples) {
      float top = 0;
      for (const PolicyTarget& t : s.policy) top = std::max(top, t.probability);
      sum += top;
    }
    return sum / static_cast<double>(game.samples.size());
  };
  const double sharp = mean_top(5), flat = mean_top(5000);
  EXPECT_GT(sharp, flat);
  EXPECT_LT(flat, 0.5);  // four lines at almost equal weight
}

TEST(TeacherGame, BadSettingsAreRefusedNamingTheKey) {
  for (auto change : std::vector<std::function<void(TeacherConfig&)>>{
           [](TeacherConfig& t) { t.depth = 0; }, [](TeacherConfig& t) { t.multipv = 0; },
           [](TeacherConfig& t) { t.temperature_cp = 0; }, [](TeacherConfig& t) { t.sample_plies = -1; }}) {
    TeacherConfig t = small_teacher();
    change(t);
    EXPECT_THROW(t.validate(), std::invalid_argument);
  }
}

// Games where resignation comes easily: a low threshold, one move below it.
SelfPlayConfig resigning_selfplay() {
  SelfPlayConfig c = tiny_selfplay();
  c.resign_threshold = 0.05;
  c.resign_consecutive = 1;
  c.no_resign_share = 0;
  return c;
}

TEST(SelfPlayGame, ResignsWhenTheValueStaysLow) {
  // The control for the two tests below: these settings do resign.
  const SelfPlayConfig config = resigning_selfplay();
  int resigned = 0;
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    const SelfPlayGame game = play_selfplay_game(config, material(), seed, 0);
    check_game(game, config);
    EXPECT_FALSE(game.no_resign);
    resigned += game.resigned;
  }
  EXPECT_GT(resigned, 0);
}

TEST(SelfPlayGame, NoResignGamesNeverEndByResignation) {
  SelfPlayConfig config = resigning_selfplay();
  config.no_resign_share = 1;
  int would = 0;
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    const SelfPlayGame game = play_selfplay_game(config, material(), seed, 0);
    check_game(game, config);
    EXPECT_TRUE(game.no_resign);
    EXPECT_FALSE(game.resigned);
    EXPECT_NE(game.record.termination, "resignation");
    would += game.would_resign;
    if (!game.would_resign) {
      EXPECT_FALSE(game.false_resign);
    }
  }
  EXPECT_GT(would, 0);
}

TEST(SelfPlayGame, ThresholdZeroNeverResigns) {
  SelfPlayConfig config = resigning_selfplay();
  config.resign_threshold = 0;
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    const SelfPlayGame game = play_selfplay_game(config, material(), seed, 0);
    check_game(game, config);
    EXPECT_FALSE(game.resigned);
    EXPECT_FALSE(game.no_resign);
    EXPECT_FALSE(game.would_resign);
  }
}

// ---------------------------------------------------------------------------
// run_selfplay: every shard exactly once

struct ShardContents {
  std::string name;
  ShardHeader header;
  std::vector<Sample> samples;
};

std::vector<ShardContents> read_all_shards(const RunDir& run) {
  std::vector<ShardContents> out;
  for (const std::string& path : run.shard_paths()) {
    ShardContents c;
    c.name = fs::path(path).filename().string();
    c.samples = read_shard(path, &c.header);
    out.push_back(std::move(c));
  }
  return out;
}

SelfPlayJob job_of(int games) {
  SelfPlayJob job;
  job.tag = "sp";
  job.games = games;
  job.model_version = 4;
  job.seed = 99;
  job.evaluator = material();
  return job;
}

// An evaluator sure that one colour is lost: uniform priors, and a value of
// a near-certain loss whenever that colour is to move (a near-certain win
// for the other), so only that colour's searches fall below the threshold.
class OneSideLostEvaluator : public Evaluator {
 public:
  explicit OneSideLostEvaluator(Color loser) : loser_(loser) {}
  void evaluate(std::span<const EvalInput> inputs, std::span<EvalOutput> outputs) override {
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      const int n = inputs[i].moves->size();
      outputs[i].policy.assign(static_cast<std::size_t>(n), n ? 1.0f / n : 0.0f);
      const bool losing = inputs[i].position->side_to_move() == loser_;
      outputs[i].win = losing ? 0.0f : 0.99f;
      outputs[i].draw = 0.01f;
      outputs[i].loss = losing ? 0.99f : 0.0f;
    }
  }
  std::string name() const override { return "one side lost"; }

 private:
  Color loser_;
};

TEST(SelfPlayGame, TheSideThatSeesItselfLostResigns) {
  SelfPlayConfig config = resigning_selfplay();
  config.resign_consecutive = 2;
  for (const Color loser : {kWhite, kBlack}) {
    SCOPED_TRACE(loser == kWhite ? "White lost" : "Black lost");
    const SelfPlayGame game = play_selfplay_game(config, std::make_shared<OneSideLostEvaluator>(loser), 5, 0);
    check_game(game, config);
    ASSERT_TRUE(game.resigned);
    EXPECT_EQ(game.record.termination, "resignation");
    EXPECT_EQ(game.record.result, loser == kWhite ? Outcome::kBlackWins : Outcome::kWhiteWins);
    // It resigns on its second move, instead of playing it: White after
    // one move each (2 plies), Black after two of White's and one of its own.
    EXPECT_EQ(game.record.moves.size(), loser == kWhite ? 2u : 3u);
    EXPECT_EQ(final_position(game.record).side_to_move(), loser);
    for (const Sample& s : game.samples)
      EXPECT_EQ(s.result, (s.white_to_move == 1) == (loser == kWhite) ? -1 : 1) << "ply " << s.ply;
  }
}

TEST(SelfPlayGame, AFalseResignationIsCountedAsOne) {
  // White would resign, but in a no-resign game it plays on and the game
  // is cut without a result (no adjudication): White did not lose.
  SelfPlayConfig config = resigning_selfplay();
  config.no_resign_share = 1;
  config.max_plies = 8;
  config.adjudicate_cp = 0;
  const SelfPlayGame game = play_selfplay_game(config, std::make_shared<OneSideLostEvaluator>(kWhite), 5, 0);
  check_game(game, config);
  EXPECT_TRUE(game.no_resign);
  EXPECT_FALSE(game.resigned);
  EXPECT_TRUE(game.cut);
  EXPECT_TRUE(game.would_resign);
  EXPECT_TRUE(game.false_resign);

  // The same through a worker: every game counts in the statistics and
  // the false-resign rate.
  TempDir dir("sp-false-resign");
  const RunDir run(dir.path());
  SelfPlayJob job = job_of(4);
  job.evaluator = std::make_shared<OneSideLostEvaluator>(kWhite);
  const SelfPlayStats stats = run_selfplay(run, config, job);
  EXPECT_EQ(stats.games, 4);
  EXPECT_EQ(stats.no_resign_games, 4);
  EXPECT_EQ(stats.would_resign, 4);
  EXPECT_EQ(stats.false_resign, 4);
  EXPECT_DOUBLE_EQ(stats.false_resign_rate(), 1.0);
  EXPECT_EQ(stats.resigned, 0);

  // With resignation allowed the same games end at once, all won by Black,
  // and none is counted as a false resignation.
  config.no_resign_share = 0;
  TempDir dir2("sp-true-resign");
  const SelfPlayStats resigning = run_selfplay(RunDir(dir2.path()), config, job);
  EXPECT_EQ(resigning.resigned, 4);
  EXPECT_EQ(resigning.black_wins, 4);
  EXPECT_EQ(resigning.would_resign, 0);
  EXPECT_EQ(resigning.false_resign, 0);
}

// A job stopped after its first shard and run again: the same shards,
// samples and games as one uninterrupted run, none lost and none twice.
void expect_stopped_and_resumed_equal_whole(const SelfPlayConfig& config, const SelfPlayJob& job) {

  TempDir whole_dir("sp-whole");
  const RunDir whole(whole_dir.path());
  const SelfPlayStats all = run_selfplay(whole, config, job);
  EXPECT_EQ(all.games, 8);
  EXPECT_EQ(all.games_skipped, 0);
  EXPECT_EQ(all.shards, 4);
  EXPECT_EQ(whole.shard_sequences("sp"), (std::vector<int>{0, 1, 2, 3}));

  TempDir parts_dir("sp-parts");
  const RunDir parts(parts_dir.path());
  std::atomic<bool> stop{false};
  const SelfPlayStats first = run_selfplay(
      parts, config, job, [&](const SelfPlayStats& s, int) { if (s.shards >= 1) stop = true; }, &stop);
  EXPECT_EQ(first.shards, 1);
  EXPECT_EQ(parts.shard_sequences("sp"), (std::vector<int>{0}));
  // Whole files only: no temporary file left behind, one PGN for the shard.
  EXPECT_EQ(file_names(parts.path("selfplay")), (std::vector<std::string>{"sp-000000.shard"}));
  EXPECT_EQ(file_names(parts.path("games")), (std::vector<std::string>{"sp-000000.pgn"}));

  stop = false;
  const SelfPlayStats second = run_selfplay(parts, config, job, {}, &stop);
  EXPECT_EQ(second.games_skipped, 2);
  EXPECT_EQ(second.games, 6);
  EXPECT_EQ(second.shards, 3);
  // A third run has nothing left to do.
  const SelfPlayStats third = run_selfplay(parts, config, job);
  EXPECT_EQ(third.games_skipped, 8);
  EXPECT_EQ(third.games, 0);
  EXPECT_EQ(third.shards, 0);

  const auto expected = read_all_shards(whole), got = read_all_shards(parts);
  ASSERT_EQ(got.size(), expected.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    SCOPED_TRACE(got[i].name);
    EXPECT_EQ(got[i].name, expected[i].name);
    EXPECT_EQ(got[i].header.games, 2u);
    EXPECT_EQ(got[i].header.model_version, 4u);
    EXPECT_EQ(got[i].header.rules, config.rules.name());
    EXPECT_EQ(got[i].header.samples, got[i].samples.size());
    EXPECT_EQ(got[i].samples, expected[i].samples);
  }
  EXPECT_EQ(file_names(parts.path("selfplay")), file_names(whole.path("selfplay")));

  // The games of each shard, in order, and the samples agree with them.
  for (int shard = 0; shard < 4; ++shard) {
    const std::vector<GameRecord> games = read_pgn_file(parts.games_path("sp", shard));
    ASSERT_EQ(games.size(), 2u) << "shard " << shard;
    const std::vector<GameRecord> same = read_pgn_file(whole.games_path("sp", shard));
    ASSERT_EQ(same.size(), 2u);
    for (int g = 0; g < 2; ++g) {
      EXPECT_EQ(games[g].round, std::to_string(shard * 2 + g + 1));
      EXPECT_EQ(games[g].moves, same[g].moves);
      EXPECT_EQ(games[g].result, same[g].result);
      SelfPlayGame as_played;
      as_played.record = games[g];
      as_played.resigned = games[g].termination == "resignation";
      as_played.cut = games[g].termination == kMaxPliesTermination;
      for (const Sample& s : got[shard].samples)
        if (s.game == static_cast<std::uint32_t>(g)) as_played.samples.push_back(s);
      SCOPED_TRACE("shard " + std::to_string(shard) + " game " + std::to_string(g));
      if (job.tactics)
        check_tactics_game(as_played, config);
      else
        check_game(as_played, config);
    }
  }
}

TEST(RunSelfPlay, StoppedThenResumedEqualsAnUninterruptedRun) {
  SelfPlayConfig config = tiny_selfplay();
  config.parallel_games = 1;
  expect_stopped_and_resumed_equal_whole(config, job_of(8));
}

// The warm start's games resume the same way, in the middle of a generation.
TEST(RunSelfPlay, AStoppedWarmStartResumesWithoutLossOrDuplicates) {
  SelfPlayConfig config = tiny_selfplay();
  config.parallel_games = 1;
  config.max_plies = 20;
  SelfPlayJob job = job_of(8);
  job.evaluator = nullptr;
  job.teacher = small_teacher();
  expect_stopped_and_resumed_equal_whole(config, job);
}

// And self-play whose values the learned evaluation's search labels.
TEST(RunSelfPlay, AStoppedJobWithValueLabelsResumesWithoutLossOrDuplicates) {
  SelfPlayConfig config = tiny_selfplay();
  config.parallel_games = 1;
  config.max_plies = 20;
  config.value_nodes = 200;
  config.value_nnue = "default";
  expect_stopped_and_resumed_equal_whole(config, job_of(8));
}

// And a tactics job's mates.
TEST(RunSelfPlay, AStoppedTacticsJobResumesWithoutLossOrDuplicates) {
  SelfPlayConfig config = tiny_selfplay();
  config.parallel_games = 1;
  SelfPlayJob job = job_of(8);
  job.evaluator = nullptr;
  job.tactics = TacticsConfig{};
  job.tactics->max_moves = 1;
  expect_stopped_and_resumed_equal_whole(config, job);
}

TEST(RunSelfPlay, ShardsDoNotDependOnThreadsOrJobSize) {
  // Game g's seed comes from the job's seed and g alone.
  SelfPlayConfig one = tiny_selfplay();
  one.parallel_games = 1;
  SelfPlayConfig two = tiny_selfplay();
  two.parallel_games = 2;
  TempDir a_dir("sp-threads-a"), b_dir("sp-threads-b");
  const RunDir a(a_dir.path()), b(b_dir.path());
  run_selfplay(a, one, job_of(4));
  run_selfplay(b, two, job_of(5));  // a third, partial shard
  const auto sa = read_all_shards(a), sb = read_all_shards(b);
  ASSERT_EQ(sa.size(), 2u);
  ASSERT_EQ(sb.size(), 3u);
  EXPECT_EQ(sb[2].header.games, 1u);
  for (std::size_t i = 0; i < sa.size(); ++i) EXPECT_EQ(sa[i].samples, sb[i].samples) << sa[i].name;
}

TEST(RunSelfPlay, ShardKeepsItsGamesInOrder) {
  // More than nine games in one shard: game 10 must come after game 2.
  SelfPlayConfig config = tiny_selfplay();
  config.max_plies = 6;
  config.full_search_share = 1;
  config.games_per_shard = 11;
  TempDir dir("sp-order");
  const RunDir run(dir.path());
  run_selfplay(run, config, job_of(11));
  const std::vector<GameRecord> games = read_pgn_file(run.games_path("sp", 0));
  ASSERT_EQ(games.size(), 11u);
  for (int g = 0; g < 11; ++g) EXPECT_EQ(games[g].round, std::to_string(g + 1)) << "game " << g << " of the file";
  const std::vector<Sample> samples = read_shard(run.shard_path("sp", 0));
  ASSERT_FALSE(samples.empty());
  for (std::size_t i = 1; i < samples.size(); ++i)
    EXPECT_LE(samples[i - 1].game, samples[i].game) << "sample " << i;
}

TEST(RunSelfPlay, ATeacherJobNeedsNoEvaluatorAndWritesReadableShards) {
  SelfPlayConfig config = tiny_selfplay();
  config.max_plies = 20;
  SelfPlayJob job = job_of(4);
  job.evaluator = nullptr;
  job.teacher = small_teacher();
  TempDir dir("sp-teacher");
  const RunDir run(dir.path());
  const SelfPlayStats stats = run_selfplay(run, config, job);
  EXPECT_EQ(stats.games, 4);
  const auto shards = read_all_shards(run);
  ASSERT_EQ(shards.size(), 2u);
  std::uint64_t samples = 0;
  for (const auto& shard : shards) samples += shard.samples.size();
  EXPECT_EQ(samples, stats.samples);
  EXPECT_EQ(stats.samples, stats.finished_moves);  // every position of every game
  const std::vector<GameRecord> games = read_pgn_file(run.games_path("sp", 0));
  ASSERT_EQ(games.size(), 2u);
  EXPECT_EQ(games[0].event, "ultima warm start");
  // The same games as played one by one from the job's seeds.
  const SelfPlayGame first = play_teacher_game(config, *job.teacher, game_seed(job.seed, job.tag, 0), 0);
  EXPECT_EQ(games[0].moves, first.record.moves);
  job.teacher->depth = 0;
  EXPECT_THROW(run_selfplay(run, config, job), std::invalid_argument);
}

TEST(RunSelfPlay, RejectsABadConfigOrNoEvaluator) {
  TempDir dir("sp-bad");
  const RunDir run(dir.path());
  SelfPlayConfig config = tiny_selfplay();
  SelfPlayJob job = job_of(2);
  job.evaluator = nullptr;
  EXPECT_THROW(run_selfplay(run, config, job), std::invalid_argument);
  config.games_per_shard = 0;
  EXPECT_THROW(run_selfplay(run, config, job_of(2)), std::invalid_argument);
}

}  // namespace
}  // namespace ultima
