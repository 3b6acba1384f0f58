// Keeps grpc.health.v1 truthful: every few seconds (its own thread, never
// per RPC) it asks whether this replica can do its work — the database
// answers (within the probe bound), its schema is complete, this replica
// follows the change feed, none of its own database calls got stuck past
// its bound since the database last answered, its group-commit writer can
// commit —
// and sets "" and every wsched.v1 service name SERVING or NOT_SERVING
// accordingly. A failed check clears by itself once the next check passes.
// "liveness" stays SERVING while the process serves gRPC (for a kubelet's
// liveness probe, which must not restart replicas during a database outage).
// docs/api.md "Health" describes what each answer means.
#ifndef WSCHED_SERVER_GRPC_HEALTH_REPORTER_H_
#define WSCHED_SERVER_GRPC_HEALTH_REPORTER_H_

#include <functional>
#include <string>
#include <thread>
#include <vector>

#include <grpcpp/health_check_service_interface.h>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "server/metrics/metrics.h"

namespace wsched::grpc_api {

// The health service name that only says the process serves gRPC.
inline constexpr char kLivenessService[] = "liveness";

// What the checks read; replaced by fakes in unit tests.
struct HealthProbes {
  // The database's schema version (one round trip); an error when the
  // database cannot be reached or cannot answer.
  std::function<absl::StatusOr<int>()> schema_version;
  // When this replica last had every committed change applied.
  std::function<absl::Time()> feed_caught_up_at;
  // When a database call of this replica's was last abandoned past its
  // bound (store/call_watchdog.h); InfinitePast: never. Unset: no check.
  std::function<absl::Time()> last_abandoned_call;
  // Since when the group-commit writer cannot commit; InfiniteFuture while
  // it can. Unset: no check.
  std::function<absl::Time()> writer_failing_since;
};

struct HealthReporterOptions {
  // Service names reported besides "" (the wsched.v1 services).
  std::vector<std::string> services;
  // The schema a complete migration reaches (this binary's newest).
  int required_schema_version = 0;
  // NOT_SERVING once the feed has not been caught up for longer.
  absl::Duration max_feed_lag = absl::Seconds(30);
  absl::Duration interval = absl::Seconds(1);
};

// One check's outcome: serving, or why not ("" when serving).
struct HealthVerdict {
  bool serving = false;
  bool database_ok = false;
  bool schema_ok = false;
  bool feed_ok = false;
  // No call abandoned since the last probe that answered began.
  bool calls_ok = false;
  bool writer_ok = false;
  std::string reason;
};

class HealthReporter {
 public:
  using Clock = std::function<absl::Time()>;

  // `health` and `metrics` (may be null) outlive the reporter.
  HealthReporter(grpc::HealthCheckServiceInterface* health, HealthProbes probes,
                 HealthReporterOptions options, metrics::Metrics* metrics, Clock clock);
  ~HealthReporter();  // Stops the thread.
  HealthReporter(const HealthReporter&) = delete;
  HealthReporter& operator=(const HealthReporter&) = delete;

  // Runs the probes once and publishes the verdict.
  HealthVerdict CheckNow() ABSL_LOCKS_EXCLUDED(mu_);
  // Checks every options.interval on a thread of its own.
  void Start();
  void Stop() ABSL_LOCKS_EXCLUDED(wake_mu_);

 private:
  HealthVerdict Evaluate() const;
  void Publish(const HealthVerdict& verdict) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Run() ABSL_LOCKS_EXCLUDED(wake_mu_);

  grpc::HealthCheckServiceInterface* const health_;
  const HealthProbes probes_;
  const HealthReporterOptions options_;
  metrics::Metrics* const metrics_;
  const Clock clock_;

  absl::Mutex mu_;  // One check at a time (the thread and CheckNow callers).
  bool published_ ABSL_GUARDED_BY(mu_) = false;
  bool serving_ ABSL_GUARDED_BY(mu_) = false;
  std::string reason_ ABSL_GUARDED_BY(mu_);

  absl::Mutex wake_mu_;
  bool stopping_ ABSL_GUARDED_BY(wake_mu_) = false;
  std::thread thread_;
};

}  // namespace wsched::grpc_api

#endif  // WSCHED_SERVER_GRPC_HEALTH_REPORTER_H_
