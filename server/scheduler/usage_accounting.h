// GPU usage as the agents report it: the latest samples per node (for the
// per-GPU gauges) and GPU time held and busy per class (GPU-hours). Its own
// lock and clock; what holds each GPU is told by the caller at each sample,
// so this needs no view of the snapshot.
#ifndef WSCHED_SERVER_SCHEDULER_USAGE_ACCOUNTING_H_
#define WSCHED_SERVER_SCHEDULER_USAGE_ACCOUNTING_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace wsched::scheduler {

struct GpuUsage {
  std::string uuid;
  int utilization_percent = 0;
  int64_t memory_used_bytes = 0;
};

class UsageAccounting {
 public:
  using Clock = std::function<absl::Time()>;
  explicit UsageAccounting(Clock clock) : clock_(std::move(clock)) {}
  UsageAccounting(const UsageAccounting&) = delete;
  UsageAccounting& operator=(const UsageAccounting&) = delete;

  // One heartbeat's samples from `node`. `holder_classes` has, for each GPU
  // of the node held now (by UUID), its holder's class. The time since the
  // node's previous sample is charged to those classes as held, and as busy
  // in proportion to the previous sample's utilization.
  void Record(const std::string& node, std::vector<GpuUsage> samples,
              const absl::flat_hash_map<std::string, std::string>& holder_classes);
  // The node is gone (removed): its samples go with it.
  void ForgetNode(const std::string& node);
  // Nodes with samples kept.
  size_t node_count() const;
  // The latest samples of every node that sent any.
  absl::flat_hash_map<std::string, std::vector<GpuUsage>> Latest() const;
  // Class -> (GPU seconds held, GPU seconds busy), since start.
  std::map<std::string, std::pair<double, double>> SecondsByClass() const;

 private:
  struct NodeSamples {
    std::vector<GpuUsage> samples;
    absl::Time at;
  };
  const Clock clock_;
  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, NodeSamples> nodes_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::pair<double, double>> seconds_ ABSL_GUARDED_BY(mu_);
};

}  // namespace wsched::scheduler

#endif  // WSCHED_SERVER_SCHEDULER_USAGE_ACCOUNTING_H_
