// The idle rule (docs/catalog.md "Idle GPUs"), on the samples and times
// the caller gives it, so it is tested without agents or clocks:
//
// - a workspace is idle when every GPU it holds reported a utilisation
//   below the class's threshold in every sample for the class's `for`;
// - the clock starts at the first such sample; any sample at or above the
//   threshold, a GPU missing from a sample, a change of the policy, or a gap
//   between samples longer than `stale_after` starts it again;
// - no recent sample is never idle: what the agent does not report, the
//   rule does not guess.
//
// Not thread-safe: its owner (scheduler::IdleMonitor) locks around it.
#ifndef WSCHED_SERVER_CORE_IDLE_TRACKER_H_
#define WSCHED_SERVER_CORE_IDLE_TRACKER_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "absl/types/span.h"
#include "server/core/idle_policy.h"

namespace wsched::core {

class IdleTracker {
 public:
  explicit IdleTracker(absl::Duration stale_after) : stale_after_(stale_after) {}

  // One heartbeat's samples of the GPUs `workspace` holds, one entry per
  // GPU: its utilisation in percent, or nullopt when the agent reported none.
  void Observe(const std::string& workspace, const IdlePolicy& policy,
               absl::Span<const std::optional<int>> utilization, absl::Time at);
  void Forget(const std::string& workspace) { entries_.erase(workspace); }

  enum class Phase {
    kActive,    // Not idle: in use, unreported, or no recent sample.
    kCounting,  // Idle since `idle_since`, not yet for long enough to tell.
    kIdle,      // Idle: the watchers are told (with stops_at for action stop).
    kStopDue,   // Action stop, idle for the whole `for`: stop it.
  };
  struct Verdict {
    Phase phase = Phase::kActive;
    absl::Time idle_since = absl::InfinitePast();  // From kCounting on.
    std::optional<absl::Time> stops_at;            // Action stop, from kCounting on.
    friend bool operator==(const Verdict&, const Verdict&) = default;
  };
  // Where `workspace` stands at `now` (kActive when it is not tracked).
  Verdict At(const std::string& workspace, absl::Time now) const;

  // Drops the workspaces whose last sample is older than stale_after and
  // returns them: they are no longer judged at all.
  std::vector<std::string> Prune(absl::Time now);
  // Every tracked workspace, for the owner to judge each.
  std::vector<std::string> Tracked() const;
  const IdlePolicy* PolicyOf(const std::string& workspace) const;

 private:
  struct Entry {
    IdlePolicy policy;
    std::optional<absl::Time> idle_since;  // Unset: the last sample was not idle.
    absl::Time last_sample = absl::InfinitePast();
  };
  static bool AllBelow(absl::Span<const std::optional<int>> utilization, int threshold);

  const absl::Duration stale_after_;
  std::map<std::string, Entry> entries_;  // In id order: Tracked() is stable.
};

const char* IdlePhaseName(IdleTracker::Phase phase);

}  // namespace wsched::core

#endif  // WSCHED_SERVER_CORE_IDLE_TRACKER_H_
