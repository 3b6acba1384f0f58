// GPU usage as the agents report it: the latest sample of every GPU, summed
// by pool and holder class at scrape time, and GPU time held and busy per
// pool and class (GPU-hours). Its own lock and clock; what holds each GPU
// is told by the caller at each sample, so this needs no view of the
// snapshot. Nothing exported is per workspace: a workspace label on a
// series per GPU was one new series per placement, exported by every
// replica.
//
// Held time is charged per placement, from when it was placed (not from
// the node's sample before) to when it ended (not to its last sample), so
// what one replica charges a placement is the usage ledger's figure for it
// (docs/billing.md, "The ledger and the metric"): between samples the
// intervals add up to exactly placed_at .. the end this replica saw.
#ifndef WSCHED_SERVER_USAGE_USAGE_ACCOUNTING_H_
#define WSCHED_SERVER_USAGE_USAGE_ACCOUNTING_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/node_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace wsched::usage {

struct GpuUsage {
  std::string uuid;
  int utilization_percent = 0;
  int64_t memory_used_bytes = 0;
};

// What holds one GPU, as the replica's mirror says.
struct GpuHolder {
  std::string workspace;
  std::string class_id;
  int64_t version = 0;  // Of the workspace's record.
  // When the placement began (placed_at, the database's clock); unknown:
  // charged from the node's previous sample.
  absl::Time placed_at = absl::InfinitePast();
};
// By GPU UUID; only held GPUs are present.
using GpuHolders = absl::flat_hash_map<std::string, GpuHolder>;

// A pool and the class of the GPUs' holder ("" for GPUs nobody holds).
using PoolClass = std::pair<std::string, std::string>;

class UsageAccounting {
 public:
  using Clock = std::function<absl::Time()>;
  // One heartbeat as it was recorded, for whoever judges the samples
  // further (the idle-GPU policy); called after the lock, at most once per
  // heartbeat, never with the scheduler's lock held.
  struct Report {
    const std::string& node;
    const std::string& pool;
    const std::vector<GpuUsage>& samples;
    const GpuHolders& holders;
    absl::Time at;
  };
  using Observer = std::function<void(const Report&)>;

  explicit UsageAccounting(Clock clock) : clock_(std::move(clock)) {}
  UsageAccounting(const UsageAccounting&) = delete;
  UsageAccounting& operator=(const UsageAccounting&) = delete;

  // Set once before heartbeats arrive.
  void SetObserver(Observer observer) { observer_ = std::move(observer); }

  // One heartbeat's samples from `node` of `pool`. The time since the
  // node's previous sample, or since the holder was placed when that is
  // later, is charged to the classes of the GPUs' holders now, as held, and
  // as busy in proportion to the previous sample's utilization. The first
  // sample of a node starts its clock: nothing before it is charged here.
  void Record(const std::string& node, const std::string& pool, std::vector<GpuUsage> samples,
              const GpuHolders& holders);
  // The placement of `workspace` placed at `placed_at` ended at `ended_at`
  // (it stopped, or its node was lost or removed): the time since it was
  // last charged goes to its class, with the utilization of its last
  // sample. Nothing when this replica never charged it (another replica
  // receives its node's heartbeats). Later samples that still name it as
  // a holder are not charged.
  void EndPlacement(const std::string& workspace, absl::Time placed_at, absl::Time ended_at);
  // The node is gone (removed): its samples go with it.
  void ForgetNode(const std::string& node);
  // Nodes with samples kept.
  size_t node_count() const;

  struct Utilization {
    int gpus = 0;                 // GPUs whose latest sample is summed here.
    double ratio_sum = 0;         // Of their utilisation, 0..1 each.
    int64_t memory_used_bytes = 0;
  };
  // The latest sample of every GPU, summed by pool and by the class of its
  // holder when it was taken.
  std::map<PoolClass, Utilization> LatestByPoolClass() const;
  struct Seconds {
    double held = 0;
    double busy = 0;
  };
  // GPU seconds held and busy by pool and class, since start.
  std::map<PoolClass, Seconds> SecondsByPoolClass() const;
  // Names this object's lock in its owner's lock order
  // (ABSL_ACQUIRED_BEFORE/AFTER in scheduler.h); const, so nothing can lock
  // it through this.
  const absl::Mutex& mutex() const ABSL_LOCK_RETURNED(mu_) { return mu_; }

 private:
  struct NodeSamples {
    std::string pool;
    std::vector<GpuUsage> samples;
    std::vector<std::string> classes;  // Parallel to samples: the holder's, or "".
    absl::Time at;
  };
  // A placement this replica charges, charged up to `until`.
  struct Charging {
    absl::Time placed_at;
    PoolClass pool_class;
    std::string node;
    std::vector<std::string> gpus;  // UUIDs, noted when first seen.
    absl::Time until;
  };
  // Charges the holders of one sample of `node` at `now` (its previous
  // sample at `previous`, InfinitePast for a node's first).
  void ChargeHoldersLocked(const std::string& node, const std::string& pool,
                           const std::vector<GpuUsage>& previous_samples, absl::Time previous,
                           const GpuHolders& holders, absl::Time now)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Forgets placements not charged or ended within the last hour (their
  // node went quiet for good, their end came while the feed was reloaded).
  void PruneLocked(absl::Time now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const Clock clock_;
  Observer observer_;
  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, NodeSamples> nodes_ ABSL_GUARDED_BY(mu_);
  std::map<PoolClass, Seconds> seconds_ ABSL_GUARDED_BY(mu_);
  // By workspace; nodes stay put, so a sample keeps pointers into it.
  absl::node_hash_map<std::string, Charging> charging_ ABSL_GUARDED_BY(mu_);
  // Recently ended placements (workspace -> placed_at, ended_at), so a
  // sample that still names one is not charged again.
  absl::flat_hash_map<std::string, std::pair<absl::Time, absl::Time>> ended_ ABSL_GUARDED_BY(mu_);
  absl::Time pruned_at_ ABSL_GUARDED_BY(mu_);
};

}  // namespace wsched::usage

#endif  // WSCHED_SERVER_USAGE_USAGE_ACCOUNTING_H_
