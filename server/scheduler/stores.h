// The narrow views of PostgreSQL that the scheduler's parts use. The
// placement pipeline and the state the feed keeps current see only these,
// so their races are unit-tested against in-memory fakes
// (fake_stores_test_util.h); database_stores.h has the real ones.
#ifndef WSCHED_SERVER_SCHEDULER_STORES_H_
#define WSCHED_SERVER_SCHEDULER_STORES_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "server/core/catalog.h"
#include "server/core/settings.h"
#include "server/core/workspace.h"
#include "server/store/node_repository.h"
#include "server/store/workspace_repository.h"

namespace wsched::scheduler {

struct PlaceRequest {
  std::string workspace_id, org_id, project_id, user_id, class_id;
  bool restart = false;
  int priority = 0;
};

// What a placement reads from the database before deciding: what must be
// exact (the workspace's record, settings, the org's GPUs) and the catalog
// generation (to catch up before deciding with an older catalog).
struct PlacementInputs {
  std::optional<store::WorkspaceRow> existing;
  core::ProjectSettings project;
  core::OrgSettings org;
  int64_t org_gpus = 0;
  int64_t catalog_generation = 0;
};

class PlacementStore {
 public:
  virtual ~PlacementStore() = default;
  virtual absl::StatusOr<PlacementInputs> ReadInputs(const PlaceRequest& request) = 0;
  virtual absl::StatusOr<std::optional<store::WorkspaceRow>> LoadWorkspace(const std::string& id) = 0;
  // Each returns the record's new version; ABORTED when the record is not
  // the one `from` names, a GPU is held or the node refuses (see
  // store/workspace_repository.h).
  virtual absl::StatusOr<int64_t> SavePending(const core::Workspace& workspace,
                                              store::DecidedFrom from) = 0;
  // Group-committed. `quota` unset: read the org's quota in the commit.
  // RESOURCE_EXHAUSTED when the org's GPU quota would be exceeded.
  virtual absl::StatusOr<int64_t> CommitPlacement(const core::Workspace& workspace, int gpus,
                                                  std::optional<int64_t> quota,
                                                  store::DecidedFrom from) = 0;
  // Always wins; the row after.
  virtual absl::StatusOr<store::WorkspaceRow> Stop(const std::string& id) = 0;
};

// What applying the feed and reloading read.
class StateStore {
 public:
  virtual ~StateStore() = default;
  struct Rows {
    std::optional<core::Catalog> catalog;  // Only when asked for.
    int64_t catalog_generation = 0;
    std::vector<store::StoredNode> nodes;          // Those of the names that exist.
    std::vector<store::WorkspaceRow> workspaces;  // Those of the ids that exist.
  };
  virtual absl::StatusOr<Rows> Load(bool catalog, const std::vector<std::string>& nodes,
                                    const std::vector<std::string>& workspaces) = 0;
  // Everything a replica mirrors, as of one database snapshot, and the
  // change-log position of that snapshot.
  struct Everything {
    int64_t position = 0;
    int64_t catalog_generation = 0;
    core::Catalog catalog;
    std::vector<store::StoredNode> nodes;
    std::vector<store::WorkspaceRow> active;
  };
  virtual absl::StatusOr<Everything> LoadAll() = 0;
};

}  // namespace wsched::scheduler

#endif  // WSCHED_SERVER_SCHEDULER_STORES_H_
