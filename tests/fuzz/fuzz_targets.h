// The fuzz targets: one function per kind of outside input, each taking raw
// bytes and returning 0. Bad input must end in the parser's own error (a
// clear message), never a crash, a sanitizer report or another exception;
// what parses must hold up (a FEN read back from its own text gives the same
// position, a parsed move is legal, and so on), else the target aborts.
// fuzz_main.cpp hands them to libFuzzer (ULTIMA_FUZZ, clang); replay_test.cpp
// runs the kept inputs of tests/fuzz/corpus/<target>/ through the same
// functions in every ctest run.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace ultima::fuzz {

using Target = int (*)(const std::uint8_t* data, std::size_t size);

struct NamedTarget {
  const char* name;
  Target run;
};

int fen(const std::uint8_t* data, std::size_t size);
int move_text(const std::uint8_t* data, std::size_t size);
int uci_lines(const std::uint8_t* data, std::size_t size);
int pgn(const std::uint8_t* data, std::size_t size);
int run_config(const std::uint8_t* data, std::size_t size);
int model_file(const std::uint8_t* data, std::size_t size);
int checkpoint(const std::uint8_t* data, std::size_t size);
int sample_shard(const std::uint8_t* data, std::size_t size);
int nnue_file(const std::uint8_t* data, std::size_t size);
int nnue_records(const std::uint8_t* data, std::size_t size);
int server_requests(const std::uint8_t* data, std::size_t size);  // the web server's JSON handlers

// Every target by its name (the corpus folder's name).
const std::vector<NamedTarget>& all_targets();

}  // namespace ultima::fuzz
