// The scheduler's store interfaces over PostgreSQL (server/store).
#ifndef WSCHED_SERVER_REPLICA_DATABASE_STORES_H_
#define WSCHED_SERVER_REPLICA_DATABASE_STORES_H_

#include "server/replica/feed_follower.h"
#include "server/replica/stores.h"
#include "server/store/commit_batcher.h"
#include "server/store/database.h"

namespace wsched::replica {

class DatabasePlacementStore : public PlacementStore {
 public:
  DatabasePlacementStore(store::Database* db, store::CommitBatcher::Options options,
                         store::CommitBatcher::Observer observer)
      : db_(db),
        budget_interval_(options.budget_interval),
        batcher_(db, options, std::move(observer)) {}
  absl::StatusOr<PlacementInputs> ReadInputs(const PlaceRequest& request) override;
  absl::StatusOr<StoredSettings> ReadSettings(const std::string& project_id,
                                              const std::string& org_id,
                                              bool count_org_gpus) override;
  absl::StatusOr<std::optional<store::WorkspaceRow>> LoadWorkspace(const std::string& id) override;
  absl::StatusOr<std::vector<core::Workspace>> ListWorkspaces(const store::WorkspaceFilter& filter,
                                                              const std::string& after,
                                                              int limit) override;
  store::WriteOutcome Write(store::WorkspaceWrite write) override { return batcher_.Run(std::move(write)); }
  std::vector<store::WriteOutcome> WriteAll(std::vector<store::WorkspaceWrite> writes) override {
    return batcher_.RunAll(std::move(writes));
  }
  absl::Status RecordGivenEstimate(const std::string& id, absl::Time at, absl::Duration p50,
                                   absl::Duration p90) override;
  absl::StatusOr<std::vector<store::CheckedEstimate>> CheckEstimates(
      const std::vector<std::string>& ids, absl::Time placed_at) override;
  absl::StatusOr<std::map<std::string, store::EstimateAccuracy>> LoadEstimateAccuracy(
      absl::Time since, absl::Duration grace) override;
  absl::StatusOr<std::optional<store::WorkspaceRow>> RecordReady(const store::WorkspaceRow& seen,
                                                                 absl::Time ready_at) override;

 private:
  store::Database* const db_;
  // What a placement commits to against a spending limit (the batcher's).
  const absl::Duration budget_interval_;
  store::CommitBatcher batcher_;
};

class DatabaseStateStore : public StateStore {
 public:
  explicit DatabaseStateStore(store::Database* db) : db_(db) {}
  absl::StatusOr<Rows> Load(bool catalog, const std::vector<std::string>& nodes,
                            const std::vector<std::string>& workspaces) override;
  absl::StatusOr<Everything> LoadAll() override;

 private:
  store::Database* const db_;
};

class DatabaseFeedSource : public FeedSource {
 public:
  explicit DatabaseFeedSource(store::Database* db) : db_(db) {}
  absl::StatusOr<store::FeedRead> ReadSince(int64_t after, int limit) override;

 private:
  store::Database* const db_;
};

}  // namespace wsched::replica

#endif  // WSCHED_SERVER_REPLICA_DATABASE_STORES_H_
