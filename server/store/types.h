// The values the store's interfaces trade in: stored rows, the writes of
// the group commit, change-log entries. Free of libpqxx, so code above the
// store compiles without it (only server/store builds against libpqxx).
#ifndef WSCHED_SERVER_STORE_TYPES_H_
#define WSCHED_SERVER_STORE_TYPES_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "server/core/driver_install.h"
#include "server/core/driver_rollout.h"
#include "server/core/driver_readiness.h"
#include "server/core/node.h"
#include "server/core/spending_limit.h"
#include "server/core/usage.h"
#include "server/core/workspace.h"

namespace wsched::store {

// ---- the change log (change_log.h)

enum class Entity { kCatalog, kNode, kWorkspace, kSettings, kNodeCredential };
const char* EntityName(Entity entity);
std::optional<Entity> ParseEntity(absl::string_view name);

// What a workspace was before a change, in the terms a WatchWorkspaces
// filter selects on, so that a stream whose filter the change leaves is
// told (docs/api.md "Following every workspace"). Stored with the change.
struct WorkspaceFacts {
  std::string state;  // core::WorkspaceStateName; "" = it did not exist.
  std::string org_id;
  std::string project_id;
  std::string pool;
  std::string node;
  std::string class_id;
  friend bool operator==(const WorkspaceFacts&, const WorkspaceFacts&) = default;
};

struct Change {
  Entity entity = Entity::kWorkspace;
  std::string id;       // Node name, workspace id, settings key; "" for the catalog.
  int64_t version = 0;  // The entity's version after the change.
  // Workspaces: their facts before the change. Nodes: only `pool`, which
  // never changes for a node (a removed node's stream needs it).
  WorkspaceFacts before;
  bool created = false; // Nodes: the change registered it (it did not exist).
  friend bool operator==(const Change&, const Change&) = default;
};

// The changes one transaction makes, published together when it commits.
class ChangeSet {
 public:
  void Add(Entity entity, std::string id, int64_t version) {
    changes_.push_back({entity, std::move(id), version, {}});
  }
  void AddWorkspace(std::string id, int64_t version, WorkspaceFacts before) {
    changes_.push_back({Entity::kWorkspace, std::move(id), version, std::move(before)});
  }
  void AddNode(std::string name, int64_t version, std::string pool,
               bool created = false) {
    WorkspaceFacts facts;
    facts.pool = std::move(pool);
    changes_.push_back(
        {Entity::kNode, std::move(name), version, std::move(facts), created});
  }
  void Append(const ChangeSet& other) {
    changes_.insert(changes_.end(), other.changes_.begin(), other.changes_.end());
  }
  bool empty() const { return changes_.empty(); }
  const std::vector<Change>& changes() const { return changes_; }

 private:
  std::vector<Change> changes_;
};

struct ChangeRecord {
  int64_t seq = 0;
  std::string replica;  // Who committed it (store::ReplicaId()).
  absl::Time written_at;
  std::vector<Change> changes;
};

struct FeedRead {
  int64_t head = 0;                   // The newest committed seq.
  std::vector<ChangeRecord> records;  // seq > after, ascending, at most `limit`.
};

// ---- nodes (node_repository.h)

struct StoredNode {
  core::NodeInfo info;
  core::NodeState state = core::NodeState::kReady;
  core::DriverState driver_state = core::DriverState::kNotNeeded;
  std::string driver_detail;
  core::DriverHistory driver_history;
  absl::Time registered_at;
  absl::Time last_heartbeat;
  int64_t held_cpu_millis = 0;
  int64_t held_memory_bytes = 0;
  int64_t version = 0;  // Changes with everything above but liveness and holds.
};

// A pool's driver rollout under way (core/driver_rollout.h).
struct DriverRolloutRow {
  std::string pool;
  core::RolloutRecord record;
  absl::Time updated_at;
};

// ---- node credentials (node_credential_repository.h)

struct NodeCredentialRow {
  std::string node;
  std::string pool;
  std::string token_sha256;  // The token's SHA-256, 32 raw bytes.
  absl::Time issued_at;
  std::string issued_by;  // The principal that issued it.
  int64_t version = 0;
};

// ---- workspaces (workspace_repository.h, write_batch.h)

// A stored workspace with what the store guards it by.
struct WorkspaceRow {
  core::Workspace workspace;
  int64_t version = 0;    // Changes on every transition (entity_versions).
  bool released = false;  // stopped_at is set: it holds nothing any more.
};

// ---- spending limits (budget_repository.h)

// An org's ("org") or a project's ("project") spending limit.
struct LimitedScope {
  std::string kind;
  std::string id;
  core::SpendingLimit limit;
};

// ---- workspace history (change_log.h): what WatchWorkspaces streams

// One workspace's change as its transaction committed it.
struct WorkspaceChangeRow {
  std::string id;
  int64_t version = 0;
  WorkspaceFacts before;
  // After the change; nullopt when the change deleted it (retention).
  std::optional<WorkspaceRow> after;
};

// One change-log entry: its version (seq) and what it did to the records
// of one kind (often nothing: the entry changed only other kinds).
template <typename ChangeRow> struct HistoryEntry {
  int64_t seq = 0;
  std::vector<ChangeRow> changes;
};

template <typename ChangeRow> struct HistoryRead {
  int64_t head = 0;
  // False when entries after `after` are gone (pruned past it): the caller
  // must list again. `oldest` is then the oldest version one can resume from.
  bool reaches = true;
  int64_t oldest = 0;
  std::vector<HistoryEntry<ChangeRow>>
      entries; // seq > after, ascending, contiguous.
};

using WorkspaceHistoryEntry = HistoryEntry<WorkspaceChangeRow>;
using WorkspaceHistoryRead = HistoryRead<WorkspaceChangeRow>;

// ---- node history (change_log.h): what WatchNodes streams

// One node's change as its transaction committed it. No facts from before
// but the pool: a node stream selects by pool and name, which never change
// for a node (RegisterNode refuses another pool for a registered name).
struct NodeChangeRow {
  std::string id;   // The node's name.
  std::string pool; // Kept also when the change removed it.
  int64_t version = 0;
  bool registered = false; // The change made it (it did not exist before).
  // After the change (its last heartbeat as of the change); nullopt when
  // the change removed it.
  std::optional<StoredNode> after;
};

using NodeHistoryEntry = HistoryEntry<NodeChangeRow>;
using NodeHistoryRead = HistoryRead<NodeChangeRow>;

// Which workspaces a listing or stream selects; empty fields select all.
struct WorkspaceSelection {
  std::string org_id;
  std::string project_id;
  std::string class_id;
  std::string pool;
  std::string node;
  std::vector<std::string> states;  // core::WorkspaceStateName values.
  // A project owner's reach: set = only these orgs' or projects' workspaces.
  std::optional<std::vector<std::string>> scope_orgs;
  std::optional<std::vector<std::string>> scope_projects;
};

// What a transition was decided from: the version the deciding replica saw
// (0: no row). Every write of the group commit lands only on exactly that
// record, so a decision made on a stale picture is refused with ABORTED.
struct DecidedFrom {
  int64_t version = 0;
  bool pending = false;  // The record was pending (a queue placement).
};

// Filtered listing for operators (ListWorkspaces).
struct WorkspaceFilter {
  std::string node;
  std::string pool;
  std::string state;  // "pending", "placed", ...; empty = any.
};

struct WorkspaceWrite {
  enum class Kind {
    kPlace,        // New or restarted record (from.version), placed now.
    kQueuePlace,   // The pending record from.version, placed now.
    kSavePending,  // New or restarted record (from.version), pending.
    kStop,         // Whatever its version (a stop always wins), unless from.version names one.
  };
  Kind kind = Kind::kPlace;
  core::Workspace workspace;  // For kStop only the id.
  // kStop of a placed workspace: the end_reason of its usage record
  // (stopped or idle; core::IsStopReason).
  core::EndReason end_reason = core::EndReason::kStopped;
  DecidedFrom from;
  // What the decision read from the replica's state, confirmed here:
  // unset = not checked; a settings version of 0 = no row.
  std::optional<int64_t> catalog_generation;
  std::optional<int64_t> project_settings_version;
  std::optional<int64_t> org_settings_version;
  // The org's GPU quota is always read here and checked against the holds
  // under a per-org lock, whatever the decision saw.
};

struct WriteOutcome {
  absl::Status status;
  int64_t version = 0;              // The record's version after the write.
  std::optional<WorkspaceRow> row;  // kStop: the record after the stop.
  // A placement: its placed_at, the database's clock (InfinitePast otherwise).
  absl::Time placed_at = absl::InfinitePast();
  // Aborted because what the decision read changed (the workspace, the
  // catalog, class settings), not its node or GPUs: the node was not
  // contended, and later decisions need not keep off it.
  bool basis_changed = false;
};

struct BatchStatements {
  int statements = 0;   // Statements this batch ran (BEGIN/COMMIT not counted).
  int round_trips = 0;  // Waits for PostgreSQL's answers, BEGIN to COMMIT.
};

// Another node's claim on an identity a registration reports
// (FindIdentityClaim, node_repository.h): its name, and what it claims:
// "provider_id" or the GPU UUID.
struct IdentityClaim {
  std::string node;
  std::string what;
};

// ---- scaling (scaling_repository.h)

// Why a pool has its target, as a scaling_signals row names it. The store's
// own enum (the scaling core's ScalingReason is mapped by the caller), so the
// store and its documents build without the scaling library.
enum class SignalReason {
  kPendingWorkspaces,
  kWarmBuffer,
  kIdleTimeout,
  kMinSize,
  kMaxSize,
  kProvisioningFailed,
  kSteady,
};

// A pool's published scaling signal: the row's columns (pool, generation,
// leader) and what its document keeps. The document repeats the pool and
// the generation; a row read back takes both from the columns, which are the
// ones that are queried.
struct SignalRow {
  std::string pool;
  int64_t generation = 0;
  std::string leader;  // store::ReplicaId() of the replica that published it.
  int current_size = 0;
  int target_size = 0;
  std::vector<std::string> nodes_to_remove;
  std::vector<std::string> lost_nodes;
  std::vector<SignalReason> reasons;
  std::string detail;
  std::optional<absl::Time> backoff_until;
  friend bool operator==(const SignalRow&, const SignalRow&) = default;
};

// A MIG re-layout under way, as the scaling leader published it (the
// placement planner's RelayoutOrder; the caller converts).
struct RelayoutRow {
  std::string node;
  std::string pool;
  int gpu_index = -1;
  std::vector<std::pair<std::string, int>> layout;  // (profile, start), by start.
  std::string for_profile;
  absl::Time ordered_at;
  std::string leader;  // store::ReplicaId() of the replica that published it.
  friend bool operator==(const RelayoutRow&, const RelayoutRow&) = default;
};

struct ActuatorReportRow {
  int64_t id = 0;
  std::string pool;
  int64_t generation = 0;
  std::string state;  // creating, running, failed, out_of_resources
  int instances = 0;
  std::string detail;
};

// ---- measured times (timing_repository.h)

// kCloudStart: a scale-up signal -> the actuator's first RUNNING report for
// it; kNodeBoot: that report -> the node registered (migration 0024).
// kFirstReady: a workspace placed -> its first ready report (migration 0025).
enum class TimingKind { kNodeStart, kDriverInstall, kCloudStart, kNodeBoot, kFirstReady };

struct TimingFigure {
  absl::Duration median;
  int samples = 0;
  absl::Duration p90;  // The 90th percentile of the same samples.
};

struct TimingFigures {
  std::map<std::string, TimingFigure> node_start;  // By pool.
  std::map<std::string, TimingFigure> cloud_start;  // By pool.
  std::map<std::string, TimingFigure> node_boot;    // By pool.
  std::map<std::string, TimingFigure> first_ready;  // By pool.
  // By (pool, kernel): the figure the next node's estimate uses. Once a
  // node of the pool installed for the kernel, the driver cache holds the
  // build, so the next install is a hit: the hit median when there is one,
  // else the median of the reports that do not say, else of the misses.
  std::map<std::pair<std::string, std::string>, TimingFigure> driver_install;
  // By (pool, kernel, cache): every figure, for ListPools.
  std::map<std::tuple<std::string, std::string, core::DriverCache>, TimingFigure>
      driver_install_by_cache;
  // By pool: the kernels of its measured installs, the most recent first
  // (a node not started yet installs on the pool's kernel).
  std::map<std::string, std::vector<std::string>> install_kernels;
};

// ---- estimates that are checked (timing_repository.h, migration 0022)

// A queued workspace's given estimate, checked once the queue placed it.
struct CheckedEstimate {
  std::string id;
  std::string pool;
  absl::Duration p90;
  absl::Duration took;  // From the estimate given at queue entry to placed.
};

// A pool's placements checked since some instant.
struct EstimateAccuracy {
  int64_t checked = 0;
  int64_t within_p90 = 0;  // Placed no later than their p90 estimate.
};

}  // namespace wsched::store

#endif  // WSCHED_SERVER_STORE_TYPES_H_
