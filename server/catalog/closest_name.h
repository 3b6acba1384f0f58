// "Did you mean ...?" for misspelt keys: the closest known name by edit distance.
#ifndef WSCHED_SERVER_CATALOG_CLOSEST_NAME_H_
#define WSCHED_SERVER_CATALOG_CLOSEST_NAME_H_

#include <optional>
#include <string>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace wsched::catalog {

// Edit distance counting insertions, deletions, substitutions and swaps of
// two neighbouring characters ("modles" -> "models" is 1), ignoring case.
int EditDistance(absl::string_view a, absl::string_view b);

// The candidate closest to `name`, if it is close enough to be a plausible
// typo (at most a third of the name's length, and at least 1, apart). Ties go
// to the earlier candidate so suggestions are stable.
std::optional<std::string> ClosestName(absl::string_view name,
                                       absl::Span<const absl::string_view> candidates);

}  // namespace wsched::catalog

#endif  // WSCHED_SERVER_CATALOG_CLOSEST_NAME_H_
