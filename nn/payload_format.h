// The weights payload's records (nn/README.md, "Model files"): "UNT1", a
// u32 tensor count, then per tensor a u16 name length, the name, a u8 type
// (0 float32, 1 int64), a u8 number of dimensions, i64 sizes and the data,
// little-endian. Header-only and plain C++, because both the LibTorch
// module (loading a net) and the program (averaging weights) read it and
// the module links none of the program's files.
#pragma once

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace ultima::nn::payload {

enum Type : std::uint8_t { kFloat32 = 0, kInt64 = 1 };
inline constexpr char kMagic[4] = {'U', 'N', 'T', '1'};

struct Record {
  std::string_view name;
  Type type = kFloat32;
  std::vector<std::int64_t> sizes;
  std::size_t offset = 0;     // where the record starts in the payload
  std::size_t data_at = 0;    // where its data starts
  std::size_t data_bytes = 0;
};

// Splits a payload into its records, checking the structure. Throws
// std::runtime_error naming the problem (truncation, a bad magic, type or
// size, bytes after the last tensor).
inline std::vector<Record> read_records(const char* data, std::size_t size) {
  std::size_t at = 0;
  auto take = [&](std::size_t n, const char* what) {
    if (size - at < n) throw std::runtime_error(std::string("the weights end inside ") + what + " (truncated)");
    const std::size_t from = at;
    at += n;
    return from;
  };
  auto get = [&]<typename T>(T, const char* what) {
    T v;
    std::memcpy(&v, data + take(sizeof v, what), sizeof v);
    return v;
  };
  if (std::memcmp(data + take(4, "the payload's magic"), kMagic, 4) != 0)
    throw std::runtime_error("the weights are not in the raw tensor format UNT1");
  const std::uint32_t count = get(std::uint32_t{}, "the tensor count");
  std::vector<Record> records;
  for (std::uint32_t i = 0; i < count; ++i) {
    Record r;
    r.offset = at;
    const std::uint16_t length = get(std::uint16_t{}, "a tensor name");
    r.name = std::string_view(data + take(length, "a tensor name"), length);
    const std::uint8_t type = get(std::uint8_t{}, "a tensor type");
    if (type != kFloat32 && type != kInt64)
      throw std::runtime_error("tensor '" + std::string(r.name) + "' has an unknown type " + std::to_string(type));
    r.type = Type(type);
    const std::uint8_t dims = get(std::uint8_t{}, "a tensor shape");
    const std::size_t element = r.type == kInt64 ? 8 : 4;
    // The element count is kept within what the payload could hold at every
    // step, so crafted sizes cannot wrap it round to a small number (a file
    // with a valid checksum is not a trusted one).
    std::uint64_t numel = 1;
    for (int d = 0; d < dims; ++d) {
      const std::int64_t extent = get(std::int64_t{}, "a tensor shape");
      if (extent < 0)
        throw std::runtime_error("tensor '" + std::string(r.name) + "' has a negative size " + std::to_string(extent));
      r.sizes.push_back(extent);
      if (extent != 0 && numel > size / element / static_cast<std::uint64_t>(extent))
        throw std::runtime_error("tensor '" + std::string(r.name) + "' has more elements than the " +
                                 std::to_string(size) + " bytes of weights hold (truncated or damaged)");
      numel *= static_cast<std::uint64_t>(extent);
    }
    r.data_bytes = static_cast<std::size_t>(numel) * element;
    r.data_at = take(r.data_bytes, "a tensor's data");
    records.push_back(std::move(r));
  }
  if (at != size) throw std::runtime_error("unexpected bytes after the last tensor");
  return records;
}

}  // namespace ultima::nn::payload
