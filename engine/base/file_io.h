// Whole-file reading and the one writer of every file the program saves
// (models, shards, checkpoints, PGN, level and weight files, run configs,
// generation tables, plots): a reader, or a program killed at any moment,
// sees either the old file or the whole new one, never a part.
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>

namespace ultima {

// Writes `parts` one after another to `path`: a temporary file beside it
// with a name unique to this process and call, written and fsync'ed, then
// renamed over `path`, then the folder fsync'ed so the rename itself
// survives a crash. On failure the temporary file is removed, `path` is
// left as it was, and std::runtime_error names `path` and the reason.
void write_file_atomically(const std::string& path, std::initializer_list<std::string_view> parts);
inline void write_file_atomically(const std::string& path, std::string_view text) {
  write_file_atomically(path, {text});
}

// The whole file; throws std::runtime_error naming it when it cannot be read.
std::string read_file(const std::string& path);

}  // namespace ultima
