// What a class says about workspaces whose GPUs sit idle, and how a
// workspace carries the verdict (docs/catalog.md "Idle GPUs").
#ifndef WSCHED_SERVER_CORE_IDLE_POLICY_H_
#define WSCHED_SERVER_CORE_IDLE_POLICY_H_

#include <optional>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace wsched::core {

// notify: tell the watchers; stop: tell them, then stop the workspace.
enum class IdleAction { kNotify, kStop };

const char* IdleActionName(IdleAction action);  // "notify", "stop"
std::optional<IdleAction> ParseIdleAction(absl::string_view name);

// `idle: {gpu_utilization_below: 5%, for: 30m, action: stop, warn_before: 5m}`.
struct IdlePolicy {
  // A sample below this (whole percent, 1..99) is idle; at or above it, active.
  int utilization_below_percent = 0;
  // How long every sample of every GPU must stay below it.
  absl::Duration idle_for = absl::ZeroDuration();
  IdleAction action = IdleAction::kNotify;
  // kStop only: the warning comes this long before the stop (0: with it).
  absl::Duration warn_before = absl::ZeroDuration();

  // When the verdict is told, counted from the first idle sample.
  absl::Duration announce_after() const {
    return action == IdleAction::kStop ? idle_for - warn_before : idle_for;
  }
  friend bool operator==(const IdlePolicy&, const IdlePolicy&) = default;
};

// A workspace a replica reported idle, as stored on its record until a GPU
// is used again or it ends.
struct IdleMark {
  absl::Time since;  // The first idle sample.
  std::optional<absl::Time> stops_at;  // Action stop only.
  friend bool operator==(const IdleMark&, const IdleMark&) = default;
};

}  // namespace wsched::core

#endif  // WSCHED_SERVER_CORE_IDLE_POLICY_H_
