#include "server/grpc/health_reporter.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "server/log/log.h"

namespace wsched::grpc_api {

HealthReporter::HealthReporter(grpc::HealthCheckServiceInterface* health, HealthProbes probes,
                               HealthReporterOptions options, metrics::Metrics* metrics,
                               Clock clock)
    : health_(health), probes_(std::move(probes)), options_(std::move(options)),
      metrics_(metrics), clock_(std::move(clock)) {}

HealthReporter::~HealthReporter() { Stop(); }

HealthVerdict HealthReporter::Evaluate() const {
  HealthVerdict verdict;
  std::vector<std::string> failed;
  const absl::Time probe_start = clock_();
  absl::StatusOr<int> schema = probes_.schema_version();
  verdict.database_ok = schema.ok();
  if (!schema.ok()) {
    failed.push_back(absl::StrCat("database unreachable: ", schema.status().message()));
  } else {
    verdict.schema_ok = *schema >= options_.required_schema_version;
    if (!verdict.schema_ok) {
      failed.push_back(absl::StrCat("migrations incomplete: the database is at schema version ",
                                    *schema, ", this binary needs ",
                                    options_.required_schema_version));
    }
  }
  // A replica that stopped following (its reads fail, an apply keeps being
  // refused) answers from an ever older state; lag counts from the last
  // catch-up that reached the head, so it grows even when no poll succeeds.
  absl::Duration lag = clock_() - probes_.feed_caught_up_at();
  verdict.feed_ok = lag <= options_.max_feed_lag;
  if (!verdict.feed_ok) {
    failed.push_back(absl::StrCat("change feed behind by ", absl::FormatDuration(lag),
                                  " (--health_max_feed_lag=",
                                  absl::FormatDuration(options_.max_feed_lag), ")"));
  }
  // A call stuck past its bound means the database hangs or is gone for
  // this replica, whatever an earlier probe said: NOT_SERVING until a probe
  // that began after it gets an answer (the next one, when it was a blip).
  const absl::Time abandoned =
      probes_.last_abandoned_call ? probes_.last_abandoned_call() : absl::InfinitePast();
  verdict.calls_ok = verdict.database_ok && abandoned < probe_start;
  if (!verdict.calls_ok && verdict.database_ok) {
    failed.push_back(absl::StrCat("a database call got no answer within its bound ",
                                  absl::FormatDuration(clock_() - abandoned),
                                  " ago (see docs/operations.md, \"Bounded waits\")"));
  }
  const absl::Time writer_failing =
      probes_.writer_failing_since ? probes_.writer_failing_since() : absl::InfiniteFuture();
  verdict.writer_ok = writer_failing == absl::InfiniteFuture();
  if (!verdict.writer_ok) {
    failed.push_back(absl::StrCat("group commit cannot commit for ",
                                  absl::FormatDuration(clock_() - writer_failing)));
  }
  verdict.serving = failed.empty();
  verdict.reason = absl::StrJoin(failed, "; ");
  return verdict;
}

void HealthReporter::Publish(const HealthVerdict& verdict) {
  if (metrics_ != nullptr) {
    metrics_->SetServing(verdict.serving);
    metrics_->SetHealthCheck("database", verdict.database_ok);
    metrics_->SetHealthCheck("schema", verdict.schema_ok);
    metrics_->SetHealthCheck("feed", verdict.feed_ok);
    metrics_->SetHealthCheck("database_calls", verdict.calls_ok);
    metrics_->SetHealthCheck("writer", verdict.writer_ok);
  }
  const bool changed = !published_ || verdict.serving != serving_;
  if (changed) {
    // Watchers hear only changes; setting an unchanged status would be a no-op.
    // The overall "" status goes last: whoever sees it change may rely on every
    // named service having changed with it.
    for (const std::string& service : options_.services) {
      health_->SetServingStatus(service, verdict.serving);
    }
    health_->SetServingStatus("", verdict.serving);
    if (!published_) health_->SetServingStatus(kLivenessService, true);
  }
  if (!verdict.serving && (changed || verdict.reason != reason_)) {
    log::Warning("health: NOT_SERVING", {{"reason", verdict.reason}});
  } else if (verdict.serving && changed && published_) {
    log::Info("health: SERVING again");
  }
  published_ = true;
  serving_ = verdict.serving;
  reason_ = verdict.reason;
}

HealthVerdict HealthReporter::CheckNow() {
  absl::MutexLock lock(&mu_);
  HealthVerdict verdict = Evaluate();
  Publish(verdict);
  return verdict;
}

void HealthReporter::Start() {
  thread_ = std::thread([this] { Run(); });
}

void HealthReporter::Stop() {
  {
    absl::MutexLock lock(&wake_mu_);
    stopping_ = true;
  }
  if (thread_.joinable()) thread_.join();
}

void HealthReporter::Run() {
  while (true) {
    {
      absl::MutexLock lock(&wake_mu_);
      auto stop = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(wake_mu_) { return stopping_; };
      wake_mu_.AwaitWithTimeout(absl::Condition(&stop), options_.interval);
      if (stopping_) return;
    }
    CheckNow();
  }
}

}  // namespace wsched::grpc_api
