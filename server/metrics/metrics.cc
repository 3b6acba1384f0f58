#include "server/metrics/metrics.h"

#include <prometheus/text_serializer.h>

#include "absl/time/clock.h"

namespace wsched::metrics {
namespace {

// RPC latency buckets in seconds: from 0.25 ms to 10 s.
const prometheus::Histogram::BucketBoundaries& LatencyBuckets() {
  static const auto* buckets = new prometheus::Histogram::BucketBoundaries{
      0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10};
  return *buckets;
}

}  // namespace

Metrics::Metrics()
    : registry_(std::make_shared<prometheus::Registry>()),
      rpc_requests_(prometheus::BuildCounter()
                        .Name("wsched_rpc_requests_total")
                        .Help("Finished RPCs by method and gRPC status code.")
                        .Register(*registry_)),
      rpc_latency_(
          prometheus::BuildHistogram()
              .Name("wsched_rpc_duration_seconds")
              .Help("RPC latency from first message to status, by method.")
              .Register(*registry_)),
      catalog_applies_(
          prometheus::BuildCounter()
              .Name("wsched_catalog_applies_total")
              .Help("Catalog applies by result and source (rpc or reload).")
              .Register(*registry_)),
      placements_(prometheus::BuildCounter()
                      .Name("wsched_placements_total")
                      .Help("Placement answers by class and result.")
                      .Register(*registry_)),
      budget_refusals_(prometheus::BuildCounter()
                           .Name("wsched_budget_refusals_total")
                           .Help("GPU placements refused at a spending limit, by the limit's scope.")
                           .Register(*registry_)),
      placement_latency_(prometheus::BuildHistogram()
                             .Name("wsched_placement_duration_seconds")
                             .Help("Time to answer PlaceWorkspace, by result.")
                             .Register(*registry_)),
      scaling_signals_(
          prometheus::BuildCounter()
              .Name("wsched_scaling_signals_total")
              .Help("Published scaling signals by pool, direction and reasons.")
              .Register(*registry_)),
      pool_size_(prometheus::BuildGauge()
                     .Name("wsched_pool_size_nodes")
                     .Help("Current and target node count by pool "
                           "(kind=current|target).")
                     .Register(*registry_)),
      actuator_runs_(prometheus::BuildCounter()
                         .Name("wsched_actuator_runs_total")
                         .Help("Runs of the exec actuator's command by pool "
                               "and result (ok|failed).")
                         .Register(*registry_)),
      driver_install_reports_(
          prometheus::BuildCounter()
              .Name("wsched_driver_install_reports_total")
              .Help("Driver install jobs' reports by pool, outcome "
                    "(started|succeeded|failed) and "
                    "cache (hit|miss|unknown).")
              .Register(*registry_)),
      driver_install_duration_(
          prometheus::BuildHistogram()
              .Name("wsched_driver_install_duration_seconds")
              .Help("Run time of successful driver install jobs as their "
                    "runner measured it, by "
                    "pool and cache (hit|miss|unknown).")
              .Register(*registry_)),
      driver_rollout_nodes_(
          prometheus::BuildGauge()
              .Name("wsched_driver_rollout_nodes")
              .Help("GPU nodes in their pool's driver rollout by phase: "
                    "waiting (outdated, not "
                    "released), in_flight (released, not ready), failed (of "
                    "in_flight, the last "
                    "install failed). Set by the scaling leader.")
              .Register(*registry_)),
      driver_rollout_paused_(
          prometheus::BuildGauge()
              .Name("wsched_driver_rollout_paused")
              .Help("1 while a pool's driver rollout is paused (by an admin or "
                    "a failed canary). "
                    "Set by the scaling leader.")
              .Register(*registry_)),
      pending_to_scale_up_(
          prometheus::BuildHistogram()
              .Name("wsched_pending_to_scale_up_seconds")
              .Help("From the oldest pending workspace to its scale-up signal.")
              .Register(*registry_)),
      feed_lag_entries_(prometheus::BuildGauge()
                            .Name("wsched_feed_lag_entries")
                            .Help("Change-log entries committed but not yet "
                                  "applied by this replica.")
                            .Register(*registry_)
                            .Add({})),
      feed_lag_seconds_(prometheus::BuildGauge()
                            .Name("wsched_feed_lag_seconds")
                            .Help("Age of the oldest change-log entry this "
                                  "replica had not applied.")
                            .Register(*registry_)
                            .Add({})),
      feed_deltas_(prometheus::BuildCounter()
                       .Name("wsched_feed_deltas_applied_total")
                       .Help("Changes applied from the change feed, by entity.")
                       .Register(*registry_)),
      feed_reloads_(prometheus::BuildCounter()
                        .Name("wsched_feed_full_reloads_total")
                        .Help("Full reloads of the replica's state, by reason "
                              "(start, gap).")
                        .Register(*registry_)),
      database_up_(prometheus::BuildGauge()
                       .Name("wsched_database_up")
                       .Help("1 when this replica's last read of PostgreSQL "
                             "succeeded, else 0.")
                       .Register(*registry_)
                       .Add({})),
      heartbeats_(prometheus::BuildCounter()
                      .Name("wsched_heartbeats_total")
                      .Help("Heartbeats by result: written (node changed) or "
                            "skipped (liveness only).")
                      .Register(*registry_)),
      rate_limited_(prometheus::BuildCounter()
                        .Name("wsched_rate_limited_total")
                        .Help("Calls refused by the per-principal rate limit "
                              "(--rate_limits), by role.")
                        .Register(*registry_)),
      node_identity_refusals_(
          prometheus::BuildCounter()
              .Name("wsched_node_identity_refusals_total")
              .Help("Agent calls refused because the credential does not speak "
                    "for the node "
                    "named, by reason.")
              .Register(*registry_)),
      watch_streams_(prometheus::BuildGauge()
                         .Name("wsched_watch_streams")
                         .Help("WatchWorkspaces and WatchNodes streams open on "
                               "this replica.")
                         .Register(*registry_)
                         .Add({})),
      watch_streams_ended_(prometheus::BuildCounter()
                               .Name("wsched_watch_streams_ended_total")
                               .Help("WatchWorkspaces and WatchNodes streams "
                                     "ended, by reason (too_slow, "
                                     "resume_too_old, client_gone, error).")
                               .Register(*registry_)),
      serving_(
          prometheus::BuildGauge()
              .Name("wsched_health_serving")
              .Help(
                  "1 when this replica's gRPC health reports SERVING, else 0.")
              .Register(*registry_)
              .Add({})),
      placer_(prometheus::BuildGauge()
                  .Name("wsched_placer")
                  .Help("1 while this replica holds the placement lock and "
                        "places for all "
                        "replicas, else 0 (only replicas started with "
                        "--advertise_host).")
                  .Register(*registry_)),
      scaling_leader_(
          prometheus::BuildGauge()
              .Name("wsched_scaling_leader")
              .Help("1 while this replica leads scaling (holds the scaling "
                    "leader "
                    "lock on a session that proves itself alive), else 0.")
              .Register(*registry_)
              .Add({})),
      placer_since_(prometheus::BuildGauge()
                        .Name("wsched_placer_since_timestamp_seconds")
                        .Help("When this replica took the placement lock (Unix "
                              "time); 0 while "
                              "it does not hold it.")
                        .Register(*registry_)),
      forwards_(prometheus::BuildCounter()
                    .Name("wsched_placer_forwards_total")
                    .Help("Placements and stops this replica forwarded to the "
                          "placer, by method "
                          "and outcome (ok, refused, unreachable).")
                    .Register(*registry_)),
      forward_latency_(
          prometheus::BuildHistogram()
              .Name("wsched_placer_forward_seconds")
              .Help(
                  "Time of a forwarded call, from this replica to the placer's "
                  "answer, by method.")
              .Register(*registry_)),
      health_checks_(prometheus::BuildGauge()
                         .Name("wsched_health_check_ok")
                         .Help("Each health check's last outcome "
                               "(check=database|schema|feed): 1 passed.")
                         .Register(*registry_)),
      batch_writes_(
          prometheus::BuildHistogram()
              .Name("wsched_commit_batch_writes")
              .Help("Workspace writes (placements, queue placements, stops) "
                    "per group commit.")
              .Register(*registry_)
              .Add({}, prometheus::Histogram::BucketBoundaries{1, 2, 4, 8, 16,
                                                               32, 64, 128})),
      batch_statements_(
          prometheus::BuildHistogram()
              .Name("wsched_commit_batch_statements")
              .Help("SQL statements per group commit (BEGIN and COMMIT not "
                    "counted).")
              .Register(*registry_)
              .Add({}, prometheus::Histogram::BucketBoundaries{2, 4, 6, 8, 10,
                                                               12, 16, 24})),
      batch_round_trips_(
          prometheus::BuildHistogram()
              .Name("wsched_commit_batch_round_trips")
              .Help("Waits for PostgreSQL's answers per group commit, BEGIN to "
                    "COMMIT.")
              .Register(*registry_)
              .Add({}, prometheus::Histogram::BucketBoundaries{1, 2, 3, 4, 5, 6,
                                                               8})),
      batch_duration_(prometheus::BuildHistogram()
                          .Name("wsched_commit_batch_duration_seconds")
                          .Help("Group commit time from BEGIN to COMMIT.")
                          .Register(*registry_)
                          .Add({}, LatencyBuckets())),
      batch_wait_(prometheus::BuildHistogram()
                      .Name("wsched_commit_queue_wait_seconds")
                      .Help("How long a batch's oldest write waited before the "
                            "batch began.")
                      .Register(*registry_)
                      .Add({}, LatencyBuckets())),
      batches_(prometheus::BuildCounter()
                   .Name("wsched_commit_batches_total")
                   .Help("Group commits by result (committed, failed).")
                   .Register(*registry_)),
      estimate_checks_(prometheus::BuildCounter()
                           .Name("wsched_estimate_checked_total")
                           .Help("Queued workspaces placed by this replica, by pool and whether "
                                 "they took no longer than their p90 estimate (within_p90).")
                           .Register(*registry_)),
      estimate_within_p90_ratio_(
          prometheus::BuildGauge()
              .Name("wsched_estimate_within_p90_ratio")
              .Help("Share of the pool's queued workspaces placed within their p90 estimate, "
                    "over --estimate_accuracy_window, read from the database (every replica "
                    "reports the same).")
              .Register(*registry_)),
      estimate_window_placements_(
          prometheus::BuildGauge()
              .Name("wsched_estimate_window_placements")
              .Help("Queued workspaces placed and checked in the pool over "
                    "--estimate_accuracy_window: how many the ratio is of.")
              .Register(*registry_)) {
  for (const char* entity : {"node", "workspace", "catalog", "settings", "node_credential"}) {
    feed_deltas_.Add({{"entity", entity}});
  }
  for (const char* reason : {"start", "gap"}) feed_reloads_.Add({{"reason", reason}});
  for (const char* result : {"written", "skipped"}) heartbeats_.Add({{"result", result}});
  for (const char* role : {"admin", "control-plane", "project-owner", "agent", "actuator"}) {
    rate_limited_.Add({{"role", role}});
  }
  for (const char* reason : {"too_slow", "resume_too_old", "client_gone", "error"}) {
    watch_streams_ended_.Add({{"reason", reason}});
  }
  for (const char* reason : {"not_this_node", "bootstrap_node_exists", "bootstrap_registers_only"}) {
    node_identity_refusals_.Add({{"reason", reason}});
  }
}

void Metrics::ObserveCommitBatch(int writes, int statements, int round_trips, absl::Duration duration,
                                 absl::Duration oldest_wait, bool committed) {
  batch_writes_.Observe(writes);
  batch_statements_.Observe(statements);
  batch_round_trips_.Observe(round_trips);
  batch_duration_.Observe(absl::ToDoubleSeconds(duration));
  batch_wait_.Observe(absl::ToDoubleSeconds(oldest_wait));
  batches_.Add({{"result", committed ? "committed" : "failed"}}).Increment();
}

void Metrics::ObserveFeedLag(int64_t entries, absl::Duration behind) {
  feed_lag_entries_.Set(static_cast<double>(entries));
  feed_lag_seconds_.Set(absl::ToDoubleSeconds(behind));
}

void Metrics::FeedDeltasApplied(absl::string_view entity, int64_t count) {
  feed_deltas_.Add({{"entity", std::string(entity)}}).Increment(static_cast<double>(count));
}

void Metrics::FeedFullReload(absl::string_view reason) {
  feed_reloads_.Add({{"reason", std::string(reason)}}).Increment();
}

void Metrics::SetDatabaseUp(bool up) { database_up_.Set(up ? 1 : 0); }

void Metrics::SetServing(bool serving) { serving_.Set(serving ? 1 : 0); }

void Metrics::SetPlacer(bool self) {
  prometheus::Gauge& since = placer_since_.Add({});
  prometheus::Gauge& placer = placer_.Add({});
  if (self && placer.Value() == 0) since.Set(absl::ToDoubleSeconds(absl::Now() - absl::UnixEpoch()));
  if (!self) since.Set(0);
  placer.Set(self ? 1 : 0);
}

void Metrics::SetScalingLeader(bool leads) { scaling_leader_.Set(leads ? 1 : 0); }

void Metrics::ObserveForward(absl::string_view method, absl::string_view outcome,
                             absl::Duration latency) {
  std::string m(method);
  forwards_.Add({{"method", m}, {"outcome", std::string(outcome)}}).Increment();
  forward_latency_.Add({{"method", m}}, LatencyBuckets()).Observe(absl::ToDoubleSeconds(latency));
}

void Metrics::SetHealthCheck(absl::string_view check, bool ok) {
  health_checks_.Add({{"check", std::string(check)}}).Set(ok ? 1 : 0);
}

void Metrics::Heartbeat(absl::string_view result) {
  heartbeats_.Add({{"result", std::string(result)}}).Increment();
}

void Metrics::WatchStreamStarted() { watch_streams_.Increment(); }

void Metrics::WatchStreamEnded(absl::string_view reason) {
  watch_streams_.Decrement();
  watch_streams_ended_.Add({{"reason", std::string(reason)}}).Increment();
}

void Metrics::RateLimited(absl::string_view role) {
  rate_limited_.Add({{"role", std::string(role)}}).Increment();
}

void Metrics::NodeIdentityRefused(absl::string_view reason) {
  node_identity_refusals_.Add({{"reason", std::string(reason)}}).Increment();
}

void Metrics::ObserveScalingSignal(absl::string_view pool, absl::string_view direction,
                                   absl::string_view reasons, int current_size, int target_size) {
  std::string p(pool);
  scaling_signals_
      .Add({{"pool", p}, {"direction", std::string(direction)}, {"reasons", std::string(reasons)}})
      .Increment();
  pool_size_.Add({{"pool", p}, {"kind", "current"}}).Set(current_size);
  pool_size_.Add({{"pool", p}, {"kind", "target"}}).Set(target_size);
}

void Metrics::ObservePendingToScaleUp(absl::string_view pool, absl::Duration wait) {
  static const auto* buckets = new prometheus::Histogram::BucketBoundaries{
      0.1, 0.5, 1, 2, 5, 10, 30, 60, 120, 300};
  pending_to_scale_up_.Add({{"pool", std::string(pool)}}, *buckets)
      .Observe(absl::ToDoubleSeconds(wait));
}

void Metrics::ActuatorRun(absl::string_view pool, bool ok) {
  actuator_runs_.Add({{"pool", std::string(pool)}, {"result", ok ? "ok" : "failed"}}).Increment();
}

void Metrics::DriverRolloutObserved(absl::string_view pool, int waiting, int in_flight,
                                    int failed, bool paused) {
  const std::string name(pool);
  driver_rollout_nodes_.Add({{"pool", name}, {"phase", "waiting"}}).Set(waiting);
  driver_rollout_nodes_.Add({{"pool", name}, {"phase", "in_flight"}}).Set(in_flight);
  driver_rollout_nodes_.Add({{"pool", name}, {"phase", "failed"}}).Set(failed);
  driver_rollout_paused_.Add({{"pool", name}}).Set(paused ? 1 : 0);
}

void Metrics::DriverInstallReported(absl::string_view pool, absl::string_view outcome,
                                    absl::string_view cache, std::optional<absl::Duration> took) {
  const std::string cache_label = cache.empty() ? "unknown" : std::string(cache);
  driver_install_reports_
      .Add({{"pool", std::string(pool)}, {"outcome", std::string(outcome)}, {"cache", cache_label}})
      .Increment();
  if (!took || outcome != "succeeded") return;
  // From a cache hit (seconds) to a build from source on a slow node (an hour).
  static const auto* buckets = new prometheus::Histogram::BucketBoundaries{
      5, 15, 30, 60, 120, 300, 600, 1200, 1800, 3600};
  driver_install_duration_.Add({{"pool", std::string(pool)}, {"cache", cache_label}}, *buckets)
      .Observe(absl::ToDoubleSeconds(*took));
}

void Metrics::ObservePlacement(absl::string_view class_id, absl::string_view result,
                               absl::Duration latency) {
  placements_.Add({{"class", std::string(class_id)}, {"result", std::string(result)}}).Increment();
  if (result != "placed_from_queue") {
    placement_latency_.Add({{"result", std::string(result)}}, LatencyBuckets())
        .Observe(absl::ToDoubleSeconds(latency));
  }
}

void Metrics::EstimateChecked(absl::string_view pool, bool within_p90) {
  estimate_checks_.Add({{"pool", std::string(pool)}, {"within_p90", within_p90 ? "true" : "false"}})
      .Increment();
}

void Metrics::SetEstimateAccuracy(absl::string_view pool, int64_t checked, int64_t within_p90) {
  if (checked <= 0) return ForgetEstimateAccuracy(pool);
  const std::string name(pool);
  estimate_window_placements_.Add({{"pool", name}}).Set(static_cast<double>(checked));
  estimate_within_p90_ratio_.Add({{"pool", name}})
      .Set(static_cast<double>(within_p90) / static_cast<double>(checked));
}

void Metrics::ForgetEstimateAccuracy(absl::string_view pool) {
  // No placements: no share to report (an empty series, not a 0 or a NaN
  // that an alert would read).
  const std::string name(pool);
  estimate_window_placements_.Remove(&estimate_window_placements_.Add({{"pool", name}}));
  estimate_within_p90_ratio_.Remove(&estimate_within_p90_ratio_.Add({{"pool", name}}));
}

void Metrics::ObserveBudgetRefusal(absl::string_view scope) {
  budget_refusals_.Add({{"scope", std::string(scope)}}).Increment();
}

void Metrics::ObserveRpc(absl::string_view method, absl::string_view code,
                         absl::Duration latency) {
  std::string m(method);
  rpc_requests_.Add({{"method", m}, {"code", std::string(code)}}).Increment();
  rpc_latency_.Add({{"method", m}}, LatencyBuckets()).Observe(absl::ToDoubleSeconds(latency));
}

void Metrics::CatalogApplied(bool ok, bool from_reload) {
  catalog_applies_
      .Add({{"result", ok ? "ok" : "rejected"}, {"source", from_reload ? "reload" : "rpc"}})
      .Increment();
}

std::string Metrics::Scrape() const {
  prometheus::TextSerializer serializer;
  return serializer.Serialize(registry_->Collect());
}

}  // namespace wsched::metrics
