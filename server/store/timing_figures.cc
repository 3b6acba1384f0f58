#include "server/store/timing_figures.h"

namespace wsched::store {

std::map<std::pair<std::string, std::string>, TimingFigure> FiguresForTheNextInstall(
    const std::map<std::tuple<std::string, std::string, core::DriverCache>, TimingFigure>&
        by_cache) {
  // Preference order: a lower rank wins.
  auto rank = [](core::DriverCache cache) {
    switch (cache) {
      case core::DriverCache::kHit: return 0;
      case core::DriverCache::kUnknown: return 1;
      case core::DriverCache::kMiss: return 2;
    }
    return 2;
  };
  std::map<std::pair<std::string, std::string>, TimingFigure> chosen;
  std::map<std::pair<std::string, std::string>, int> chosen_rank;
  for (const auto& [key, figure] : by_cache) {
    const auto& [pool, kernel, cache] = key;
    std::pair<std::string, std::string> at{pool, kernel};
    auto it = chosen_rank.find(at);
    if (it != chosen_rank.end() && it->second <= rank(cache)) continue;
    chosen_rank[at] = rank(cache);
    chosen[at] = figure;
  }
  return chosen;
}

}  // namespace wsched::store
