// Small text helpers shared by every layer: words of a line, trimming,
// case, whole-number parsing. Only the standard library.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace ultima {

// The whitespace-separated words of `line`.
std::vector<std::string> split_words(std::string_view line);
// `text` cut at every `sep` (empty fields kept: "a,,b" gives three).
std::vector<std::string> split(std::string_view text, char sep);
// Without leading and trailing blanks (spaces, tabs, line ends).
std::string trim(std::string_view text);
// ASCII lower case.
std::string to_lower(std::string text);
// The whole of `text` as a decimal integer (a leading '-' allowed); false,
// leaving `out` alone, for anything else (empty, trailing text, overflow).
bool parse_integer(std::string_view text, long long& out);
// The time now as strftime's `format` writes it, in local time or UTC
// ("%Y.%m.%d" for a PGN date, "%Y-%m-%dT%H:%M:%SZ" for a report).
std::string local_time_text(const char* format);
std::string utc_time_text(const char* format);

}  // namespace ultima
