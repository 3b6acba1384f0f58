#include "server/core/driver_install.h"

#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace wsched::core {

const char* DriverInstallName(DriverInstall face) {
  switch (face) {
    case DriverInstall::kManual: return "manual";
    case DriverInstall::kNode: return "node";
    case DriverInstall::kCluster: return "cluster";
  }
  return "manual";
}

std::optional<DriverInstall> ParseDriverInstall(absl::string_view name) {
  for (DriverInstall face : {DriverInstall::kManual, DriverInstall::kNode, DriverInstall::kCluster}) {
    if (name == DriverInstallName(face)) return face;
  }
  return std::nullopt;
}

const char* DriverCacheName(DriverCache cache) {
  switch (cache) {
    case DriverCache::kUnknown: return "";
    case DriverCache::kHit: return "hit";
    case DriverCache::kMiss: return "miss";
  }
  return "";
}

std::optional<DriverCache> ParseDriverCache(absl::string_view name) {
  for (DriverCache cache : {DriverCache::kUnknown, DriverCache::kHit, DriverCache::kMiss}) {
    if (name == DriverCacheName(cache)) return cache;
  }
  return std::nullopt;
}

DriverCache DriverCacheReportIn(absl::string_view output) {
  constexpr absl::string_view kCacheReportPrefix = "wsched-driver-cache:";
  DriverCache cache = DriverCache::kUnknown;
  for (absl::string_view line : absl::StrSplit(output, '\n')) {
    line = absl::StripAsciiWhitespace(line);
    if (!absl::ConsumePrefix(&line, kCacheReportPrefix)) continue;
    line = absl::StripAsciiWhitespace(line);
    if (line == "hit") cache = DriverCache::kHit;
    if (line == "miss") cache = DriverCache::kMiss;
  }
  return cache;
}

bool AgentRunsDriverInstall(DriverInstall face, DriverState state) {
  if (face != DriverInstall::kNode) return false;
  return state == DriverState::kNeedsDriver || state == DriverState::kInstalling ||
         state == DriverState::kInstallFailed;
}

}  // namespace wsched::core
