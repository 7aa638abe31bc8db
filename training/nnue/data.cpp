// Labelled positions: their files, the alpha-beta games they come from,
// and the run directories whose samples they relabel.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <chrono>
#include <cstring>
#include <mutex>
#include <numeric>
#include <random>
#include <thread>

#include "engine/base/file_io.h"
#include "engine/rules/hash.h"
#include "engine/rules/movegen.h"
#include "engine/search/search.h"
#include "nn/data/run_dir.h"
#include "nn/data/sample.h"
#include "training/nnue/nnue_train.h"

namespace ultima::nnue {
namespace {

static_assert(std::endian::native == std::endian::little, "record files are read as little-endian");
constexpr char kDataMagic[8] = {'U', 'N', 'N', 'U', 'E', 'D', 'A', 'T'};
constexpr std::size_t kRecordBytes = 68;

// Is this search's answer a quiet, scored position worth learning from?
bool keep(const Position& pos, const SearchResult& r) {
  if (r.best.is_null() || r.best.captures || r.best.is_removal()) return false;
  if (std::abs(r.score) >= kMateBound) return false;
  return !pos.in_check();
}

Record record_of(const Position& pos, int score) {
  Record rec;
  rec.board = board_state(pos);
  rec.side = pos.side_to_move();
  rec.score = static_cast<std::int16_t>(std::clamp(score, -30000, 30000));
  return rec;
}

// Runs job(i) for i in [0, count) on `threads` threads, each index once.
void parallel_for(int count, int threads, const std::function<void(int)>& job) {
  std::atomic<int> next{0};
  std::vector<std::thread> pool;
  std::exception_ptr error;
  std::mutex error_mutex;
  const auto work = [&] {
    for (int i; (i = next.fetch_add(1)) < count;) {
      try {
        job(i);
      } catch (...) {
        std::lock_guard<std::mutex> lock(error_mutex);
        if (!error) error = std::current_exception();
        next.store(count);
      }
    }
  };
  for (int t = 1; t < std::max(1, threads); ++t) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
  if (error) std::rethrow_exception(error);
}

// A progress line every ten seconds: done, rate, ETA.
class Progress {
 public:
  Progress(std::string what, int total) : what_(std::move(what)), total_(total) {}
  void tick() {
    const int done = ++done_;
    const auto now = std::chrono::steady_clock::now();
    std::lock_guard<std::mutex> lock(mutex_);
    if (now - last_ < std::chrono::seconds(10) && done != total_) return;
    last_ = now;
    const double s = std::chrono::duration<double>(now - start_).count();
    const double rate = done / std::max(s, 1e-9);
    spdlog::info("{}: {}/{} ({:.1f}/s, ETA {:.0f} s)", what_, done, total_, rate, (total_ - done) / std::max(rate, 1e-9));
  }

 private:
  std::string what_;
  int total_;
  std::atomic<int> done_{0};
  std::mutex mutex_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now(), last_ = start_;
};

}  // namespace

std::string serialize_records(const std::vector<Record>& records) {
  std::string out(kDataMagic, sizeof kDataMagic);
  const std::uint32_t version = kDataVersion;
  const std::uint64_t count = records.size();
  out.append(reinterpret_cast<const char*>(&version), 4);
  out.append(reinterpret_cast<const char*>(&count), 8);
  for (const Record& r : records) {
    out.append(reinterpret_cast<const char*>(r.board.data()), 64);
    out.push_back(static_cast<char>(r.side));
    out.push_back(static_cast<char>(r.result));
    out.append(reinterpret_cast<const char*>(&r.score), 2);
  }
  const std::uint64_t sum = fnv1a64(out.data(), out.size());
  out.append(reinterpret_cast<const char*>(&sum), 8);
  return out;
}

std::vector<Record> deserialize_records(const std::string& bytes, const std::string& origin) {
  constexpr std::size_t kHeader = 8 + 4 + 8;
  if (bytes.size() < 8 || std::memcmp(bytes.data(), kDataMagic, 8) != 0)
    throw DataError(origin + ": not an NNUE record file (no UNNUEDAT magic)");
  if (bytes.size() < kHeader + 8) throw DataError(origin + ": truncated record file (it ends inside the header)");
  std::uint32_t version;
  std::uint64_t count;
  std::memcpy(&version, bytes.data() + 8, 4);
  std::memcpy(&count, bytes.data() + 12, 8);
  if (version != kDataVersion)
    throw DataError(origin + ": record file version " + std::to_string(version) + ", this program reads version " +
                    std::to_string(kDataVersion));
  const std::size_t body = bytes.size() - kHeader - 8;
  if (count > body / kRecordBytes)
    throw DataError(origin + ": truncated record file (" + std::to_string(count) + " records announced, room for " +
                    std::to_string(body / kRecordBytes) + ")");
  if (count * kRecordBytes != body)
    throw DataError(origin + ": record file has " + std::to_string(body - count * kRecordBytes) +
                    " bytes after its records");
  std::uint64_t stored;
  std::memcpy(&stored, bytes.data() + bytes.size() - 8, 8);
  if (stored != fnv1a64(bytes.data(), bytes.size() - 8)) throw DataError(origin + ": record file checksum mismatch (corrupt file)");
  std::vector<Record> out(count);
  const char* p = bytes.data() + kHeader;
  for (Record& r : out) {
    std::memcpy(r.board.data(), p, 64);
    r.side = static_cast<std::uint8_t>(p[64]);
    r.result = static_cast<std::int8_t>(p[65]);
    std::memcpy(&r.score, p + 66, 2);
    p += kRecordBytes;
    if (r.side > 1 || r.result < -1 || r.result > 1)
      throw DataError(origin + ": record " + std::to_string(&r - out.data()) + " has a bad side or result");
    for (SquareState s : r.board) {
      const Piece piece = s & 15;
      const bool bad = (s & ~(kFrozenBit | 15)) != 0 || (piece != kEmpty && kind_of(piece) == kNone) ||
                       (piece == kEmpty && s != 0);
      if (bad)
        throw DataError(origin + ": record " + std::to_string(&r - out.data()) + " has a bad square");
    }
  }
  return out;
}

void write_records(const std::string& path, const std::vector<Record>& records) {
  write_file_atomically(path, serialize_records(records));
}

std::vector<Record> read_records(const std::string& path) {
  std::string bytes;
  try {
    bytes = read_file(path);
  } catch (const std::exception& e) {
    throw DataError(std::string("cannot read NNUE records: ") + e.what());
  }
  return deserialize_records(bytes, path);
}

std::vector<Record> play_data_games(const GameDataOptions& options, int first_game, int count) {
  std::vector<std::vector<Record>> per_game(std::max(count, 0));
  Progress progress("nnue data games", count);
  std::mutex searchers_mutex;
  const auto play = [&](int index) {
    const int game = first_game + index;
    std::mt19937_64 rng(mix64(options.seed ^ mix64(static_cast<std::uint64_t>(game) + 1)));
    Searcher searcher(8);
    searcher.set_network(options.network);
    Position pos = Position::start(options.rules);
    std::vector<Record>& records = per_game[index];
    Outcome outcome = Outcome::kDraw;
    for (int ply = 0; ply < options.max_plies; ++ply) {
      const GameStatus status = game_status(pos);
      if (status.over()) {
        outcome = status.outcome;
        break;
      }
      Move move;
      if (ply < options.random_plies) {
        MoveList list;
        generate_legal(pos, list);
        move = list[std::uniform_int_distribution<int>(0, list.size() - 1)(rng)];
      } else {
        SearchLimits limits;
        limits.nodes = options.nodes;
        const SearchResult r = searcher.search(pos, limits);
        move = r.best;
        if (keep(pos, r)) records.push_back(record_of(pos, r.score));
      }
      pos.make(move);
    }
    for (Record& r : records) {
      if (outcome == Outcome::kDraw || outcome == Outcome::kOngoing)
        r.result = 0;
      else
        r.result = (outcome == Outcome::kWhiteWins) == (r.side == kWhite) ? 1 : -1;
    }
    progress.tick();
  };
  parallel_for(count, options.concurrency, play);
  std::vector<Record> out;
  for (auto& g : per_game) out.insert(out.end(), g.begin(), g.end());
  return out;
}

std::vector<Record> label_run_positions(const RunDataOptions& options) {
  const data::RunDir run(options.run_dir);
  std::vector<data::Sample> samples;
  const std::vector<std::string> shards = run.shard_paths();
  if (shards.empty()) throw std::invalid_argument("run directory '" + options.run_dir + "' has no sample shards");
  for (const std::string& path : shards) {
    std::vector<data::Sample> s = data::read_shard(path);
    for (data::Sample& x : s)
      if (!(x.flags & data::kNoResult)) samples.push_back(std::move(x));
  }
  std::vector<std::size_t> order(samples.size());
  std::iota(order.begin(), order.end(), 0);
  if (options.max_positions > 0 && options.max_positions < order.size()) {
    std::mt19937_64 rng(options.seed);
    std::shuffle(order.begin(), order.end(), rng);
    order.resize(options.max_positions);
    std::sort(order.begin(), order.end());
  }
  spdlog::info("nnue label: {} positions of {} samples in {} shards of {}", order.size(), samples.size(),
               shards.size(), options.run_dir);
  std::vector<Record> labelled(order.size());
  std::vector<char> kept(order.size(), 0);
  Progress progress("nnue label", static_cast<int>(order.size()));
  parallel_for(static_cast<int>(order.size()), options.concurrency, [&](int i) {
    const data::Sample& sample = samples[order[i]];
    Position pos = data::sample_position(sample);
    if (!game_status(pos).over()) {
      thread_local Searcher searcher(4);
      searcher.clear();  // each position's score its own, whatever the thread
      SearchLimits limits;
      limits.nodes = options.nodes;
      const SearchResult r = searcher.search(pos, limits);
      if (keep(pos, r)) {
        labelled[i] = record_of(pos, r.score);
        labelled[i].result = sample.result;
        kept[i] = 1;
      }
    }
    progress.tick();
  });
  std::vector<Record> out;
  for (std::size_t i = 0; i < labelled.size(); ++i)
    if (kept[i]) out.push_back(labelled[i]);
  return out;
}

}  // namespace ultima::nnue
