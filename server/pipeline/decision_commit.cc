#include "server/pipeline/decision_commit.h"

#include <variant>

#include "absl/strings/str_cat.h"
#include "server/core/error_reason.h"
#include "server/placement/decide.h"
#include "server/pipeline/device_spec.h"

namespace wsched::pipeline {
namespace {

void SetPlaced(core::Workspace& w, const placement::Placed& placed, const BuiltPlacement& built) {
  w.state = core::WorkspaceState::kPlaced;
  w.node_name = placed.node;
  w.pool = placed.pool;
  w.cpu_millis = placed.resources.cpu_millis;
  w.memory_bytes = placed.resources.memory_bytes;
  w.gpu_indices = placed.gpu_indices;
  w.gpu_uuids = built.gpu_uuids;
  w.slice = built.slice;
  w.hand_off = built.hand_off;
  w.pending_reason.clear();
}

// The database's placed_at of a committed placement, so this replica
// mirrors the time the usage ledger starts from; `now` where a store has
// none to tell (the unit tests' fake).
absl::Time PlacedAt(const store::WriteOutcome& committed, absl::Time now) {
  return committed.placed_at != absl::InfinitePast() ? committed.placed_at : now;
}

}  // namespace

absl::StatusOr<HeldPlacement> DecisionCommit::Build(const core::WorkspaceClass& cls,
                                                    const replica::ReplicaMirror::HeldDecision& held,
                                                    core::Workspace workspace,
                                                    store::WorkspaceWrite write) {
  const auto& placed = std::get<placement::Placed>(held.decision);
  absl::StatusOr<BuiltPlacement> built =
      placed.slice ? BuildSlicePlacement(cls, held.node, *placed.slice)
                   : BuildPlacement(cls, held.node, held.pool, placed.gpu_indices);
  if (!built.ok()) {
    mirror_->ReleaseTentative(workspace.id);
    return built.status();
  }
  SetPlaced(workspace, placed, *built);
  write.workspace = workspace;
  return HeldPlacement{std::move(workspace), placed, std::move(write)};
}

std::vector<store::WriteOutcome> DecisionCommit::Commit(std::vector<HeldPlacement>& held) {
  std::vector<store::WorkspaceWrite> writes;
  for (HeldPlacement& placement : held) writes.push_back(std::move(placement.write));
  std::vector<store::WriteOutcome> outcomes = store_->WriteAll(std::move(writes));
  for (size_t i = 0; i < held.size(); ++i) {
    core::Workspace& w = held[i].workspace;
    const store::WriteOutcome& committed = outcomes[i];
    if (committed.status.ok()) {
      w.placed_at = PlacedAt(committed, clock_());
      if (w.created_at == absl::InfinitePast()) w.created_at = w.placed_at;
      mirror_->Apply({w, committed.version, /*released=*/false});
      continue;
    }
    // Lost a race for the node (another replica, or a node that changed):
    // the next decisions keep off it until the winner's commit arrives. A
    // decision that read stale settings or catalog lost no race for it.
    const bool node_contended = absl::IsAborted(committed.status) && !committed.basis_changed;
    mirror_->ReleaseTentative(w.id, node_contended ? w.node_name : "");
  }
  return outcomes;
}

void NoteBudgetRefusal(metrics::Metrics& metrics, const absl::Status& refused) {
  std::optional<core::ErrorDetails> details = core::DetailsOf(refused);
  if (!details || details->reason != core::ErrorReason::kBudgetExhausted) return;
  auto scope = details->metadata.find("scope");
  metrics.ObserveBudgetRefusal(scope == details->metadata.end() ? "" : scope->second);
}

}  // namespace wsched::pipeline
