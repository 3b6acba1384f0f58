#include "server/catalog/closest_name.h"

#include <algorithm>
#include <vector>

#include "absl/strings/ascii.h"

namespace wsched::catalog {
namespace {

size_t CommonPrefixLength(absl::string_view a, absl::string_view b) {
  size_t n = 0;
  while (n < a.size() && n < b.size() && absl::ascii_tolower(a[n]) == absl::ascii_tolower(b[n]))
    ++n;
  return n;
}

}  // namespace

int EditDistance(absl::string_view a_in, absl::string_view b_in) {
  const std::string a = absl::AsciiStrToLower(a_in);
  const std::string b = absl::AsciiStrToLower(b_in);
  const size_t n = a.size(), m = b.size();
  // Three rows suffice: a swap looks two rows back.
  std::vector<int> before(m + 1), prev(m + 1), cur(m + 1);
  for (size_t j = 0; j <= m; ++j) prev[j] = static_cast<int>(j);
  for (size_t i = 1; i <= n; ++i) {
    cur[0] = static_cast<int>(i);
    for (size_t j = 1; j <= m; ++j) {
      const int cost = a[i - 1] == b[j - 1] ? 0 : 1;
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        cur[j] = std::min(cur[j], before[j - 2] + 1);
      }
    }
    std::swap(before, prev);
    std::swap(prev, cur);
  }
  return prev[m];
}

std::optional<std::string> ClosestName(absl::string_view name,
                                       absl::Span<const absl::string_view> candidates) {
  const int limit = std::max<int>(1, static_cast<int>(name.size()) / 3);
  std::optional<std::string> best;
  int best_distance = limit + 1;
  size_t best_prefix = 0;
  for (absl::string_view candidate : candidates) {
    const int distance = EditDistance(name, candidate);
    // Among equally close names, one that starts like the typo is the
    // likelier intent ("gpu" is "gpus" more often than "cpu").
    const size_t prefix = CommonPrefixLength(name, candidate);
    if (distance < best_distance || (distance == best_distance && prefix > best_prefix)) {
      best_distance = distance;
      best_prefix = prefix;
      best = std::string(candidate);
    }
  }
  return best;
}

}  // namespace wsched::catalog
