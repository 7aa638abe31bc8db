// The web board's files (frontends/server/web/), built into the program by
// CMake (embed_web_assets.cmake), so `ultima serve` needs no files beside it.
#pragma once

#include <cstddef>
#include <string_view>

namespace ultima {

struct WebAsset {
  std::string_view path;          // "/index.html", "/app.js", ...
  std::string_view content_type;  // "text/html; charset=utf-8", ...
  std::string_view content;
};

// Every file of the folder, sorted by path.
extern const WebAsset kWebAssets[];
extern const std::size_t kWebAssetCount;

// The asset at `path`, or null.
const WebAsset* find_web_asset(std::string_view path);

}  // namespace ultima
