// The rules of a workspace's first ready report (ReportWorkspaceReady):
// which placed workspace may report, which ready times are believed, and
// that the first report of a placement wins. Pure: the caller reads the
// record and the clock.
#ifndef WSCHED_SERVER_CORE_READY_REPORT_H_
#define WSCHED_SERVER_CORE_READY_REPORT_H_

#include <optional>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "server/core/workspace.h"

namespace wsched::core {

// How far ahead of the server's clock a reported ready time may lie: the
// control plane's clock may run a little ahead, not a report of the future.
inline constexpr absl::Duration kReadyTimeAhead = absl::Minutes(1);

// What a ready report saying `reported` (nullopt: it says no time) does to
// the stored workspace `w` at `now`, by the server's clock: the ready time
// to store, or nullopt when this placement reported ready already (the
// first report wins; nothing more is recorded). Refused, each naming the
// field and the rule: a workspace not placed (FAILED_PRECONDITION,
// WORKSPACE_NOT_PLACED), a ready time before the placement or more than
// kReadyTimeAhead ahead of `now` (INVALID_ARGUMENT on ready_time).
absl::StatusOr<std::optional<absl::Time>> JudgeReadyReport(const Workspace& w,
                                                           std::optional<absl::Time> reported,
                                                           absl::Time now);

}  // namespace wsched::core

#endif  // WSCHED_SERVER_CORE_READY_REPORT_H_
