// Every Prometheus metric wsched exports, registered in one place so names
// and labels stay consistent (wsched_ prefix, base units, _total counters).
#ifndef WSCHED_SERVER_METRICS_METRICS_H_
#define WSCHED_SERVER_METRICS_METRICS_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace wsched::metrics {

class Metrics {
 public:
  Metrics();
  Metrics(const Metrics&) = delete;
  Metrics& operator=(const Metrics&) = delete;

  std::shared_ptr<prometheus::Registry> registry() const { return registry_; }

  // One finished RPC: method is "/package.Service/Method", code the gRPC code name.
  void ObserveRpc(absl::string_view method, absl::string_view code, absl::Duration latency);

  void CatalogApplied(bool ok, bool from_reload);

  // One PlaceWorkspace answer (or a queued workspace placed later):
  // result is placed, pending, repeated, refused, never, error, placed_from_queue.
  void ObservePlacement(absl::string_view class_id, absl::string_view result,
                        absl::Duration latency);

  // A GPU placement the group commit refused with BUDGET_EXHAUSTED: scope is
  // the limit's, "org" or "project" (docs/billing.md "Spending limits").
  void ObserveBudgetRefusal(absl::string_view scope);

  // A published scaling signal: direction is up, down or steady.
  void ObserveScalingSignal(absl::string_view pool, absl::string_view direction,
                            absl::string_view reasons, int current_size, int target_size);
  // From the oldest pending workspace's arrival to the scale-up signal.
  void ObservePendingToScaleUp(absl::string_view pool, absl::Duration wait);
  // One run of the exec actuator's command (result=ok|failed).
  void ActuatorRun(absl::string_view pool, bool ok);
  // A driver install job's start or end as reported (outcome started,
  // succeeded or failed; cache hit, miss or "" when the job did not say),
  // with the job's run time when its runner measured it.
  void DriverInstallReported(absl::string_view pool, absl::string_view outcome,
                             absl::string_view cache, std::optional<absl::Duration> took);

  // ---- replica synchronisation (the change feed) ----
  // How far this replica is behind the change log after a poll.
  void ObserveFeedLag(int64_t entries, absl::Duration behind);
  // Deltas applied from the feed, by entity (node, workspace, catalog, settings).
  void FeedDeltasApplied(absl::string_view entity, int64_t count);
  // A full reload of the replica's state: reason is start or gap.
  void FeedFullReload(absl::string_view reason);
  // Whether the replica's last read of the database succeeded.
  void SetDatabaseUp(bool up);
  // A heartbeat answered: result is written (the node row changed) or
  // skipped (liveness only, batched).
  void Heartbeat(absl::string_view result);

  // ---- access ----
  // A call refused by the per-principal rate limit, by the role whose
  // limit applied (admin, agent, ...).
  void RateLimited(absl::string_view role);
  // An agent call refused by node identity (docs/security.md), by reason:
  // not_this_node, bootstrap_node_exists, bootstrap_registers_only.
  void NodeIdentityRefused(absl::string_view reason);

  // ---- WatchWorkspaces and WatchNodes (docs/api.md "Following every
  // workspace", "Following every node"), counted together ----
  // A stream began (after its call was admitted) or ended, by why:
  // too_slow, resume_too_old, client_gone, error.
  void WatchStreamStarted();
  void WatchStreamEnded(absl::string_view reason);

  // ---- health (grpc.health.v1) ----
  // What this replica's health service reports (1 SERVING, 0 NOT_SERVING)
  // and each check behind it: check is database, schema or feed.
  void SetServing(bool serving);
  void SetHealthCheck(absl::string_view check, bool ok);

  // ---- placer (docs/architecture.md "One placer, many front doors") ----
  // Whether this replica holds the placement lock (registered on the first
  // call, so replicas without --advertise_host export nothing).
  void SetPlacer(bool self);
  // Whether this replica leads scaling (docs/architecture.md, "Leases").
  void SetScalingLeader(bool leads);
  // A placement or stop forwarded to the placer: method PlaceWorkspace or
  // StopWorkspace; outcome ok, refused (the placer answered with an error)
  // or unreachable.
  void ObserveForward(absl::string_view method, absl::string_view outcome, absl::Duration latency);

  // ---- group commit ----
  // One batch: how many writes, statements, BEGIN-to-COMMIT time, how long
  // its oldest write waited in the queue, and whether it committed.
  void ObserveCommitBatch(int writes, int statements, int round_trips, absl::Duration duration,
                          absl::Duration oldest_wait, bool committed);

  // A pool's driver rollout as the scaling leader last stepped it: nodes
  // by phase (waiting|in_flight|failed) and whether it is paused.
  void DriverRolloutObserved(absl::string_view pool, int waiting, int in_flight, int failed,
                             bool paused);

  // ---- estimates that are checked (docs/placement.md) ----
  // A queued workspace placed: whether it took no longer than the p90
  // estimate it was given when queued.
  void EstimateChecked(absl::string_view pool, bool within_p90);
  // A pool's placements checked over the accuracy window, and the share
  // within their p90 estimate; Forget: none in the window any more.
  void SetEstimateAccuracy(absl::string_view pool, int64_t checked, int64_t within_p90);
  void ForgetEstimateAccuracy(absl::string_view pool);

  // Text exposition of everything (for tests and `wschedctl`).
  std::string Scrape() const;

 private:
  const std::shared_ptr<prometheus::Registry> registry_;
  prometheus::Family<prometheus::Counter>& rpc_requests_;
  prometheus::Family<prometheus::Histogram>& rpc_latency_;
  prometheus::Family<prometheus::Counter>& catalog_applies_;
  prometheus::Family<prometheus::Counter>& placements_;
  prometheus::Family<prometheus::Counter>& budget_refusals_;
  prometheus::Family<prometheus::Histogram>& placement_latency_;
  prometheus::Family<prometheus::Counter>& scaling_signals_;
  prometheus::Family<prometheus::Gauge>& pool_size_;
  prometheus::Family<prometheus::Counter>& actuator_runs_;
  prometheus::Family<prometheus::Counter>& driver_install_reports_;
  prometheus::Family<prometheus::Histogram>& driver_install_duration_;
  prometheus::Family<prometheus::Gauge>& driver_rollout_nodes_;
  prometheus::Family<prometheus::Gauge>& driver_rollout_paused_;
  prometheus::Family<prometheus::Histogram>& pending_to_scale_up_;
  prometheus::Gauge& feed_lag_entries_;
  prometheus::Gauge& feed_lag_seconds_;
  prometheus::Family<prometheus::Counter>& feed_deltas_;
  prometheus::Family<prometheus::Counter>& feed_reloads_;
  prometheus::Gauge& database_up_;
  prometheus::Family<prometheus::Counter>& heartbeats_;
  prometheus::Family<prometheus::Counter>& rate_limited_;
  prometheus::Family<prometheus::Counter>& node_identity_refusals_;
  prometheus::Gauge& watch_streams_;
  prometheus::Family<prometheus::Counter>& watch_streams_ended_;
  prometheus::Gauge& serving_;
  prometheus::Family<prometheus::Gauge>& placer_;
  prometheus::Gauge& scaling_leader_;
  prometheus::Family<prometheus::Gauge>& placer_since_;
  prometheus::Family<prometheus::Counter>& forwards_;
  prometheus::Family<prometheus::Histogram>& forward_latency_;
  prometheus::Family<prometheus::Gauge>& health_checks_;
  prometheus::Histogram& batch_writes_;
  prometheus::Histogram& batch_statements_;
  prometheus::Histogram& batch_round_trips_;
  prometheus::Histogram& batch_duration_;
  prometheus::Histogram& batch_wait_;
  prometheus::Family<prometheus::Counter>& batches_;
  prometheus::Family<prometheus::Counter>& estimate_checks_;
  prometheus::Family<prometheus::Gauge>& estimate_within_p90_ratio_;
  prometheus::Family<prometheus::Gauge>& estimate_window_placements_;
};

}  // namespace wsched::metrics

#endif  // WSCHED_SERVER_METRICS_METRICS_H_
