// wschedctl usage's pure parts: reading --since/--until, and writing times
// and CSV (the billing export, docs/billing.md).
#ifndef WSCHED_SERVER_CLI_USAGE_FORMAT_H_
#define WSCHED_SERVER_CLI_USAGE_FORMAT_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace wsched::cli {

// A --since / --until value, for `flag` in errors: "now"; a duration back
// from `now` ("36h", "30m"); an RFC 3339 time with its offset
// ("2026-10-25T00:00:00+02:00", "...Z"); or a local date or time in `zone`
// ("2026-10-25", "2026-10", "2026-10-25T14:00"), taken at its start.
absl::StatusOr<absl::Time> ParseUsageTime(std::string_view text, std::string_view flag,
                                          absl::Time now, const absl::TimeZone& zone);

// "2026-10-25T00:00:00+02:00", with ".123456" when there are microseconds.
std::string UsageTimeText(absl::Time time, const absl::TimeZone& zone);

// One CSV line (RFC 4180): fields with a comma, quote or line break are
// quoted, quotes doubled; ends in "\r\n".
std::string CsvLine(const std::vector<std::string>& fields);

}  // namespace wsched::cli

#endif  // WSCHED_SERVER_CLI_USAGE_FORMAT_H_
