#include "server/simulate/pool_ledger.h"

#include <algorithm>
#include <cmath>

#include "server/core/mig.h"
#include "server/core/mig_profiles.h"

namespace wsched::simulate {
namespace {

// Nearest rank: the smallest wait at least `share` of the waits reach.
absl::Duration Percentile(const std::vector<absl::Duration>& sorted, double share) {
  if (sorted.empty()) return absl::ZeroDuration();
  size_t rank = static_cast<size_t>(std::ceil(share * static_cast<double>(sorted.size())));
  return sorted[std::clamp<size_t>(rank, 1, sorted.size()) - 1];
}

}  // namespace

PoolLedger::PoolLedger(const core::NodePool& pool, const PoolTimings& timings)
    : gpu_(pool.is_gpu()),
      mig_(gpu_ && pool.mig.kind != core::MigLayoutKind::kWhole),
      unit_per_node_(mig_    ? pool.shape.gpus_per_node * core::kMigComputeSlices
                     : gpu_ ? pool.shape.gpus_per_node
                            : pool.shape.cpu_millis) {
  result_.pool = pool.id;
  result_.gpu = gpu_;
  result_.mig = mig_;
  result_.unit_per_node = unit_per_node_;
  result_.timings = timings;
}

int64_t PoolLedger::UnitsOf(const core::WorkspaceClass& cls) const {
  if (mig_) return core::LeastGpuSevenths(cls);
  return gpu_ ? cls.gpu.count : cls.resources.cpu_request_millis;
}

void PoolLedger::Account(absl::Time now) {
  double seconds = absl::ToDoubleSeconds(now - accounted_at_);
  if (seconds > 0) {
    node_seconds_ += seconds * (booting_ + registered_);
    used_unit_seconds_ += seconds * static_cast<double>(used_units_);
    if (pending_units_ > 0) {
      const int64_t free = std::max<int64_t>(0, registered_ * unit_per_node_ - used_units_);
      stranded_unit_seconds_ += seconds * static_cast<double>(free);
    }
  }
  accounted_at_ = now;
}

void PoolLedger::RecordStep(absl::Time now) {
  const simulate::Step step{now, booting_ + registered_, target_, used_units_ + pending_units_};
  std::vector<simulate::Step>& steps = result_.steps;
  if (!steps.empty() && steps.back().nodes == step.nodes && steps.back().target == step.target &&
      steps.back().demand == step.demand) {
    return;
  }
  if (!steps.empty() && steps.back().at == now) {
    steps.back() = step;
  } else {
    steps.push_back(step);
  }
}

void PoolLedger::NodeAsked(absl::Time now) {
  Account(now);
  ++booting_;
  ++result_.nodes_started;
  RecordStep(now);
}

void PoolLedger::NodeWarm(absl::Time now) {
  Account(now);
  ++registered_;
  RecordStep(now);
}

void PoolLedger::NodeUp(absl::Time now) {
  Account(now);
  --booting_;
  ++registered_;
  RecordStep(now);
}

void PoolLedger::NodeGone(absl::Time now) {
  Account(now);
  --registered_;
  RecordStep(now);
}

void PoolLedger::Held(absl::Time now, int64_t units) {
  Account(now);
  used_units_ += units;
  RecordStep(now);
}

void PoolLedger::Waiting(absl::Time now, int64_t units) {
  Account(now);
  pending_units_ += units;
  RecordStep(now);
}

void PoolLedger::Target(absl::Time now, int target) {
  if (result_.targets.empty() || result_.targets.back().target != target) {
    result_.targets.push_back({now, target});
  }
  target_ = target;
  RecordStep(now);
}

PoolResult PoolLedger::Finish(absl::Time end, absl::Duration long_wait) {
  Account(end);
  RecordStep(end);
  PoolResult r = result_;
  r.node_hours = node_seconds_ / 3600;
  const double paid_unit_hours = r.node_hours * static_cast<double>(r.unit_per_node);
  const double used_unit_hours = used_unit_seconds_ / 3600;
  if (gpu_) {
    const double per_gpu = mig_ ? core::kMigComputeSlices : 1;
    r.gpu_hours_paid = paid_unit_hours / per_gpu;
    r.gpu_hours_used = used_unit_hours / per_gpu;
    r.gpu_hours_stranded = stranded_unit_seconds_ / 3600 / per_gpu;
  }
  r.idle_share = paid_unit_hours > 0 ? std::max(0.0, 1 - used_unit_hours / paid_unit_hours) : 0;
  std::vector<absl::Duration> waits = waits_;
  std::sort(waits.begin(), waits.end());
  r.workspaces = static_cast<int64_t>(waits.size()) + r.never_placed;
  r.wait_p50 = Percentile(waits, 0.50);
  r.wait_p95 = Percentile(waits, 0.95);
  r.wait_max = waits.empty() ? absl::ZeroDuration() : waits.back();
  r.waited_long = std::count_if(waits.begin(), waits.end(),
                                [&](absl::Duration d) { return d > long_wait; });
  return r;
}

}  // namespace wsched::simulate
