// Which replica places (docs/architecture.md "One placer, many front
// doors"). Every replica started with --advertise_host polls the placement
// lock (store/placer_lock.h): the one that holds it decides and commits
// placements and stops; the others learn its address and forward those
// calls to it (placement_forwarder.h).
#ifndef WSCHED_SERVER_APP_PLACER_ELECTION_H_
#define WSCHED_SERVER_APP_PLACER_ELECTION_H_

#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "server/metrics/metrics.h"
#include "server/store/placer_lock.h"

namespace wsched::app {

struct PlacerView {
  bool self = false;     // This replica holds the placement lock.
  std::string address;   // Where the placer is reached; empty: nobody known.
  std::string replica;
};

struct PlacerElectionOptions {
  // How often the lock is polled: the longest a dead placer stays placer
  // (its session ends with it, so the next poll of a survivor wins).
  absl::Duration interval = absl::Milliseconds(200);
  // The placement lock's lease (store/lock_lease.h): a placer whose polls
  // stop proving its session stops placing within lease / 2.
  store::LeaseOptions lease;
};

class PlacerElection {
 public:
  PlacerElection(std::string database_url, PlacerElectionOptions options,
                 metrics::Metrics* metrics);
  ~PlacerElection();
  PlacerElection(const PlacerElection&) = delete;
  PlacerElection& operator=(const PlacerElection&) = delete;

  // Takes part under `address` (this replica's host:port as its peers
  // reach it). Polls once before returning, so the first calls already
  // know the placer.
  void Start(std::string address);
  // Stops polling and releases the lock at once for another replica.
  void Stop();
  // Says `self` only while the lock's lease runs (not merely because the
  // last poll found it held: that poll may be long ago).
  PlacerView Current() const;
  // A forward could not reach the placer: poll now, not at the next interval.
  void Recheck();
  // This replica's id (store::ReplicaId()), as forwards name their sender.
  static const std::string& Self();

 private:
  void Run();
  void PollOnce();
  void Publish(PlacerView view);

  const PlacerElectionOptions options_;
  std::string address_;  // Set by Start, before the thread begins.
  metrics::Metrics* const metrics_;
  // Only the polling thread (or Start) polls it; Holds() from any thread.
  store::PlacerLock lock_;

  mutable absl::Mutex mu_;
  PlacerView view_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  bool recheck_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace wsched::app

#endif  // WSCHED_SERVER_APP_PLACER_ELECTION_H_
