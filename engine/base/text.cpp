#include "engine/base/text.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <ctime>

namespace ultima {

std::vector<std::string> split_words(std::string_view line) {
  std::vector<std::string> words;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && std::isspace(static_cast<unsigned char>(line[i]))) ++i;
    const std::size_t start = i;
    while (i < line.size() && !std::isspace(static_cast<unsigned char>(line[i]))) ++i;
    if (i > start) words.emplace_back(line.substr(start, i - start));
  }
  return words;
}

std::vector<std::string> split(std::string_view text, char sep) {
  std::vector<std::string> fields;
  for (;;) {
    const std::size_t at = text.find(sep);
    fields.emplace_back(text.substr(0, at));
    if (at == std::string_view::npos) return fields;
    text.remove_prefix(at + 1);
  }
}

std::string trim(std::string_view text) {
  auto blank = [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; };
  while (!text.empty() && blank(text.front())) text.remove_prefix(1);
  while (!text.empty() && blank(text.back())) text.remove_suffix(1);
  return std::string(text);
}

std::string to_lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(), [](unsigned char c) { return std::tolower(c); });
  return text;
}

bool parse_integer(std::string_view text, long long& out) {
  long long value = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc() || ptr != end) return false;
  out = value;
  return true;
}

namespace {

std::string time_text(const char* format, bool utc) {
  const std::time_t now = std::time(nullptr);
  std::tm parts{};
  if (utc) gmtime_r(&now, &parts);
  else localtime_r(&now, &parts);
  char text[64];
  const std::size_t size = std::strftime(text, sizeof text, format, &parts);
  return std::string(text, size);
}

}  // namespace

std::string local_time_text(const char* format) { return time_text(format, false); }
std::string utc_time_text(const char* format) { return time_text(format, true); }

}  // namespace ultima
