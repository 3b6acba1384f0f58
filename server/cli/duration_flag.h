// --timeout's value: "30s", "500ms", "2m", or a bare number of seconds.
#ifndef WSCHED_SERVER_CLI_DURATION_FLAG_H_
#define WSCHED_SERVER_CLI_DURATION_FLAG_H_

#include <string_view>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace wsched::cli {

// InvalidArgument for text that is no duration, or not above zero (a zero
// deadline would fail every call).
absl::StatusOr<absl::Duration> ParseDurationFlag(std::string_view text);

}  // namespace wsched::cli

#endif  // WSCHED_SERVER_CLI_DURATION_FLAG_H_
