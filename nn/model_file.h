// Model files: a short text header that names the architecture, the input
// encoding, the policy layout, the rule set and the training step, then the
// weights as raw tensors. Plain C++ (no LibTorch), so the trainer, the
// loader and the tests read and write them the same way. The format is
// described in nn/README.md.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "nn/architecture.h"

namespace ultima::nn {

struct ModelHeader {
  int format_version = 0;
  int encoding_version = 0;
  int policy_layout = 0;
  NetArchitecture architecture;
  std::string rules;             // the rule set the net was trained for, e.g. "abbott1963"
  std::uint64_t training_step = 0;
  std::uint64_t payload_bytes = 0;
  std::uint64_t payload_checksum = 0;  // FNV-1a 64 of the payload
};

// Any problem with a model file; the message names the file and the problem.
class ModelFileError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

constexpr const char* kModelMagic = "ULTIMA-NN";
constexpr int kModelFormatVersion = 1;

// Writes header + payload to a temporary file next to `path`, flushes it to
// disk and renames it over `path`: readers never see half a file. Fills in
// format version, encoding, policy layout, payload size and checksum.
void write_model_file(const std::string& path, ModelHeader header, const std::vector<char>& payload);

struct ModelFile {
  ModelHeader header;
  std::vector<char> payload;
};
// Reads and checks a model file: magic, format version, header fields,
// payload size (truncation) and checksum (corruption), and that its encoding
// and policy layout are this build's. Throws ModelFileError.
ModelFile read_model_file(const std::string& path);
// The header alone (still checks magic, version and fields).
ModelHeader read_model_header(const std::string& path);

// Throws ModelFileError when the file's architecture is not `expected`,
// listing the fields that differ.
void check_architecture(const std::string& path, const NetArchitecture& file, const NetArchitecture& expected);

// Moves `average` towards `current`, two payloads of the same network:
// every float32 tensor becomes keep * average + (1 - keep) * current, and
// the other tensors (batch-norm step counters) are taken from `current`.
// For an exponential moving average of the weights (training/train.h).
// Throws ModelFileError, leaving `average` as it was, when the payloads'
// tensors differ in name, type or shape, or a payload is malformed.
void blend_payloads(std::vector<char>& average, const std::vector<char>& current, double keep);

}  // namespace ultima::nn
