#include "server/pipeline/estimate_checks.h"

#include <map>

#include "server/log/log.h"
#include "server/placement/time_to_gpu.h"

namespace wsched::pipeline {

void EstimateChecks::Given(const std::string& id, absl::Time at, absl::Duration p50,
                           absl::Duration p90) {
  absl::Status saved = store_->RecordGivenEstimate(id, at, p50, p90);
  // An estimate, not a decision: a lost record is logged, not retried.
  if (!saved.ok()) {
    log::Warning("given estimate not recorded",
                 {{"workspace", id}, {"error", std::string(saved.message())}});
  }
}

void EstimateChecks::Placed(const std::vector<std::string>& ids) {
  if (ids.empty()) return;
  absl::StatusOr<std::vector<store::CheckedEstimate>> checked =
      store_->CheckEstimates(ids, clock_());
  if (!checked.ok()) {
    log::Warning("estimates not checked", {{"error", std::string(checked.status().message())}});
    return;
  }
  for (const store::CheckedEstimate& check : *checked) {
    metrics_->EstimateChecked(check.pool, placement::WithinEstimate(check.took, check.p90));
  }
  // The placer's share moves at once; the others' at their next report.
  if (!checked->empty()) Report();
}

void EstimateChecks::Report() {
  absl::StatusOr<std::map<std::string, store::EstimateAccuracy>> by_pool =
      store_->LoadEstimateAccuracy(clock_() - window_, placement::kEstimateGrace);
  if (!by_pool.ok()) return;  // The last shares stay; the next report tries again.
  absl::MutexLock lock(&mu_);
  for (const std::string& pool : reported_) {
    if (!by_pool->contains(pool)) metrics_->ForgetEstimateAccuracy(pool);
  }
  reported_.clear();
  for (const auto& [pool, accuracy] : *by_pool) {
    metrics_->SetEstimateAccuracy(pool, accuracy.checked, accuracy.within_p90);
    reported_.insert(pool);
  }
}

}  // namespace wsched::pipeline
