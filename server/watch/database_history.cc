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

std::shared_ptr<const NodeHappened> AsHappened(store::NodeChangeRow row) {
  auto happened = std::make_shared<NodeHappened>();
  happened->name = std::move(row.id);
  happened->pool = std::move(row.pool);
  happened->version = row.version;
  happened->registered = row.registered;
  happened->after = std::move(row.after);
  return happened;
}

// The stored history after `after` (`read` in one unit of work) as the
// fanout's entries of kind K.
template <typename K, typename Read>
absl::StatusOr<BasicHistoryRead<K>>
ReadHistory(store::Database &db, absl::string_view what, int64_t after,
            int limit, Read read_stored) {
  BasicHistoryRead<K> read;
  absl::Status status = store::UnitOfWork::Run(
      db, what, [&](store::UnitOfWork &unit) -> absl::Status {
        auto stored = read_stored(unit, after, limit);
        if (!stored.ok())
          return stored.status();
        read.head = stored->head;
        read.reaches = stored->reaches;
        read.oldest = stored->oldest;
        read.entries.reserve(stored->entries.size());
        for (auto &entry : stored->entries) {
          BasicEntry<K> out{entry.seq, {}};
          for (auto &change : entry.changes)
            out.happened.push_back(AsHappened(std::move(change)));
          read.entries.push_back(std::move(out));
        }
        return absl::OkStatus();
      });
  if (!status.ok())
    return status;
  return read;
}

absl::StatusOr<int64_t> HeadOf(store::Database &db) {
  int64_t head = 0;
  absl::Status status =
      store::UnitOfWork::Run(db, "reading the change log head",
                             [&](store::UnitOfWork &unit) -> absl::Status {
                               head = unit.change_log().Head();
                               return absl::OkStatus();
                             });
  if (!status.ok())
    return status;
  return head;
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
        listing.records.reserve(rows->size());
        for (store::WorkspaceRow& row : *rows) {
          auto happened = std::make_shared<Happened>();
          happened->id = row.workspace.id;
          happened->version = row.version;
          happened->before = watch::FactsOf(row.workspace);
          happened->after = std::move(row.workspace);
          listing.records.push_back(std::move(happened));
        }
        return absl::OkStatus();
      },
      store::UnitOfWork::Mode::kSnapshot, store::UnitOfWork::Bound::kLong);
  if (!status.ok()) return status;
  return listing;
}

absl::StatusOr<HistoryRead> DatabaseHistory::ReadSince(int64_t after, int limit) {
  return ReadHistory<WorkspaceKind>(
      *db_, "reading workspace history", after, limit,
      [](store::UnitOfWork &unit, int64_t after, int limit) {
        return unit.change_log().ReadWorkspaceHistory(after, limit);
      });
}

absl::StatusOr<int64_t> DatabaseHistory::Head() { return HeadOf(*db_); }

absl::StatusOr<NodeListing>
DatabaseNodeHistory::List(const NodeFilter &filter) {
  NodeListing listing;
  absl::Status status = store::UnitOfWork::Run(
      *db_, "listing nodes for a watch",
      [&](store::UnitOfWork &unit) -> absl::Status {
        listing.version = unit.change_log().Head();
        auto nodes = unit.nodes().ListSelected(filter.pool, filter.node);
        if (!nodes.ok())
          return nodes.status();
        listing.records.reserve(nodes->size());
        for (store::StoredNode &node : *nodes) {
          store::NodeChangeRow row{node.info.name, node.info.pool, node.version,
                                   false, std::nullopt};
          row.after = std::move(node);
          listing.records.push_back(AsHappened(std::move(row)));
        }
        return absl::OkStatus();
      },
      store::UnitOfWork::Mode::kSnapshot, store::UnitOfWork::Bound::kLong);
  if (!status.ok()) return status;
  return listing;
}

absl::StatusOr<NodeHistoryRead> DatabaseNodeHistory::ReadSince(int64_t after,
                                                               int limit) {
  return ReadHistory<NodeKind>(
      *db_, "reading node history", after, limit,
      [](store::UnitOfWork &unit, int64_t after, int limit) {
        return unit.change_log().ReadNodeHistory(after, limit);
      });
}

absl::StatusOr<int64_t> DatabaseNodeHistory::Head() { return HeadOf(*db_); }

}  // namespace wsched::watch
