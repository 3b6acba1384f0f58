// The narrow views of PostgreSQL that the scheduler's parts use. The
// placement pipeline and the state the feed keeps current see only these,
// so their races are unit-tested against in-memory fakes
// (fake_stores_test_util.h); database_stores.h has the real ones.
#ifndef WSCHED_SERVER_REPLICA_STORES_H_
#define WSCHED_SERVER_REPLICA_STORES_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "server/core/catalog.h"
#include "server/core/settings.h"
#include "server/core/spending_limit.h"
#include "server/core/workspace.h"
#include "server/store/types.h"

namespace wsched::replica {

struct PlaceRequest {
  std::string workspace_id, org_id, project_id, user_id, class_id;
  bool restart = false;
  int priority = 0;
  // A dry run: answer with quotes, write nothing (placement/quote.h).
  bool validate_only = false;
  // Place as this quote said, or refuse (QUOTE_STALE); empty: as decided.
  std::string quote_token;
};

// What a placement reads from the database before deciding: what must be
// exact (the workspace's record, settings, the org's GPUs) and the catalog
// generation (to catch up before deciding with an older catalog).
struct PlacementInputs {
  std::optional<store::WorkspaceRow> existing;
  core::ProjectSettings project;
  core::OrgSettings org;
  int64_t project_version = 0;  // Of the settings rows; 0: none stored.
  int64_t org_version = 0;
  // What the org holds in sevenths of a GPU (a slice counts its share);
  // read only when the org has a GPU quota.
  int64_t org_gpu_sevenths = 0;
  int64_t catalog_generation = 0;
};

// A project's and an org's settings as stored now (what pending reasons
// and the queue's policy check judge by).
struct StoredSettings {
  core::ProjectSettings project;
  int64_t project_version = 0;  // Of the settings rows; 0: none stored.
  core::OrgSettings org;
  int64_t org_version = 0;
  // In sevenths, as ReadInputs::org_gpu_sevenths; counted only when asked
  // for and the org has a GPU quota.
  int64_t org_gpu_sevenths_held = 0;
  // With the same ask: the org's and the project's spending limits (those
  // set) and what their periods have spent, as the commit admits against
  // them. A limit that cannot be judged (a time zone unknown here) is left
  // out: the commit says why when it refuses.
  std::vector<core::BudgetStanding> budgets;
};

class PlacementStore {
 public:
  virtual ~PlacementStore() = default;
  // The slow path: what a placement needs that this replica does not know.
  virtual absl::StatusOr<PlacementInputs> ReadInputs(const PlaceRequest& request) = 0;
  // One read of both settings rows (and, with `count_org_gpus`, the GPUs
  // the org holds now).
  virtual absl::StatusOr<StoredSettings> ReadSettings(const std::string& project_id,
                                                      const std::string& org_id,
                                                      bool count_org_gpus) = 0;
  virtual absl::StatusOr<std::optional<store::WorkspaceRow>> LoadWorkspace(const std::string& id) = 0;
  // Up to `limit` stored workspaces matching `filter`, by id after `after`.
  virtual absl::StatusOr<std::vector<core::Workspace>> ListWorkspaces(
      const store::WorkspaceFilter& filter, const std::string& after, int limit) = 0;
  // Group-committed with whatever else is being written, under every guard
  // of store/write_batch.h: ABORTED when the record is not the one the
  // decision saw, a GPU is held, the node refuses, or the catalog or
  // settings changed; RESOURCE_EXHAUSTED over the org's GPU quota.
  virtual store::WriteOutcome Write(store::WorkspaceWrite write) = 0;
  // Many writes committed together where the store can (the queue drain);
  // each has its own outcome, in the order given.
  virtual std::vector<store::WriteOutcome> WriteAll(std::vector<store::WorkspaceWrite> writes) {
    std::vector<store::WriteOutcome> outcomes;
    for (store::WorkspaceWrite& write : writes) outcomes.push_back(Write(std::move(write)));
    return outcomes;
  }
  // Estimates that are checked (store/timing_repository.h), each in a
  // small unit of its own, outside the group commit. A store that keeps no
  // record of them (a test's) checks nothing.
  virtual absl::Status RecordGivenEstimate(const std::string& /*id*/, absl::Time /*at*/,
                                           absl::Duration /*p50*/, absl::Duration /*p90*/) {
    return absl::OkStatus();
  }
  virtual absl::StatusOr<std::vector<store::CheckedEstimate>> CheckEstimates(
      const std::vector<std::string>& /*ids*/, absl::Time /*placed_at*/) {
    return std::vector<store::CheckedEstimate>();
  }
  virtual absl::StatusOr<std::map<std::string, store::EstimateAccuracy>> LoadEstimateAccuracy(
      absl::Time /*since*/, absl::Duration /*grace*/) {
    return std::map<std::string, store::EstimateAccuracy>();
  }
  // ReportWorkspaceReady's write, one small unit outside the group commit
  // (it moves no capacity): `seen`, a placed record without a ready time,
  // becomes ready at `ready_at` and its pool gets a first_ready sample
  // (ready_at - placed_at), both or neither. The record as written; nullopt
  // (nothing written) when it is no longer at `seen`'s version, placed and
  // without a ready time.
  virtual absl::StatusOr<std::optional<store::WorkspaceRow>> RecordReady(
      const store::WorkspaceRow& /*seen*/, absl::Time /*ready_at*/) {
    return absl::UnimplementedError("this store keeps no ready times");
  }
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

}  // namespace wsched::replica

#endif  // WSCHED_SERVER_REPLICA_STORES_H_
