#include "server/cli/duration_flag.h"

#include <cstdint>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace wsched::cli {

absl::StatusOr<absl::Duration> ParseDurationFlag(std::string_view text) {
  absl::Duration duration;
  int64_t seconds;
  if (absl::SimpleAtoi(std::string(text), &seconds)) {
    duration = absl::Seconds(seconds);
  } else if (!absl::ParseDuration(std::string(text), &duration)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--timeout: want a duration such as 30s, 500ms or 2m, not \"", std::string(text), "\""));
  }
  if (duration <= absl::ZeroDuration() || duration == absl::InfiniteDuration()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--timeout: must be above zero and finite, not \"", std::string(text), "\""));
  }
  return duration;
}

}  // namespace wsched::cli
