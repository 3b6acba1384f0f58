#include "server/core/ready_report.h"

#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"
#include "server/core/error_reason.h"

namespace wsched::core {
namespace {

std::string TimeText(absl::Time t) {
  return absl::FormatTime(absl::RFC3339_full, t, absl::UTCTimeZone());
}

}  // namespace

absl::StatusOr<std::optional<absl::Time>> JudgeReadyReport(const Workspace& w,
                                                           std::optional<absl::Time> reported,
                                                           absl::Time now) {
  if (w.state != WorkspaceState::kPlaced) {
    const char* state = WorkspaceStateName(w.state);
    return PreconditionError(
        ErrorReason::kWorkspaceNotPlaced, "STATE", absl::StrCat("workspace/", w.id),
        absl::StrCat("workspace_id: workspace ", w.id, " is ", state,
                     ", not placed; only a placed workspace becomes ready"),
        {{"workspace", w.id}, {"state", state}});
  }
  if (reported && *reported < w.placed_at) {
    return InvalidFieldError("ready_time", absl::StrCat("must not be before the workspace was "
                                                        "placed (",
                                                        TimeText(w.placed_at), ")"));
  }
  if (reported && *reported > now + kReadyTimeAhead) {
    return InvalidFieldError(
        "ready_time", absl::StrCat("must not be more than ", absl::FormatDuration(kReadyTimeAhead),
                                   " ahead of the server's clock (", TimeText(now), ")"));
  }
  if (w.ready_at) return std::optional<absl::Time>();
  // The database's clock dated the placement and the server's dates a
  // report without a time: a moment of skew between them must not make it
  // ready before it was placed.
  return std::optional<absl::Time>(reported.value_or(std::max(now, w.placed_at)));
}

}  // namespace wsched::core
