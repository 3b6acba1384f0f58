#include "server/watch/database_history.h"

#include <utility>

#include "server/store/unit_of_work.h"

namespace wsched::watch {
namespace {

Facts FactsOf(const store::WorkspaceFacts& facts) {
  return {core::ParseWorkspaceState(facts.state), facts.org_id, facts.project_id,
          facts.class_id, facts.pool, facts.node};
}

store::WorkspaceSelection SelectionOf(const Filter& filter) {
  store::WorkspaceSelection selection{filter.org_id, filter.project_id, filter.class_id,
                                      filter.pool,   filter.node,       {},
                                      filter.scope_orgs, filter.scope_projects};
  for (core::WorkspaceState state : filter.states) {
    selection.states.push_back(core::WorkspaceStateName(state));
  }
  return selection;
}

std::shared_ptr<const Happened> AsHappened(store::WorkspaceChangeRow row) {
  auto happened = std::make_shared<Happened>();
  happened->id = std::move(row.id);
  happened->version = row.version;
  happened->before = FactsOf(row.before);
  if (row.after) happened->after = std::move(row.after->workspace);
  return happened;
}

}  // namespace

absl::StatusOr<Listing> DatabaseHistory::List(const Filter& filter) {
  Listing listing;
  absl::Status status = store::UnitOfWork::Run(
      *db_, "listing workspaces for a watch",
      [&](store::UnitOfWork& unit) -> absl::Status {
        listing.version = unit.change_log().Head();
        auto rows = unit.workspaces().ListSelected(SelectionOf(filter));
        if (!rows.ok()) return rows.status();
        listing.workspaces.reserve(rows->size());
        for (store::WorkspaceRow& row : *rows) {
          auto happened = std::make_shared<Happened>();
          happened->id = row.workspace.id;
          happened->version = row.version;
          happened->before = watch::FactsOf(row.workspace);
          happened->after = std::move(row.workspace);
          listing.workspaces.push_back(std::move(happened));
        }
        return absl::OkStatus();
      },
      store::UnitOfWork::Mode::kSnapshot, store::UnitOfWork::Bound::kLong);
  if (!status.ok()) return status;
  return listing;
}

absl::StatusOr<HistoryRead> DatabaseHistory::ReadSince(int64_t after, int limit) {
  HistoryRead read;
  absl::Status status = store::UnitOfWork::Run(
      *db_, "reading workspace history", [&](store::UnitOfWork& unit) -> absl::Status {
        auto stored = unit.change_log().ReadWorkspaceHistory(after, limit);
        if (!stored.ok()) return stored.status();
        read.head = stored->head;
        read.reaches = stored->reaches;
        read.oldest = stored->oldest;
        read.entries.reserve(stored->entries.size());
        for (store::WorkspaceHistoryEntry& entry : stored->entries) {
          Entry out{entry.seq, {}};
          for (store::WorkspaceChangeRow& change : entry.changes) {
            out.happened.push_back(AsHappened(std::move(change)));
          }
          read.entries.push_back(std::move(out));
        }
        return absl::OkStatus();
      });
  if (!status.ok()) return status;
  return read;
}

absl::StatusOr<int64_t> DatabaseHistory::Head() {
  int64_t head = 0;
  absl::Status status = store::UnitOfWork::Run(*db_, "reading the change log head",
                                               [&](store::UnitOfWork& unit) -> absl::Status {
    head = unit.change_log().Head();
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  return head;
}

}  // namespace wsched::watch
