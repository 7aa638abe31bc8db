#include "frontends/server/web_assets.h"

#include <algorithm>

namespace ultima {

const WebAsset* find_web_asset(std::string_view path) {
  const WebAsset* end = kWebAssets + kWebAssetCount;
  const WebAsset* it =
      std::lower_bound(kWebAssets, end, path, [](const WebAsset& a, std::string_view p) { return a.path < p; });
  return it != end && it->path == path ? it : nullptr;
}

}  // namespace ultima
