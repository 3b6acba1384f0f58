// FleetScaler: the scaling leader's decisions for every pool, without the
// leader's I/O. Per pool of the catalog it keeps a PoolScaler and what the
// leader must remember between ticks to show the pool to it: when each node
// was first seen, since when it is empty, and the nodes asked for that have
// not registered yet.
//
// The server's ScalingController (server/scheduler/) feeds it the replica's
// view on every tick and does the I/O around it (actuator reports in,
// signals published and handed to the actuator); the what-if simulator
// (server/simulate/) feeds it a simulated cluster. Both decide with this
// code, so a simulation answers as the server would.
//
// Pure: the caller passes `now` into every call; no clock reads, no threads,
// no locks (the caller's loop owns the instance).
#ifndef WSCHED_SERVER_SCALING_FLEET_SCALER_H_
#define WSCHED_SERVER_SCALING_FLEET_SCALER_H_

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/time/time.h"
#include "server/core/catalog.h"
#include "server/placement/snapshot.h"
#include "server/scaling/pool_observation.h"
#include "server/scaling/pool_scaler.h"

namespace wsched::scaling {

// A pending workspace as demand on pools, in queue order.
struct PendingDemand {
  std::string workspace, class_id, org;
  std::vector<std::string> pools;  // Preferred first.
  absl::Time since;
  // Workspaces this stands for: a caller may pass one entry per class and
  // pools instead of one per workspace (the simulator does; the order of
  // the list does not matter to Observe).
  int64_t count = 1;
};

class FleetScaler {
 public:
  explicit FleetScaler(ScalerOptions options = {});
  FleetScaler(const FleetScaler&) = delete;
  FleetScaler& operator=(const FleetScaler&) = delete;

  // Forgets every pool (a new leader starts from what it sees).
  void Clear() { tracking_.clear(); }

  // Which pools to observe; the server observes every pool on every tick.
  using PoolFilter = std::function<bool(const core::NodePool& pool)>;

  // One observation per pool of `catalog` (those `only` accepts, when
  // given), in catalog order. Pending work counts on its class's pools,
  // preferred first, each taking what it can still hold (RouteDemand). A node
  // seen for the first time takes the request time of the oldest request in
  // flight (its start is measured from there); one already up when first seen
  // has no known request (it is no start sample). A pool left out keeps its
  // timers as they were: skipping it is the same as observing it while nothing
  // of it changes.
  std::vector<PoolObservation> Observe(const core::Catalog& catalog,
                                       const placement::Snapshot& snapshot,
                                       const std::vector<PendingDemand>& pending, absl::Time now,
                                       const PoolFilter& only = nullptr);

  // Pool -> class -> workspaces: where Observe counts the pending demand
  // (demand_pool.h). Public for a caller that observes a pool only when
  // something of it changed (the simulator).
  struct RoutedDemand {
    int64_t count = 0;
    absl::Time waiting_since = absl::InfiniteFuture();  // The longest wait's start.
    bool operator==(const RoutedDemand&) const = default;
  };
  using DemandByPool = std::map<std::string, std::map<std::string, RoutedDemand>>;
  DemandByPool RouteDemand(const core::Catalog& catalog, const placement::Snapshot& snapshot,
                           const std::vector<PendingDemand>& pending, absl::Time now) const;

  // The pool's signal from its PoolScaler. `observation` comes from Observe.
  PoolSignal Evaluate(const PoolObservation& observation, absl::Time now);

  // For a signal that is handed on (published to the actuator): what it asks
  // beyond the live nodes and the requests in flight becomes a request in
  // flight from `now`, so that later ticks do not ask for the same nodes
  // again. Returns how many nodes that is (0: it asks for none).
  int RecordHandedOn(const PoolObservation& observation, const PoolSignal& signal, absl::Time now);

  // Actuator feedback for `pool`; ignored for a pool not evaluated yet. The
  // first RUNNING report of a request in flight (by its signal's
  // generation) dates the cloud's start.
  void OnActuatorEvent(const std::string& pool, const ActuatorEvent& event, absl::Time now);

  // A new node's start in two phases, measured since the last call, for
  // the caller to persist: a request handed on -> its first RUNNING report
  // (cloud start), and that report -> each of its nodes first seen (node
  // boot). A request with no RUNNING report gives neither.
  struct StartPhaseSamples {
    std::vector<absl::Duration> cloud_start, node_boot;
  };
  StartPhaseSamples TakeNewStartPhaseSamples(const std::string& pool);

  // The pool's scaler; nullptr before the pool was first observed.
  PoolScaler* scaler(const std::string& pool);
  const PoolScaler* scaler(const std::string& pool) const;

 private:
  // What is remembered of one node between ticks: one entry, so a tick
  // costs one look-up per node (the leader ticks four times a second over
  // every node: scaling_benchmark).
  struct NodeTimers {
    absl::Time first_seen;
    // Since when the node is empty; InfinitePast while it is busy.
    absl::Time empty_since = absl::InfinitePast();
    // The observation that last saw the node: older entries are of nodes
    // that vanished, and are dropped.
    int64_t seen_in = 0;
  };
  struct PoolTracking {
    std::unique_ptr<PoolScaler> scaler;
    std::vector<ProvisioningRequest> in_flight;
    absl::flat_hash_map<std::string, NodeTimers> nodes;
    int64_t observations = 0;
    StartPhaseSamples new_samples;
  };

  // Fills in the timers of the pool's nodes, forgets vanished ones, and
  // hands the nodes to `obs`.
  void TrackNodes(PoolTracking& t, std::vector<PoolNode> nodes, absl::Time now,
                  PoolObservation& obs);

  const ScalerOptions options_;
  std::map<std::string, PoolTracking> tracking_;
};

}  // namespace wsched::scaling

#endif  // WSCHED_SERVER_SCALING_FLEET_SCALER_H_
