// The `cluster` face of driver installs (docs/operations.md "Driver
// installs"): the scaling leader runs the admin's command once per node of
// a `driver_install: cluster` pool that needs its driver (e.g.
// deploy/actuators/driver-install-kubernetes-job.sh, a Kubernetes Job
// pinned to the node), under the installer contract, and records each run's
// start and end as the node's agent would (installing, then verified or
// install_failed with the log tail and the cache hit or miss). The truth is
// still the node: it is ready only once its agent reports the policy's
// driver loaded for its running kernel.
//
// The runs, their one-per-node rule and their backoff belong to the
// scaling::DriverInstallExec it owns. Its own lock guards only the jobs
// that succeeded, which are not offered again while their node waits for
// its agent to report the driver loaded (a new leader runs such a job once
// more: the command must be idempotent).
#ifndef WSCHED_SERVER_SCHEDULER_CLUSTER_DRIVER_INSTALLS_H_
#define WSCHED_SERVER_SCHEDULER_CLUSTER_DRIVER_INSTALLS_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "server/core/clock.h"
#include "server/scaling/driver_install_exec.h"
#include "server/inventory/node_inventory.h"

namespace wsched::scheduler {

struct ClusterDriverInstallOptions {
  // argv of the admin's command; empty: `cluster` pools are handled as
  // `manual` (an operator runs the installs).
  std::vector<std::string> command;
  absl::Duration timeout = absl::Minutes(30);
  // WSCHED_DRIVER_CACHE for the command: the pool's cache directory on the
  // nodes, or an object-store URL.
  std::string driver_cache = "/var/cache/wsched/driver";
};

class ClusterDriverInstalls {
 public:
  // Null without a command.
  static absl::StatusOr<std::unique_ptr<ClusterDriverInstalls>> Create(
      inventory::NodeInventory* inventory, ClusterDriverInstallOptions options, core::Clock clock);
  ~ClusterDriverInstalls();

  // Offers every node of a `cluster` pool whose install may start now
  // (NodeInventory::ListDriverWork) to the runner; nodes it runs already
  // or holds back after a failure are skipped there. Called by the leader.
  absl::Status Step();
  // Stops running commands (their nodes stay `installing`; the next leader
  // runs them again: the command must be idempotent).
  void Stop();

  scaling::DriverInstallExecStats stats() const { return exec_->stats(); }
  bool WaitUntilIdle(absl::Duration timeout) { return exec_->WaitUntilIdle(timeout); }

 private:
  explicit ClusterDriverInstalls(inventory::NodeInventory* inventory);
  void Record(const scaling::DriverInstallJob& job, inventory::DriverInstallReport report);

  inventory::NodeInventory* const inventory_;
  std::unique_ptr<scaling::DriverInstallExec> exec_;
  absl::Mutex mu_;
  // By node: its last job that succeeded.
  absl::flat_hash_map<std::string, scaling::DriverInstallJob> succeeded_ ABSL_GUARDED_BY(mu_);
};

}  // namespace wsched::scheduler

#endif  // WSCHED_SERVER_SCHEDULER_CLUSTER_DRIVER_INSTALLS_H_
