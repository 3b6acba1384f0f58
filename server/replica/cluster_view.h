// What this replica knows of the cluster at one moment, immutable. Readers
// that only look - the metrics scrape, the scaling controller, node and
// pool listings - take the newest view and walk it without the placement
// lock, so a scrape of a large fleet no longer holds up placements.
//
// A view is copied from the live state only when that state changed since
// the last copy (a generation the scheduler bumps on every change), at most
// once per change however many readers ask, and published by pointer swap:
// a reader keeps the view it got for as long as it needs it.
#ifndef WSCHED_SERVER_REPLICA_CLUSTER_VIEW_H_
#define WSCHED_SERVER_REPLICA_CLUSTER_VIEW_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "server/core/catalog.h"
#include "server/placement/fixes.h"
#include "server/placement/relayout_plan.h"
#include "server/placement/snapshot.h"
#include "server/scaling/fleet_scaler.h"

namespace wsched::replica {

// A pending workspace as demand on pools, in queue order (the scaling
// leader's input, hence defined beside the pure scaling code).
using PendingDemand = scaling::PendingDemand;

// How many workspaces each per-workspace structure tracks: all but
// recently_ended are bounded by the live (pending, placed, lost and still
// holding) workspaces plus decisions in flight.
struct TrackedWorkspaces {
  size_t live = 0;            // Versions of live workspaces (also what watches wait on).
  size_t recently_ended = 0;  // Versions kept for the feed's late entries.
  size_t classes = 0;         // Class of each live workspace (GPU usage by class).
  size_t pending = 0;         // The pending queue.
  size_t holds = 0;           // Snapshot holds, tentative ones included.
  size_t tentative = 0;       // Holds of decisions not committed yet.
};

struct ClusterView {
  uint64_t generation = 0;  // Of the live state it was copied from.
  // Nodes and indexes only (Snapshot::NodesOnly): copying it under the
  // placement lock costs a pointer per node, not a copy of the fleet.
  placement::Snapshot snapshot;
  std::shared_ptr<const core::Catalog> catalog = std::make_shared<const core::Catalog>();
  std::vector<PendingDemand> pending;
  // The MIG re-layouts under way (their GPUs are marked in `snapshot`), for
  // the pending reasons of a read.
  std::vector<placement::RelayoutOrder> relayouts;
  // The placed workspaces marked idle that hold something here, with their
  // holds: what a pending workspace's fixes may offer to stop (few; a copy
  // costs what they are).
  std::vector<placement::IdleWorkspace> idle;
  TrackedWorkspaces tracked;
};

class ClusterViewCache {
 public:
  using Build = absl::FunctionRef<std::shared_ptr<const ClusterView>()>;
  // The newest view: the one published when its generation is `generation`,
  // else what `build` copies now (readers arriving meanwhile wait for that
  // one copy rather than each making their own).
  std::shared_ptr<const ClusterView> Get(uint64_t generation, Build build) ABSL_LOCKS_EXCLUDED(mu_);
  // How many views were copied (for tests and metrics).
  int64_t copies() const ABSL_LOCKS_EXCLUDED(mu_);
  // Names this object's lock in its owner's lock order
  // (ABSL_ACQUIRED_BEFORE/AFTER in scheduler.h); const, so nothing can lock
  // it through this.
  const absl::Mutex& mutex() const ABSL_LOCK_RETURNED(mu_) { return mu_; }

 private:
  mutable absl::Mutex mu_;
  std::shared_ptr<const ClusterView> current_ ABSL_GUARDED_BY(mu_);
  int64_t copies_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace wsched::replica

#endif  // WSCHED_SERVER_REPLICA_CLUSTER_VIEW_H_
