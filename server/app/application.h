// What the transport serves, wired over one database: the replica's
// scheduler and scaling controller, and the application rules for classes,
// settings, usage and audit. Built by the composition root (server.cc)
// before the gRPC services, which only call into it; stopped before them.
#ifndef WSCHED_SERVER_APP_APPLICATION_H_
#define WSCHED_SERVER_APP_APPLICATION_H_

#include <memory>
#include <string>

#include <prometheus/collectable.h>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "server/app/audit_operations.h"
#include "server/app/class_operations.h"
#include "server/app/settings_operations.h"
#include "server/app/usage_operations.h"
#include "server/catalog/diagnostics.h"
#include "server/metrics/metrics.h"
#include "server/scheduler/scaling_controller.h"
#include "server/scheduler/scheduler.h"
#include "server/store/database.h"

namespace wsched::app {

struct ApplicationOptions {
  std::string catalog_path;  // Applied at Create and by ReloadCatalog; empty: none.
  catalog::ValidationOptions catalog_rules;  // --min_idle_for.
  scheduler::SchedulerOptions scheduler;
  scheduler::ScalingControllerOptions scaling;
};

class Application {
 public:
  // Applies the catalog file first when one is given (a bad file keeps the
  // server from starting), then rebuilds the replica's state (nodes, holds,
  // pending work) from the database and starts its loops.
  static absl::StatusOr<std::unique_ptr<Application>> Create(store::Database* db,
                                                             metrics::Metrics* metrics,
                                                             ApplicationOptions options);
  ~Application();
  Application(const Application&) = delete;
  Application& operator=(const Application&) = delete;

  scheduler::Scheduler& scheduler() { return *scheduler_; }
  scheduler::ScalingController& scaling() { return *controller_; }
  ClassOperations& classes() { return classes_; }
  SettingsOperations& settings() { return settings_; }
  UsageOperations& usage() { return usage_; }
  AuditOperations& audit() { return audit_; }

  // Re-applies the catalog file (SIGHUP); a bad file changes nothing.
  absl::Status ReloadCatalog();
  // Cluster gauges computed at scrape time (register with the exposer).
  std::shared_ptr<prometheus::Collectable> cluster_metrics() const { return cluster_metrics_; }
  // Stops the loops: scaling leadership is released at once for another
  // replica, then the scheduler's background work and watch streams end.
  void Stop();

 private:
  Application(store::Database* db, metrics::Metrics* metrics, ApplicationOptions options);

  store::Database* const db_;
  metrics::Metrics* const metrics_;
  const ApplicationOptions options_;
  std::unique_ptr<scheduler::Scheduler> scheduler_;
  std::unique_ptr<scheduler::ScalingController> controller_;
  ClassOperations classes_;
  SettingsOperations settings_;
  UsageOperations usage_;
  AuditOperations audit_;
  std::shared_ptr<prometheus::Collectable> cluster_metrics_;
};

}  // namespace wsched::app

#endif  // WSCHED_SERVER_APP_APPLICATION_H_
