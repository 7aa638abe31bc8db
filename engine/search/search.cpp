#include "engine/search/search.h"

#include <algorithm>
#include <array>
#include <iterator>
#include <thread>

#include "engine/rules/hash.h"
#include "engine/rules/movegen.h"

namespace ultima {
namespace {

using Clock = std::chrono::steady_clock;
constexpr int kInfinity = kMateScore + 1;
constexpr int kDeltaMargin = 200;

// Mate scores are stored relative to the node, not the root.
int score_to_tt(int score, int ply) {
  if (score >= kMateBound) return score + ply;
  if (score <= -kMateBound) return score - ply;
  return score;
}
int score_from_tt(int score, int ply) {
  if (score >= kMateBound) return score - ply;
  if (score <= -kMateBound) return score + ply;
  return score;
}

struct RootMove {
  Move move;
  int score = -kInfinity;
  int previous_score = -kInfinity;
  int seldepth = 0;
  std::vector<Move> pv;
};

}  // namespace

std::string score_text(int score) {
  if (score >= kMateBound) return "mate " + std::to_string((kMateScore - score + 1) / 2);
  if (score <= -kMateBound) return "mate -" + std::to_string((kMateScore + score) / 2);
  return "cp " + std::to_string(score);
}

struct ThreadTables {
  Move killers[kMaxPly][2];
  int history[2][64][64];
  Move pv[kMaxPly + 1][kMaxPly + 1];  // read only up to pv_length: never cleared
  int pv_length[kMaxPly + 1];
  // The learned evaluation's accumulators, made when a search first uses
  // a network and kept while the network stays the same.
  std::unique_ptr<nnue::Evaluator> nnue;

  void clear() {
    for (auto& k : killers) k[0] = k[1] = Move{};
    std::fill(&history[0][0][0], &history[0][0][0] + 2 * 64 * 64, 0);
    std::fill(std::begin(pv_length), std::end(pv_length), 0);
  }
};

// One search thread: its own position copy, move-ordering tables and
// principal variations; the transposition table is shared.
class SearchThread {
 public:
  SearchThread(Searcher& owner, ThreadTables& tables, const Position& pos, int id, const SearchLimits& limits,
               Clock::time_point start, std::int64_t soft_ms, std::int64_t hard_ms)
      : owner_(owner), pos_(pos), id_(id), limits_(limits), start_(start), soft_ms_(soft_ms), hard_ms_(hard_ms),
        check_mask_(check_mask(limits, owner.threads_, hard_ms)), killers_(tables.killers),
        history_(tables.history), pv_(tables.pv), pv_length_(tables.pv_length) {
    tables.clear();
    if (owner.network_) {
      if (!tables.nnue || &tables.nnue->network() != owner.network_.get())
        tables.nnue = std::make_unique<nnue::Evaluator>(owner.network_);
      tables.nnue->reset();
      nnue_ = tables.nnue.get();
    }
  }

  // Iterative deepening. The main thread (id 0) reports and decides when to stop.
  void run(const std::function<void(const SearchInfo&)>& on_info) {
    MoveList list;
    generate_legal(pos_, list);
    for (const Move& m : list) {
      if (!limits_.root_moves.empty() &&
          std::find(limits_.root_moves.begin(), limits_.root_moves.end(), m) == limits_.root_moves.end())
        continue;
      RootMove rm;
      rm.move = m;
      root_moves_.push_back(std::move(rm));
    }
    if (root_moves_.empty()) return;
    order_root_by_heuristics();
    int max_depth = limits_.depth > 0 ? std::min(limits_.depth, kMaxPly - 2) : kMaxPly - 2;
    if (limits_.mate > 0) max_depth = std::min(max_depth, std::min(2 * limits_.mate - 1, kMaxPly - 2));
    const int multipv = std::clamp(limits_.multipv, 1, static_cast<int>(root_moves_.size()));
    for (int depth = 1; depth <= max_depth; ++depth) {
      if (skips(depth)) continue;
      for (RootMove& rm : root_moves_) rm.previous_score = rm.score;
      for (int pv_index = 0; pv_index < multipv; ++pv_index) {
        seldepth_ = 0;
        search_root(depth, pv_index);
        if (stopped()) break;
        std::stable_sort(root_moves_.begin() + pv_index, root_moves_.end(),
                         [](const RootMove& a, const RootMove& b) { return a.score > b.score; });
      }
      if (stopped()) break;
      completed_depth_ = depth;
      std::stable_sort(root_moves_.begin(), root_moves_.begin() + multipv,
                       [](const RootMove& a, const RootMove& b) { return a.score > b.score; });
      // What a stop reports: lines of this finished depth, not a partial one.
      completed_.assign(root_moves_.begin(), root_moves_.begin() + multipv);
      if (id_ != 0) continue;
      if (on_info)
        for (int i = 0; i < multipv; ++i) on_info(info_for(i, depth));
      if (!limits_.infinite && soft_ms_ > 0 && elapsed_ms() > soft_ms_ * 6 / 10) break;
      // A mate search ends with the first mate proven within its bound.
      if (limits_.mate > 0 && root_moves_[0].score >= kMateBound &&
          (kMateScore - root_moves_[0].score + 1) / 2 <= limits_.mate)
        break;
      // A forced mate found well within the depth searched will not change;
      // the margin lets reductions and pruning find a shorter one first.
      if (!limits_.infinite && std::abs(root_moves_[0].score) >= kMateBound &&
          2 * (kMateScore - std::abs(root_moves_[0].score)) + 4 <= depth)
        break;
    }
  }

  SearchInfo info_for(int line, int depth) const { return info_of(root_moves_[line], line, depth); }

  SearchInfo info_of(const RootMove& rm, int line, int depth) const {
    SearchInfo info;
    info.depth = depth;
    info.seldepth = std::max(rm.seldepth, depth);
    info.multipv = line + 1;
    info.score = rm.score;
    info.nodes = owner_.shared_nodes_.load(std::memory_order_relaxed) + nodes_ - flushed_nodes_;
    info.time_ms = elapsed_ms();
    info.hashfull = owner_.tt_.hashfull();
    info.pv = rm.pv;
    return info;
  }

  const std::vector<RootMove>& root_moves() const { return root_moves_; }
  const std::vector<RootMove>& completed() const { return completed_; }
  int completed_depth() const { return completed_depth_; }
  void flush_nodes() {
    owner_.shared_nodes_.fetch_add(nodes_ - flushed_nodes_, std::memory_order_relaxed);
    flushed_nodes_ = nodes_;
  }

 private:
  std::int64_t elapsed_ms() const {
    return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start_).count();
  }
  bool stopped() const { return owner_.stop_.load(std::memory_order_relaxed); }

  // Lazy SMP's depth diversity: helper threads leave out some depths, each
  // by its own pattern (Stockfish 9's tables), so that the threads work at
  // different depths at once and the deeper ones find their bounds and moves
  // in the shared table, instead of all repeating the same search. The main
  // thread and a mate search (full width by design) skip nothing.
  bool skips(int depth) const {
    if (id_ == 0 || limits_.mate > 0 || (limits_.depth > 0 && depth == limits_.depth)) return false;
    static constexpr int kSkipSize[20] = {1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 4, 4, 4, 4, 4, 4, 4, 4};
    static constexpr int kSkipPhase[20] = {0, 1, 0, 1, 2, 3, 0, 1, 2, 3, 4, 5, 0, 1, 2, 3, 4, 5, 6, 7};
    const int i = (id_ - 1) % 20;
    return ((depth + kSkipPhase[i]) / kSkipSize[i]) % 2 != 0;
  }

  // How often a thread looks at the limits: every 1,024 of its nodes, or
  // more often where that would overshoot a small budget: a node limit of
  // under 8 intervals for all threads (`go nodes 100` searches about 100
  // nodes, not a full interval), or under 100 ms on the clock. Budgets of
  // 8,192 nodes a thread and more keep the interval of 1,024, so a node-
  // limited search of that size stops exactly where it always did.
  static std::uint64_t check_mask(const SearchLimits& limits, int threads, std::int64_t hard_ms) {
    std::uint64_t interval = 1024;
    if (limits.nodes)
      while (interval > 1 && interval * 8 * static_cast<std::uint64_t>(std::max(threads, 1)) > limits.nodes)
        interval /= 2;
    if (hard_ms > 0 && hard_ms < 100) interval = std::min<std::uint64_t>(interval, 128);
    return interval - 1;
  }

  void check_limits() {
    flush_nodes();
    if (limits_.infinite) return;
    if (limits_.nodes && owner_.shared_nodes_.load(std::memory_order_relaxed) >= limits_.nodes) owner_.stop();
    if (hard_ms_ > 0 && elapsed_ms() >= hard_ms_) owner_.stop();
  }

  int evaluate_here(int ply) {
    int score = nnue_ ? nnue_->evaluate(pos_, ply) : evaluate(pos_, owner_.weights_);
    if (owner_.noise_cp_ > 0) {
      const std::uint64_t r = mix64(pos_.key() ^ owner_.noise_seed_);
      score += static_cast<int>(r % (2 * owner_.noise_cp_ + 1)) - owner_.noise_cp_;
    }
    return std::clamp(score, -kMateBound + 1, kMateBound - 1);
  }

  int victims_value(Bitboard captures) const {
    int total = 0;
    while (captures) {
      const Piece p = pos_.piece_on(pop_lsb(captures));
      total += kind_of(p) == kKing ? 10000 : owner_.weights_.value[kind_of(p)];
    }
    return total;
  }

  void order_root_by_heuristics() {
    for (RootMove& rm : root_moves_) rm.score = victims_value(rm.move.captures);
    std::stable_sort(root_moves_.begin(), root_moves_.end(),
                     [](const RootMove& a, const RootMove& b) { return a.score > b.score; });
    for (RootMove& rm : root_moves_) rm.score = -kInfinity;
  }

  using MoveScores = std::array<int, MoveList::kCapacity>;

  void score_moves(const MoveList& list, std::uint16_t tt_move, int ply, MoveScores& scores) const {
    const Color us = pos_.side_to_move();
    for (int i = 0; i < list.size(); ++i) {
      const Move& m = list[i];
      if (m.code == tt_move)
        scores[i] = 1 << 30;
      else if (m.captures)
        scores[i] = (1 << 28) + victims_value(m.captures);
      else if (m == killers_[ply][0])
        scores[i] = (1 << 27) + 1;
      else if (m == killers_[ply][1])
        scores[i] = 1 << 27;
      else
        scores[i] = history_[us][m.from()][m.to()];
    }
  }

  static const Move& pick_next(MoveList& list, MoveScores& scores, int from) {
    int best = from;
    for (int i = from + 1; i < list.size(); ++i)
      if (scores[i] > scores[best]) best = i;
    std::swap(list[from], list[best]);
    std::swap(scores[from], scores[best]);
    return list[from];
  }

  void update_pv(int ply, const Move& m) {
    pv_[ply][ply] = m;
    for (int i = ply + 1; i < pv_length_[ply + 1]; ++i) pv_[ply][i] = pv_[ply + 1][i];
    pv_length_[ply] = std::max(pv_length_[ply + 1], ply + 1);
  }

  void search_root(int depth, int pv_index) {
    int alpha = -kInfinity;
    const int beta = kInfinity;
    for (std::size_t i = pv_index; i < root_moves_.size(); ++i) {
      RootMove& rm = root_moves_[i];
      pv_length_[1] = 1;
      pos_.make(rm.move);
      // A small budget (check_mask) is also looked at here, or a run of root
      // moves could step over its looks; the interval of 1,024 is not, so
      // that large node-limited searches stop where they always did.
      if ((++nodes_ & check_mask_) == 0 && check_mask_ < 1023) check_limits();
      int score;
      if (i == static_cast<std::size_t>(pv_index)) {
        score = -negamax(depth - 1, -beta, -alpha, 1, true);
      } else {
        score = -negamax(depth - 1, -alpha - 1, -alpha, 1, false);
        if (score > alpha && !stopped()) score = -negamax(depth - 1, -beta, -alpha, 1, true);
      }
      pos_.unmake();
      if (stopped()) return;
      if (score > alpha || i == static_cast<std::size_t>(pv_index)) {
        rm.score = score;
        rm.seldepth = seldepth_;
        rm.pv.assign(1, rm.move);
        for (int p = 1; p < pv_length_[1]; ++p) rm.pv.push_back(pv_[1][p]);
        alpha = std::max(alpha, score);
      } else {
        rm.score = -kInfinity;  // only known to be worse than the best
      }
    }
  }

  int negamax(int depth, int alpha, int beta, int ply, bool pv_node) {
    pv_length_[ply] = ply;
    if (depth <= 0) return quiescence(alpha, beta, ply, 0);
    seldepth_ = std::max(seldepth_, ply);
    if ((++nodes_ & check_mask_) == 0) check_limits();
    if (stopped()) return 0;

    const Color us = pos_.side_to_move();
    if (pos_.king_square(us) == kNoSquare) return -kMateScore + ply;  // king-capture objective
    if (pos_.repetition_count() >= 2 || pos_.bare_kings()) return 0;
    if (ply >= kMaxPly - 1) return evaluate_here(ply);

    // Mate-distance pruning: no line from here beats a mate already found nearer the root.
    alpha = std::max(alpha, -kMateScore + ply);
    beta = std::min(beta, kMateScore - ply - 1);
    if (alpha >= beta) return alpha;

    TTData tt;
    const bool tt_hit = owner_.tt_.probe(pos_.key(), tt);
    if (tt_hit && !pv_node && tt.depth >= depth) {
      const int s = score_from_tt(tt.score, ply);
      if (tt.bound == Bound::kExact || (tt.bound == Bound::kLower && s >= beta) ||
          (tt.bound == Bound::kUpper && s <= alpha))
        return s;
    }

    const bool in_check = pos_.in_check();
    const int static_eval = tt_hit ? tt.eval : evaluate_here(ply);

    // Null move: if passing still holds beta, a real move will too. Not in
    // check, and not with fewer than two free pieces: with a move forced on
    // it, a side short of moves can lose (zugzwang, or no move at all).
    if (!exact_ && !pv_node && !in_check && depth >= 3 && static_eval >= beta && mobile_pieces(us) >= 2 &&
        !(pos_.game_ply() && pos_.last_move().is_null())) {
      const int r = 2 + depth / 4;
      pos_.make_null();
      const int score = -negamax(depth - 1 - r, -beta, -beta + 1, ply + 1, false);
      pos_.unmake();
      if (stopped()) return 0;
      if (score >= beta) return score >= kMateBound ? beta : score;
    }

    // Pseudo-legal moves, each tested for legality only when its turn comes:
    // a cut-off usually comes before most are looked at.
    MoveList list;
    generate_pseudo_legal(pos_, list);
    MoveScores scores;
    score_moves(list, tt_hit ? tt.move_code : 0, ply, scores);
    const int original_alpha = alpha;
    int best = -kInfinity;
    Move best_move;
    int legal = 0;
    for (int n = 0; n < list.size(); ++n) {
      const Move m = pick_next(list, scores, n);
      if (!leaves_king_safe(pos_, m)) continue;
      const int i = legal++;
      if (i == 0 && pos_.halfmove_clock() >= 100) return 0;  // a legal move exists, so no mate: drawn
      const bool quiet = !m.captures;
      pos_.make(m);
      int score;
      if (i == 0) {
        score = -negamax(depth - 1, -beta, -alpha, ply + 1, pv_node);
      } else {
        // Late quiet moves are searched shallower first; a surprise is re-searched.
        const bool gives_check = pos_.in_check();
        const int r = (!exact_ && depth >= 3 && i >= 3 && quiet && !in_check && !gives_check)
                          ? 1 + (i >= 10) + (depth >= 8)
                          : 0;
        score = -negamax(depth - 1 - r, -alpha - 1, -alpha, ply + 1, false);
        if (score > alpha && r) score = -negamax(depth - 1, -alpha - 1, -alpha, ply + 1, false);
        if (score > alpha && score < beta) score = -negamax(depth - 1, -beta, -alpha, ply + 1, true);
      }
      pos_.unmake();
      if (stopped()) return 0;
      if (score > best) {
        best = score;
        best_move = m;
        if (score > alpha) {
          alpha = score;
          update_pv(ply, m);
          if (score >= beta) {
            if (quiet) {
              if (!(killers_[ply][0] == m)) {
                killers_[ply][1] = killers_[ply][0];
                killers_[ply][0] = m;
              }
              int& h = history_[us][m.from()][m.to()];
              h = std::min(h + depth * depth, 1 << 26);
            }
            break;
          }
        }
      }
    }
    if (legal == 0) return no_move_score(in_check, ply);
    TTData store;
    store.move_code = best_move.code;
    store.score = static_cast<std::int16_t>(score_to_tt(best, ply));
    store.eval = static_cast<std::int16_t>(static_eval);
    store.depth = static_cast<std::int8_t>(std::min(depth, 127));
    store.bound = best >= beta ? Bound::kLower : best > original_alpha ? Bound::kExact : Bound::kUpper;
    owner_.tt_.store(pos_.key(), store);
    return best;
  }

  // Captures only (and every move while in check, for a few plies), so that
  // the evaluation is read in quiet positions.
  int quiescence(int alpha, int beta, int ply, int qdepth) {
    pv_length_[ply] = ply;
    seldepth_ = std::max(seldepth_, ply);
    if ((++nodes_ & check_mask_) == 0) check_limits();
    if (stopped()) return 0;
    const Color us = pos_.side_to_move();
    if (pos_.king_square(us) == kNoSquare) return -kMateScore + ply;
    if (pos_.repetition_count() >= 2 || pos_.bare_kings()) return 0;
    if (ply >= kMaxPly - 1) return evaluate_here(ply);

    const bool in_check = pos_.in_check();
    MoveList list;
    int best = -kInfinity;
    if (in_check) {
      generate_legal(pos_, list);
      if (list.empty()) return no_move_score(true, ply);
      if (qdepth >= 3) return evaluate_here(ply);
    } else {
      MoveList all;
      generate_pseudo_legal(pos_, all);
      // Without a legal move the game is over here too: under the default
      // rules a loss even when not in check. Usually the first move is legal.
      bool any_legal = false;
      for (const Move& m : all)
        if ((any_legal = leaves_king_safe(pos_, m))) break;
      if (!any_legal) return no_move_score(false, ply);
      if (pos_.halfmove_clock() >= 100) return 0;
      best = evaluate_here(ply);
      if (best >= beta) return best;
      alpha = std::max(alpha, best);
      for (const Move& m : all)
        if (m.captures) list.push(m);  // legality is tested when searched
    }
    MoveScores scores;
    score_moves(list, 0, ply, scores);
    const int stand_pat = best;
    for (int i = 0; i < list.size(); ++i) {
      const Move m = pick_next(list, scores, i);
      // Delta pruning: a capture that cannot lift the score near alpha even
      // with a margin is not worth a look.
      if (!in_check && stand_pat + victims_value(m.captures) + kDeltaMargin <= alpha) continue;
      if (!in_check && !leaves_king_safe(pos_, m)) continue;
      pos_.make(m);
      const int score = -quiescence(-beta, -alpha, ply + 1, qdepth + 1);
      pos_.unmake();
      if (stopped()) return 0;
      if (score > best) {
        best = score;
        if (score > alpha) {
          alpha = score;
          update_pv(ply, m);
          if (score >= beta) break;
        }
      }
    }
    return best;
  }

  int no_move_score(bool in_check, int ply) const {
    if (!in_check && pos_.rules().stalemate == StalemateRule::kDraw) return 0;
    return -kMateScore + ply;
  }
  // Unfrozen pieces other than pawns and the king.
  int mobile_pieces(Color c) const {
    return popcount(pos_.pieces(c) & ~pos_.pieces(c, kPawn) & ~pos_.pieces(c, kKing) & ~pos_.frozen(c));
  }

  Searcher& owner_;
  Position pos_;
  int id_;
  SearchLimits limits_;
  bool exact_ = limits_.mate > 0;  // full width: no null move, no reductions
  Clock::time_point start_;
  std::int64_t soft_ms_, hard_ms_;
  std::vector<RootMove> root_moves_;
  std::vector<RootMove> completed_;  // the lines of the last finished depth
  std::uint64_t nodes_ = 0, flushed_nodes_ = 0;
  const std::uint64_t check_mask_;
  nnue::Evaluator* nnue_ = nullptr;  // null: the hand-written evaluation
  int seldepth_ = 0;
  int completed_depth_ = 0;
  Move (&killers_)[kMaxPly][2];
  int (&history_)[2][64][64];
  Move (&pv_)[kMaxPly + 1][kMaxPly + 1];
  int (&pv_length_)[kMaxPly + 1];
};

Searcher::Searcher(std::size_t hash_mb) : tt_(hash_mb) {}
Searcher::~Searcher() = default;

void Searcher::clear() { tt_.clear(); }

SearchResult Searcher::search(Position& pos, const SearchLimits& limits,
                              const std::function<void(const SearchInfo&)>& on_info) {
  const auto start = Clock::now();
  shared_nodes_.store(0);
  stop_.store(false);
  // Bounds left by searches with null moves and reductions could hide a mate.
  if (limits.mate > 0) tt_.clear();

  // Time: a share of the clock plus most of the increment; never more than
  // a third of what is left, and a margin for the protocol's overhead.
  std::int64_t soft_ms = 0, hard_ms = 0;
  const Color us = pos.side_to_move();
  if (limits.movetime_ms > 0) {
    soft_ms = hard_ms = std::max<std::int64_t>(1, limits.movetime_ms - 5);
    soft_ms = hard_ms * 10;  // use the whole movetime: no early stop between depths
  } else if (limits.time_ms[us] <= 0 && limits.inc_ms[us] > 0) {
    // An increment and no clock: the clock is unknown, so half the increment.
    soft_ms = hard_ms = std::max<std::int64_t>(1, limits.inc_ms[us] / 2);
  } else if (limits.time_ms[us] > 0) {
    const std::int64_t left = limits.time_ms[us];
    const int moves_to_go = limits.movestogo > 0 ? std::min(limits.movestogo, 40) : 30;
    soft_ms = left / moves_to_go + limits.inc_ms[us] * 3 / 4;
    hard_ms = std::min(soft_ms * 3, left / 3 + limits.inc_ms[us] / 2);
    hard_ms = std::max<std::int64_t>(1, std::min(hard_ms, left - 30));
    soft_ms = std::min(soft_ms, hard_ms);
  }

  // One generation per search, whatever the threads and depths: entries of
  // this search are then all current, and the depth-preferred slot keeps
  // the deepest of them (a bump per thread and depth made every entry of an
  // earlier depth or another thread stale, to be overwritten at once).
  tt_.new_search();
  std::vector<std::unique_ptr<SearchThread>> threads;
  while (static_cast<int>(tables_.size()) < threads_) tables_.push_back(std::make_unique<ThreadTables>());
  for (int id = 0; id < threads_; ++id)
    threads.push_back(std::make_unique<SearchThread>(*this, *tables_[id], pos, id, limits, start, soft_ms, hard_ms));
  std::vector<std::thread> helpers;
  for (int id = 1; id < threads_; ++id) helpers.emplace_back([&, id] { threads[id]->run({}); });
  threads[0]->run(on_info);
  stop_.store(true);
  for (std::thread& t : helpers) t.join();
  for (auto& t : threads) t->flush_nodes();

  SearchResult result;
  result.nodes = shared_nodes_.load();
  if (threads[0]->root_moves().empty()) return result;  // no legal move: the game is over
  // A helper that finished a deeper depth than the main thread answers
  // instead (single line only: MultiPV lines come from one thread).
  const SearchThread* chosen = threads[0].get();
  if (limits.multipv <= 1)
    for (const auto& t : threads)
      if (!t->completed().empty() && t->completed_depth() > chosen->completed_depth()) chosen = t.get();
  const SearchThread& main = *chosen;
  result.depth = main.completed_depth();
  if (main.completed().empty()) {
    // Stopped before the first depth finished: the most promising move by
    // the ordering heuristics, with no score to speak of.
    result.best = main.root_moves()[0].move;
    return result;
  }
  result.best = main.completed()[0].move;
  result.score = main.completed()[0].score;
  for (std::size_t i = 0; i < main.completed().size(); ++i) {
    SearchInfo info = main.info_of(main.completed()[i], static_cast<int>(i), main.completed_depth());
    info.nodes = result.nodes;
    result.lines.push_back(info);
  }
  return result;
}

}  // namespace ultima
