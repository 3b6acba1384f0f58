// Gauges computed from the scheduler's state at scrape time, so they are
// always current and never leave stale label sets behind: nodes by pool and
// state, GPUs total/held/unhealthy, driver-not-ready nodes, pending work and
// its oldest age, GPU utilisation and memory by pool and holder class, GPU
// seconds held and busy by pool and class, idle GPUs and idle stops (no
// per-workspace or per-GPU series); workspaces tracked in memory.
#ifndef WSCHED_SERVER_SCHEDULER_CLUSTER_METRICS_H_
#define WSCHED_SERVER_SCHEDULER_CLUSTER_METRICS_H_

#include <vector>

#include <prometheus/collectable.h>

#include "server/scheduler/scheduler.h"

namespace wsched::scheduler {

class ClusterMetrics : public prometheus::Collectable {
 public:
  explicit ClusterMetrics(const Scheduler* scheduler) : scheduler_(scheduler) {}
  std::vector<prometheus::MetricFamily> Collect() const override;

 private:
  const Scheduler* const scheduler_;
};

}  // namespace wsched::scheduler

#endif  // WSCHED_SERVER_SCHEDULER_CLUSTER_METRICS_H_
