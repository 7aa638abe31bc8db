// The transposition table: shared by all search threads, lock-free (each
// entry stores its key xor its data, so a torn write reads as a miss).
#pragma once

#include <atomic>
#include <cstdint>
#include <vector>

#include "engine/rules/types.h"

namespace ultima {

enum class Bound : std::uint8_t { kNone = 0, kUpper = 1, kLower = 2, kExact = 3 };

struct TTData {
  std::uint16_t move_code = 0;
  std::int16_t score = 0;
  std::int16_t eval = 0;
  std::int8_t depth = 0;
  Bound bound = Bound::kNone;
};

class TranspositionTable {
 public:
  explicit TranspositionTable(std::size_t megabytes = 16) { resize(megabytes); }
  // Sets the size; the memory is taken at the next new_search(), so that a
  // program that never searches (or changes Hash twice before its first
  // search) never fills a table it does not use.
  void resize(std::size_t megabytes);
  void clear();
  // Once per search (Searcher::search), before its threads start: makes the
  // table when it has none yet, and moves the generation on (atomic all the
  // same, as hashfull() reads it from the threads). probe() and store() are
  // for after it.
  void new_search();

  bool probe(std::uint64_t key, TTData& out) const;
  void store(std::uint64_t key, const TTData& data);
  // Entries per thousand used by this search (UCI hashfull).
  int hashfull() const;
  std::size_t megabytes() const { return megabytes_; }

 private:
  struct Entry {
    std::atomic<std::uint64_t> check{0};  // key ^ data
    std::atomic<std::uint64_t> data{0};
  };
  static std::uint64_t pack(const TTData& d, std::uint8_t generation);
  static TTData unpack(std::uint64_t bits);

  // Two entries per bucket: one kept by depth, one always replaced.
  std::vector<Entry> entries_;
  std::uint64_t bucket_mask_ = 0;
  std::size_t megabytes_ = 0;
  std::atomic<std::uint8_t> generation_{0};  // wraps at 256, as before
};

}  // namespace ultima
