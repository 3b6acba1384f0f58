#include "server/idle/idle_actions.h"

#include "absl/strings/str_cat.h"
#include "server/store/unit_of_work.h"

namespace wsched::idle {

absl::flat_hash_map<std::string, IdleMonitor::Actions::Known> IdleActions::KnownOf(
    const std::vector<std::string>& ids) {
  absl::flat_hash_map<std::string, Known> known;
  for (auto& [id, placed] : mirror_->PlacedOf(ids)) known[id] = {placed.version, std::move(placed.idle)};
  return known;
}

absl::StatusOr<int64_t> IdleActions::Mark(const std::string& workspace, int64_t version,
                                          const std::optional<core::IdleMark>& mark) {
  if (db_ == nullptr) return absl::FailedPreconditionError("no database to mark in");
  std::optional<int64_t> written;
  absl::Status status = store::UnitOfWork::Run(*db_, "marking workspace idle",
                                               [&](store::UnitOfWork& unit) -> absl::Status {
    written = unit.workspaces().SetIdleMark(workspace, version, mark);
    if (!written) {
      return absl::AbortedError(
          absl::StrCat("workspace ", workspace, " is no longer placed at version ", version));
    }
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  // Mirrored at once, so this replica's watchers wake and the monitor's
  // next look at the mirror finds the mark.
  if (absl::Status caught_up = follower_->CatchUp(); !caught_up.ok()) return caught_up;
  return *written;
}

}  // namespace wsched::idle
