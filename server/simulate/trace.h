// The trace CSV the simulator replays (docs/scaling.md "The trace format"):
// a header row naming the columns, then one workspace per row.
//
//   time,org,project,class,duration_s
//   2026-03-02T08:00:00Z,acme,web,gpu-1x,3600
//
// Columns are found by name (case-insensitive, in any order; others are
// ignored), so an export of the usage ledger reads as it is:
//
//   column     names accepted                                      required
//   time       time, start, started_at, start_time, placed_at,     yes
//              created_at
//   duration   duration_s, duration_seconds, seconds, duration     one of the two
//   end        end, ended_at, end_time, stopped_at
//   org        org, org_id                                         no ("")
//   project    project, project_id                                 no ("")
//   class      class, class_id                                     no (catalog default)
//   id         id, workspace, workspace_id                         no (line number)
//
// Times are RFC 3339 ("2026-03-02T08:00:00Z", a space for the T is fine) or
// Unix seconds. duration_s, duration_seconds and seconds are seconds;
// `duration` also takes "1h30m". A row with both uses the duration; with an
// empty end (a placement still running when the ledger was read) it runs to
// the latest time in the trace. Blank lines and lines starting with '#' are
// skipped; fields may be double-quoted ("" for a quote inside).
#ifndef WSCHED_SERVER_SIMULATE_TRACE_H_
#define WSCHED_SERVER_SIMULATE_TRACE_H_

#include <cstddef>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "server/simulate/workload.h"

namespace wsched::simulate {

inline constexpr size_t kMaxTraceRows = 5'000'000;

// Every row, in file order. InvalidArgument naming the line, the column and
// the rule for the first bad row ("trace line 7, column end: ..."), a header
// without a time column or without a duration or end column, or more than
// kMaxTraceRows rows.
absl::StatusOr<std::vector<Arrival>> ParseTraceCsv(absl::string_view text);

}  // namespace wsched::simulate

#endif  // WSCHED_SERVER_SIMULATE_TRACE_H_
