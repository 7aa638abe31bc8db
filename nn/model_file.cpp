#include "model_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <charconv>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>

#include "encoding.h"
#include "engine/base/file_io.h"
#include "engine/rules/hash.h"
#include "payload_format.h"
#include "policy_index.h"

namespace ultima::nn {
namespace {

// A header longer than this is not one of ours.
constexpr std::size_t kMaxHeaderBytes = 4096;

struct IntField {
  const char* key;
  int NetArchitecture::*field;
  int min, max;
};
const IntField kArchitectureFields[] = {
    {"input_planes", &NetArchitecture::input_planes, 1, 1024},
    {"policy_planes", &NetArchitecture::policy_planes, 1, 1024},
    {"blocks", &NetArchitecture::blocks, 0, 256},
    {"channels", &NetArchitecture::channels, 1, 4096},
    {"se_channels", &NetArchitecture::se_channels, 0, 4096},
    {"value_channels", &NetArchitecture::value_channels, 1, 4096},
    {"value_hidden", &NetArchitecture::value_hidden, 1, 65536},
    {"moves_left_channels", &NetArchitecture::moves_left_channels, 0, 4096},
    {"moves_left_hidden", &NetArchitecture::moves_left_hidden, 1, 65536},
};

[[noreturn]] void fail(const std::string& path, const std::string& problem) {
  throw ModelFileError("model file " + path + ": " + problem);
}

std::uint64_t parse_u64(const std::string& path, const std::string& key, const std::string& text, int base = 10) {
  std::uint64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value, base);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size())
    fail(path, "header field '" + key + "' has a bad value '" + text + "'");
  return value;
}

// Parses the header text; `header_end` is set to the offset of the payload.
ModelHeader parse_header(const std::string& path, const std::string& bytes, std::size_t& header_end) {
  std::vector<std::string> lines;
  std::size_t pos = 0;
  bool ended = false;
  while (pos < bytes.size() && pos < kMaxHeaderBytes) {
    const std::size_t eol = bytes.find('\n', pos);
    if (eol == std::string::npos) break;
    lines.push_back(bytes.substr(pos, eol - pos));
    pos = eol + 1;
    if (lines.size() == 1 && lines[0] != kModelMagic) break;
    if (lines.back() == "end") {
      ended = true;
      break;
    }
  }
  if (bytes.empty()) fail(path, "is empty");
  if (lines.empty() || lines[0] != kModelMagic) {
    const std::string magic = kModelMagic;
    if (lines.empty() && (magic.rfind(bytes, 0) == 0 || bytes == magic)) fail(path, "truncated inside the header");
    fail(path, "not an Ultima network file (it does not start with " + magic + ")");
  }
  // A file that ends before the header does was cut short.
  const bool cut_short = !ended && bytes.size() < kMaxHeaderBytes;
  if (lines.size() < 2 || lines[1].rfind("format ", 0) != 0) {
    if (cut_short) fail(path, "truncated inside the header");
    fail(path, "the second header line is not 'format N'");
  }
  ModelHeader h;
  const std::uint64_t format = parse_u64(path, "format", lines[1].substr(7));
  if (format != kModelFormatVersion)
    fail(path, "format version " + std::to_string(format) + " is not supported (this build reads version " +
                   std::to_string(kModelFormatVersion) + ")");
  h.format_version = static_cast<int>(format);
  if (!ended) {
    if (cut_short) fail(path, "truncated inside the header");
    fail(path, "the header has no 'end' line within " + std::to_string(kMaxHeaderBytes) + " bytes");
  }
  header_end = pos;

  std::map<std::string, std::string> fields;
  for (std::size_t i = 2; i + 1 < lines.size(); ++i) {
    const std::size_t space = lines[i].find(' ');
    if (space == std::string::npos) fail(path, "header line '" + lines[i] + "' is not 'key value'");
    const std::string key = lines[i].substr(0, space);
    if (!fields.emplace(key, lines[i].substr(space + 1)).second) fail(path, "header field '" + key + "' repeats");
  }
  auto take = [&](const std::string& key) {
    const auto it = fields.find(key);
    if (it == fields.end()) fail(path, "the header lacks the field '" + key + "'");
    std::string value = it->second;
    fields.erase(it);
    return value;
  };
  auto take_int = [&](const std::string& key, int min, int max) {
    const std::uint64_t v = parse_u64(path, key, take(key));
    if (v < static_cast<std::uint64_t>(min) || v > static_cast<std::uint64_t>(max))
      fail(path, "header field '" + key + "' = " + std::to_string(v) + " is outside " + std::to_string(min) +
                     ".." + std::to_string(max));
    return static_cast<int>(v);
  };
  h.encoding_version = take_int("encoding", 0, 1 << 20);
  h.policy_layout = take_int("policy_layout", 0, 1 << 20);
  for (const IntField& f : kArchitectureFields) h.architecture.*f.field = take_int(f.key, f.min, f.max);
  h.rules = take("rules");
  h.training_step = parse_u64(path, "training_step", take("training_step"));
  h.payload_bytes = parse_u64(path, "payload_bytes", take("payload_bytes"));
  h.payload_checksum = parse_u64(path, "payload_fnv1a64", take("payload_fnv1a64"), 16);
  if (!fields.empty()) fail(path, "unknown header field '" + fields.begin()->first + "'");

  if (encoding_for_planes(h.architecture.input_planes) == 0 ||
      h.encoding_version != encoding_for_planes(h.architecture.input_planes))
    fail(path, "the network reads input encoding " + std::to_string(h.encoding_version) + " with " +
                   std::to_string(h.architecture.input_planes) + " planes; this build encodes " + encoding_choices());
  if (h.policy_layout != kPolicyLayoutVersion || h.architecture.policy_planes != kPolicyPlanes)
    fail(path, "the network's policy layout is " + std::to_string(h.policy_layout) + " with " +
                   std::to_string(h.architecture.policy_planes) + " planes; this build uses layout " +
                   std::to_string(kPolicyLayoutVersion) + " with " + std::to_string(kPolicyPlanes) + " planes");
  return h;
}

std::string read_prefix(const std::string& path, std::size_t limit) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(path, "cannot be opened");
  std::string bytes(limit, '\0');
  in.read(bytes.data(), static_cast<std::streamsize>(limit));
  bytes.resize(static_cast<std::size_t>(in.gcount()));
  return bytes;
}

}  // namespace

std::string NetArchitecture::text() const {
  std::string s = std::to_string(blocks) + "x" + std::to_string(channels);
  if (se_channels) s += " se" + std::to_string(se_channels);
  return s;
}

void NetArchitecture::validate() const {
  for (const IntField& f : kArchitectureFields) {
    const int v = this->*f.field;
    if (v < f.min || v > f.max)
      throw std::invalid_argument("network " + std::string(f.key) + " = " + std::to_string(v) + " is outside " +
                                  std::to_string(f.min) + ".." + std::to_string(f.max));
  }
}

NetArchitecture NetArchitecture::completed() const {
  NetArchitecture a = *this;
  if (a.input_planes == 0) a.input_planes = planes_for_encoding(1);  // the pieces and rules, as before the choice
  if (a.policy_planes == 0) a.policy_planes = kPolicyPlanes;
  return a;
}

void write_model_file(const std::string& path, ModelHeader header, const std::vector<char>& payload) {
  header.architecture = header.architecture.completed();
  header.architecture.validate();
  const int encoding = encoding_for_planes(header.architecture.input_planes);
  if (encoding == 0)
    throw ModelFileError("model file " + path + ": no input encoding has " +
                         std::to_string(header.architecture.input_planes) + " planes; this build encodes " +
                         encoding_choices());
  if (header.rules.empty() || header.rules.find_first_of(" \n\r") != std::string::npos)
    throw ModelFileError("model file " + path + ": the rules name '" + header.rules + "' must be one word");
  std::ostringstream text;
  text << kModelMagic << "\nformat " << kModelFormatVersion << "\nencoding " << encoding << "\npolicy_layout "
       << kPolicyLayoutVersion << '\n';
  for (const IntField& f : kArchitectureFields) text << f.key << ' ' << header.architecture.*f.field << '\n';
  char checksum[17];
  std::snprintf(checksum, sizeof checksum, "%016llx",
                static_cast<unsigned long long>(fnv1a64(payload.data(), payload.size())));
  text << "rules " << header.rules << "\ntraining_step " << header.training_step << "\npayload_bytes "
       << payload.size() << "\npayload_fnv1a64 " << checksum << "\nend\n";
  const std::string head = text.str();

  try {
    write_file_atomically(path, {head, std::string_view(reinterpret_cast<const char*>(payload.data()), payload.size())});
  } catch (const std::runtime_error& e) {
    fail(path, e.what());
  }
}

ModelHeader read_model_header(const std::string& path) {
  const std::string bytes = read_prefix(path, kMaxHeaderBytes);
  std::size_t end = 0;
  return parse_header(path, bytes, end);
}

ModelFile read_model_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(path, "cannot be opened");
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) fail(path, "read error");
  std::size_t end = 0;
  ModelFile file;
  file.header = parse_header(path, bytes, end);
  const std::uint64_t have = bytes.size() - end;
  if (have < file.header.payload_bytes)
    fail(path, "truncated: the weights have " + std::to_string(have) + " of " +
                   std::to_string(file.header.payload_bytes) + " bytes");
  if (have > file.header.payload_bytes)
    fail(path, std::to_string(have - file.header.payload_bytes) + " bytes of unexpected data after the weights");
  if (fnv1a64(bytes.data() + end, have) != file.header.payload_checksum)
    fail(path, "the weights' checksum does not match the header (the file is corrupt)");
  file.payload.assign(bytes.begin() + static_cast<std::ptrdiff_t>(end), bytes.end());
  return file;
}

void check_architecture(const std::string& path, const NetArchitecture& file, const NetArchitecture& expected) {
  const NetArchitecture a = file.completed(), b = expected.completed();
  std::string diff;
  for (const IntField& f : kArchitectureFields)
    if (a.*f.field != b.*f.field)
      diff += (diff.empty() ? "" : ", ") + std::string(f.key) + " " + std::to_string(a.*f.field) + " (expected " +
              std::to_string(b.*f.field) + ")";
  if (!diff.empty()) fail(path, "the network's architecture differs: " + diff);
}

void blend_payloads(std::vector<char>& average, const std::vector<char>& current, double keep) {
  auto bad = [](const std::string& problem) { throw ModelFileError("averaging weights: " + problem); };
  if (average.size() != current.size()) bad("the payloads differ in size");
  if (current.size() < 4 || std::memcmp(current.data(), payload::kMagic, 4) != 0) bad("not a weights payload");
  std::vector<payload::Record> records;
  try {
    records = payload::read_records(current.data(), current.size());
  } catch (const std::runtime_error& e) {
    bad(e.what());
  }
  // Every record's name, type and shape must match before anything changes.
  for (std::size_t t = 0; t < records.size(); ++t) {
    const payload::Record& r = records[t];
    if (std::memcmp(average.data() + r.offset, current.data() + r.offset, r.data_at - r.offset) != 0)
      bad("tensor " + std::to_string(t) + " differs in name, type or shape");
  }
  for (const payload::Record& r : records) {
    if (r.type != payload::kFloat32) {
      std::memcpy(average.data() + r.data_at, current.data() + r.data_at, r.data_bytes);
      continue;
    }
    for (std::size_t i = 0; i < r.data_bytes; i += 4) {
      float a = 0, c = 0;
      std::memcpy(&a, average.data() + r.data_at + i, 4);
      std::memcpy(&c, current.data() + r.data_at + i, 4);
      const float blended = static_cast<float>(keep * a + (1.0 - keep) * c);
      std::memcpy(average.data() + r.data_at + i, &blended, 4);
    }
  }
}

}  // namespace ultima::nn
