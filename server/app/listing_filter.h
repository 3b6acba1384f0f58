// How a listing's filter is written into its page tokens (core/paging.h):
// a token only continues the listing it came from.
#ifndef WSCHED_SERVER_APP_LISTING_FILTER_H_
#define WSCHED_SERVER_APP_LISTING_FILTER_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"

namespace wsched::app {

// A time bound of a filter: "<unix seconds>.<nanoseconds>", "0.0" when
// unset. The same text the handlers once wrote from the request's
// Timestamp, so a token issued by an older replica still continues its
// listing on this one during a rolling upgrade.
inline std::string TimeBoundText(const std::optional<absl::Time>& time) {
  if (!time) return "0.0";
  const int64_t seconds = absl::ToUnixSeconds(*time);  // Floors, as a Timestamp's seconds.
  const int64_t nanos = absl::ToInt64Nanoseconds(*time - absl::FromUnixSeconds(seconds));
  return absl::StrCat(seconds, ".", nanos);
}

}  // namespace wsched::app

#endif  // WSCHED_SERVER_APP_LISTING_FILTER_H_
