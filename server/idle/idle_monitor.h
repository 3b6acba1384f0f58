// The idle-GPU policy on one replica (docs/catalog.md "Idle GPUs").
//
// Samples stay where they arrive: the replica that receives a node's
// heartbeats judges that node's GPUs (core::IdleTracker) and nobody else
// sees them. What it finds goes to the database, on the workspace's
// record, so that every replica's watchers see it and the mark outlives
// this replica (a restarted one starts its clocks again: a stop comes
// later, never earlier):
//
// - idle (class action notify: after `for`; stop: `warn_before` ahead of
//   the stop) -> the record is marked idle, with idle_since and stops_at;
// - a GPU used again (or no longer reported) -> the mark is cleared;
// - action stop, idle for the whole `for`, mark written -> the workspace is
//   stopped through the StopWorkspace path with end reason "idle".
//
// Every write is guarded by the record's version as this replica last saw
// it, so a restarted workspace is never marked or stopped for what its
// previous placement did, and two replicas that both hear a node (an agent
// between replicas) cannot stop it twice: the second write finds a newer
// version and changes nothing.
//
// Observe runs on the heartbeat path: it touches only this monitor's own
// lock, never the database, the scheduler's lock or a cluster view (the
// catalog it judges with is the one the last tick read). The writes happen
// in Tick, on the monitor's own thread.
#ifndef WSCHED_SERVER_IDLE_IDLE_MONITOR_H_
#define WSCHED_SERVER_IDLE_IDLE_MONITOR_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "server/core/catalog.h"
#include "server/core/idle_tracker.h"
#include "server/usage/usage_accounting.h"

namespace wsched::idle {

class IdleMonitor {
 public:
  using Clock = std::function<absl::Time()>;

  // What the monitor reads of the replica and asks of the database.
  class Actions {
   public:
    virtual ~Actions() = default;
    // The catalog decisions use now (shared, never copied); read once a tick.
    virtual std::shared_ptr<const core::Catalog> Catalog() const = 0;
    // What this replica knows of each live, placed workspace among `ids`:
    // its version and idle mark. Absent: not live and placed here.
    struct Known {
      int64_t version = 0;
      std::optional<core::IdleMark> mark;
    };
    virtual absl::flat_hash_map<std::string, Known> KnownOf(const std::vector<std::string>& ids) = 0;
    // Writes (or, with nullopt, clears) the mark on the record at exactly
    // `version`: its new version, or ABORTED when it moved on.
    virtual absl::StatusOr<int64_t> Mark(const std::string& workspace, int64_t version,
                                         const std::optional<core::IdleMark>& mark) = 0;
    // Stops the record at exactly `version`, with end reason "idle".
    virtual absl::Status StopIdle(const std::string& workspace, int64_t version) = 0;
  };

  struct Options {
    // A workspace without a sample for this long is no longer judged here:
    // its agent stopped reporting, or now reports to another replica.
    absl::Duration stale_after = absl::Seconds(30);
    absl::Duration tick = absl::Seconds(1);
  };

  IdleMonitor(Actions* actions, Options options, Clock clock);
  ~IdleMonitor();
  IdleMonitor(const IdleMonitor&) = delete;
  IdleMonitor& operator=(const IdleMonitor&) = delete;

  // One heartbeat's samples (UsageAccounting's observer).
  void Observe(const usage::UsageAccounting::Report& report) ABSL_LOCKS_EXCLUDED(mu_);
  // Judges every workspace seen lately and writes what changed.
  void Tick() ABSL_LOCKS_EXCLUDED(mu_);

  // Ticks every options.tick on a thread of its own until Stop.
  void Start();
  void Stop();

  // GPUs held by workspaces this replica finds idle now, by pool and
  // class (wsched_idle_gpus): sum it over replicas, each judges its own.
  std::map<usage::PoolClass, int> IdleGpus() const ABSL_LOCKS_EXCLUDED(mu_);
  // Workspaces stopped for idling so far, by pool and class.
  std::map<usage::PoolClass, int64_t> IdleStops() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  // A GPU-holding workspace seen in a heartbeat lately.
  struct Watched {
    std::string pool, class_id;
    int gpus = 0;
    int64_t version = 0;  // The newest this monitor saw or wrote.
    absl::Time last_seen;
    // Since the last tick: a sample that was not idle (or a class without
    // a policy). Only that clears a mark; a clock restarted for another
    // reason (another replica's write, a gap) leaves it alone.
    bool not_idle_seen = false;
  };
  // What one tick decided for one workspace, carried out without the lock.
  struct Plan {
    std::string workspace;
    int64_t version = 0;
    std::optional<core::IdleMark> mark;  // Set: it is idle now.
    bool stop = false;
    bool not_idle_seen = false;
  };
  void Carry(const Plan& plan, const Actions::Known& known);
  // The catalog of the last tick (or, before the first, the replica's).
  std::shared_ptr<const core::Catalog> CatalogNow() ABSL_LOCKS_EXCLUDED(mu_);
  void NoteWritten(const std::string& workspace, int64_t version) ABSL_LOCKS_EXCLUDED(mu_);
  void Loop();

  Actions* const actions_;
  const Options options_;
  const Clock clock_;

  mutable absl::Mutex mu_;
  core::IdleTracker tracker_ ABSL_GUARDED_BY(mu_);
  std::shared_ptr<const core::Catalog> catalog_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, Watched> watched_ ABSL_GUARDED_BY(mu_);
  std::map<usage::PoolClass, int> idle_gpus_ ABSL_GUARDED_BY(mu_);
  std::map<usage::PoolClass, int64_t> stops_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread loop_;
};

}  // namespace wsched::idle

#endif  // WSCHED_SERVER_IDLE_IDLE_MONITOR_H_
