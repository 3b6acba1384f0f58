// A workspace as the scheduler tracks it.
#ifndef WSCHED_SERVER_CORE_WORKSPACE_H_
#define WSCHED_SERVER_CORE_WORKSPACE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "server/core/budget_mark.h"
#include "server/core/hand_off.h"
#include "server/core/idle_policy.h"
#include "server/core/mig.h"

namespace wsched::core {

enum class WorkspaceState { kPending, kPlaced, kStopped, kLost };

// The MIG slice a placed workspace holds, as its GPU hold row stores it.
struct WorkspaceSlice {
  HeldSlice at;
  std::string uuid;        // "MIG-...": the hold's key, as a whole GPU's UUID is.
  int compute_slices = 0;  // Its share of the GPU: compute_slices / kMigComputeSlices.
  friend bool operator==(const WorkspaceSlice&, const WorkspaceSlice&) = default;
};

struct Workspace {
  std::string id;  // Caller-chosen; the idempotency key.
  std::string org_id;
  std::string project_id;
  std::string user_id;
  std::string class_id;
  std::string class_source;  // core::ClassSourceName of the resolution step.
  std::string explanation;   // Why this class.
  WorkspaceState state = WorkspaceState::kPending;
  int priority = 0;
  // Placed (or lost): where, and what it holds besides GPUs.
  std::string node_name;
  std::string pool;
  int64_t cpu_millis = 0;
  int64_t memory_bytes = 0;
  std::vector<int> gpu_indices;
  std::vector<std::string> gpu_uuids;
  // A slice class: the one MIG slice it holds instead of whole GPUs
  // (gpu_indices and gpu_uuids stay empty).
  std::optional<WorkspaceSlice> slice;
  // What it was handed when placed (shared: copies of a workspace are
  // many, the hand-off never changes); null before.
  std::shared_ptr<const HandOff> hand_off;
  std::string pending_reason;
  absl::Time created_at = absl::InfinitePast();
  absl::Time placed_at = absl::InfinitePast();
  // Placed: set while a replica reports its GPUs idle (docs/catalog.md
  // "Idle GPUs"); a new placement starts without.
  std::optional<IdleMark> idle;
  // Placed: what a spending limit last told it (BudgetMark::placed_at
  // says for which placement).
  std::optional<BudgetMark> budget;
  // Placed: when it first became ready, as the control plane reported
  // (ReportWorkspaceReady); a new placement starts without.
  std::optional<absl::Time> ready_at;
};

// The keys of the GPU holds a placement has (gpu_holds): its GPUs' UUIDs,
// or its slice's.
inline std::vector<std::string> HeldUuids(const Workspace& w) {
  std::vector<std::string> uuids = w.gpu_uuids;
  if (w.slice) uuids.push_back(w.slice->uuid);
  return uuids;
}

// What the org GPU quota counts of a placement, in sevenths of a GPU.
inline int64_t HeldGpuSevenths(const Workspace& w) {
  return static_cast<int64_t>(w.gpu_uuids.size()) * kMigComputeSlices +
         (w.slice ? w.slice->compute_slices : 0);
}

const char* WorkspaceStateName(WorkspaceState state);

// Pending or placed: a repeated PlaceWorkspace answers with what it has.
inline bool IsActive(const Workspace& w) {
  return w.state == WorkspaceState::kPending || w.state == WorkspaceState::kPlaced;
}
std::optional<WorkspaceState> ParseWorkspaceState(absl::string_view name);

}  // namespace wsched::core

#endif  // WSCHED_SERVER_CORE_WORKSPACE_H_
