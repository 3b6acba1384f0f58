// Whether this replica leads scaling. The leader lock (store/leader_lock.h)
// is a lease; this probes it on its own thread, every interval, so that
// losing it is told (the log line, wsched_scaling_leader) when the lease
// ends. Probing from the scaling loop, as before, told it only when the
// loop came round again, and a leader's tick can wait on the database for
// a whole statement bound (5 s) while a promoted standby already has a new
// leader (docs/architecture.md, "Leases").
#ifndef WSCHED_SERVER_SCHEDULER_SCALING_ELECTION_H_
#define WSCHED_SERVER_SCHEDULER_SCALING_ELECTION_H_

#include <cstdint>
#include <optional>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "server/metrics/metrics.h"
#include "server/store/leader_lock.h"

namespace wsched::scheduler {

class ScalingElection {
 public:
  // `interval`: how often the lock is probed (the scaling tick).
  ScalingElection(std::string database_url, int64_t key, absl::Duration interval,
                  store::LeaseOptions lease, metrics::Metrics* metrics);
  ~ScalingElection();
  ScalingElection(const ScalingElection&) = delete;
  ScalingElection& operator=(const ScalingElection&) = delete;

  // Probes once (so the first tick already knows), then every interval.
  void Start();
  // Stops probing and releases the lock at once for another replica.
  void Stop();
  // The term this replica leads in now, nullopt when it does not: only
  // while the lease runs and after the acquisition was told. A new term
  // begins at each acquisition, so a caller that sees another term than
  // before knows it lost the lead in between and must reload its state.
  std::optional<int64_t> LeaderTerm() const;

 private:
  void Run();
  void ProbeOnce();
  // Tells a change of `leads` (log line, gauge); a new term on acquiring.
  void Announce(bool leads, const char* lost_message);

  const absl::Duration interval_;
  metrics::Metrics* const metrics_;
  // Only the probing thread (or Start, before it begins) probes it;
  // Holds() from any thread.
  store::LeaderLock lock_;

  mutable absl::Mutex mu_;
  bool announced_ ABSL_GUARDED_BY(mu_) = false;
  int64_t term_ ABSL_GUARDED_BY(mu_) = 0;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace wsched::scheduler

#endif  // WSCHED_SERVER_SCHEDULER_SCALING_ELECTION_H_
