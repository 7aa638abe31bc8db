#include "engine/search/tt.h"

#include <algorithm>
#include <bit>

namespace ultima {

void TranspositionTable::resize(std::size_t megabytes) {
  if (megabytes < 1) megabytes = 1;
  const std::size_t bytes = megabytes * 1024 * 1024;
  const std::size_t buckets = std::bit_floor(bytes / (2 * sizeof(Entry)));
  entries_ = std::vector<Entry>();  // made at the next new_search()
  bucket_mask_ = buckets - 1;
  megabytes_ = megabytes;
}

void TranspositionTable::new_search() {
  if (entries_.empty()) entries_ = std::vector<Entry>(2 * (bucket_mask_ + 1));
  generation_.fetch_add(1, std::memory_order_relaxed);
}

void TranspositionTable::clear() {
  for (Entry& e : entries_) {
    e.check.store(0, std::memory_order_relaxed);
    e.data.store(0, std::memory_order_relaxed);
  }
  generation_.store(0, std::memory_order_relaxed);
}

std::uint64_t TranspositionTable::pack(const TTData& d, std::uint8_t generation) {
  return std::uint64_t(d.move_code) | (std::uint64_t(std::uint16_t(d.score)) << 16) |
         (std::uint64_t(std::uint16_t(d.eval)) << 32) | (std::uint64_t(std::uint8_t(d.depth)) << 48) |
         (std::uint64_t(d.bound) << 56) | (std::uint64_t(generation & 0x3F) << 58);
}

TTData TranspositionTable::unpack(std::uint64_t bits) {
  TTData d;
  d.move_code = std::uint16_t(bits);
  d.score = std::int16_t(std::uint16_t(bits >> 16));
  d.eval = std::int16_t(std::uint16_t(bits >> 32));
  d.depth = std::int8_t(std::uint8_t(bits >> 48));
  d.bound = Bound((bits >> 56) & 3);
  return d;
}

bool TranspositionTable::probe(std::uint64_t key, TTData& out) const {
  const std::size_t base = 2 * (key & bucket_mask_);
  for (std::size_t i = base; i < base + 2; ++i) {
    const std::uint64_t data = entries_[i].data.load(std::memory_order_relaxed);
    const std::uint64_t check = entries_[i].check.load(std::memory_order_relaxed);
    if ((check ^ data) == key && data != 0) {
      out = unpack(data);
      return true;
    }
  }
  return false;
}

void TranspositionTable::store(std::uint64_t key, const TTData& d) {
  const std::size_t base = 2 * (key & bucket_mask_);
  Entry& deep = entries_[base];
  const std::uint64_t old = deep.data.load(std::memory_order_relaxed);
  const bool same_key = (deep.check.load(std::memory_order_relaxed) ^ old) == key;
  const int old_depth = std::int8_t(std::uint8_t(old >> 48));
  const int old_generation = (old >> 58) & 0x3F;
  // The depth-preferred slot takes this entry when it is as deep, or the
  // slot's entry is stale or the same position.
  const std::uint8_t generation = generation_.load(std::memory_order_relaxed);
  Entry& slot = (same_key || d.depth >= old_depth || old_generation != (generation & 0x3F) || old == 0)
                    ? deep
                    : entries_[base + 1];
  const std::uint64_t data = pack(d, generation);
  slot.data.store(data, std::memory_order_relaxed);
  slot.check.store(key ^ data, std::memory_order_relaxed);
}

int TranspositionTable::hashfull() const {
  const std::size_t sample = std::min<std::size_t>(entries_.size(), 2000);
  int used = 0;
  for (std::size_t i = 0; i < sample; ++i) {
    const std::uint64_t data = entries_[i].data.load(std::memory_order_relaxed);
    used += data != 0 && ((data >> 58) & 0x3F) == (generation_.load(std::memory_order_relaxed) & 0x3F);
  }
  return static_cast<int>(used * 1000 / sample);
}

}  // namespace ultima
