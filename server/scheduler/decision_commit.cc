// The steps every placement takes, whoever asked for it (Place, the queue
// drain): decide on the snapshot -> hold tentatively -> build the record and
// its device answer -> commit, guarded by what the decision saw -> mirror
// (or release the hold).
#include <variant>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "server/placement/decide.h"
#include "server/placement/node_ownership.h"
#include "server/scheduler/device_spec.h"
#include "server/scheduler/scheduler.h"

namespace wsched::scheduler {
namespace {

// Long enough for the winner's commit to reach this replica through the
// feed, short enough that packing resumes at once.
constexpr absl::Duration kContendedFor = absl::Milliseconds(200);
// A replica that wrote no workspace for this long no longer owns nodes.
constexpr absl::Duration kPeerQuietFor = absl::Seconds(10);

void SetPlaced(core::Workspace& w, const placement::Placed& placed, const BuiltPlacement& built) {
  w.state = core::WorkspaceState::kPlaced;
  w.node_name = placed.node;
  w.pool = placed.pool;
  w.cpu_millis = placed.resources.cpu_millis;
  w.memory_bytes = placed.resources.memory_bytes;
  w.gpu_indices = placed.gpu_indices;
  w.gpu_uuids = built.gpu_uuids;
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

std::pair<std::shared_ptr<const core::Catalog>, int64_t> Scheduler::CatalogNow() const {
  absl::MutexLock lock(&mu_);
  return {catalog_, catalog_generation_};
}

Scheduler::HeldDecision Scheduler::DecideAndHold(const core::WorkspaceClass& cls,
                                                 const core::Catalog& catalog,
                                                 const std::string& workspace) {
  HeldDecision held;
  absl::MutexLock lock(&mu_);
  held.decision = DecideLocked(cls, catalog);
  auto* placed = std::get_if<placement::Placed>(&held.decision);
  if (placed == nullptr) return held;
  // Tentative hold: concurrent decisions on this replica see it.
  if (!HoldTentatively(workspace, placed->node, placed->gpu_indices, placed->resources).ok()) {
    held.id_busy = true;
    return held;
  }
  held.node = snapshot_.FindNode(placed->node)->info;
  held.pool = *catalog.FindPool(placed->pool);
  return held;
}

placement::Decision Scheduler::DecideLocked(const core::WorkspaceClass& cls,
                                            const core::Catalog& catalog) {
  const absl::Time now = clock_();
  absl::erase_if(contended_, [&](const auto& entry) { return entry.second <= now; });
  absl::erase_if(peers_, [&](const auto& entry) { return now - entry.second > kPeerQuietFor; });
  if (contended_.empty() && peers_.empty()) return placement::Decide(cls, catalog.pools, snapshot_);
  std::vector<std::string> peers;
  for (const auto& [peer, seen] : peers_) peers.push_back(peer);
  absl::flat_hash_set<std::string> contended;  // A handful of nodes at most.
  for (const auto& [node, until] : contended_) contended.insert(node);
  const std::string& me = store::ReplicaId();
  return placement::DecideAvoiding(cls, catalog.pools, snapshot_, [&](const std::string& node) {
    return contended.contains(node) || !placement::OwnsNode(node, me, peers);
  });
}

void Scheduler::MarkContended(const std::string& node) {
  absl::MutexLock lock(&mu_);
  MarkContendedLocked(node);
}

void Scheduler::MarkContendedLocked(const std::string& node) { contended_[node] = clock_() + kContendedFor; }

absl::StatusOr<Scheduler::HeldPlacement> Scheduler::BuildHeld(const core::WorkspaceClass& cls,
                                                               const HeldDecision& held,
                                                               core::Workspace workspace,
                                                               store::WorkspaceWrite write) {
  const auto& placed = std::get<placement::Placed>(held.decision);
  absl::StatusOr<BuiltPlacement> built = BuildPlacement(cls, held.node, held.pool, placed.gpu_indices);
  if (!built.ok()) {
    absl::MutexLock lock(&mu_);
    ReleaseTentative(workspace.id);
    return built.status();
  }
  SetPlaced(workspace, placed, *built);
  write.workspace = workspace;
  return HeldPlacement{std::move(workspace), placed, std::move(write)};
}

std::vector<store::WriteOutcome> Scheduler::CommitHeld(std::vector<HeldPlacement>& held) {
  std::vector<store::WorkspaceWrite> writes;
  for (HeldPlacement& placement : held) writes.push_back(std::move(placement.write));
  std::vector<store::WriteOutcome> outcomes = placement_->WriteAll(std::move(writes));
  for (size_t i = 0; i < held.size(); ++i) {
    core::Workspace& w = held[i].workspace;
    const store::WriteOutcome& committed = outcomes[i];
    if (committed.status.ok()) {
      w.placed_at = PlacedAt(committed, clock_());
      if (w.created_at == absl::InfinitePast()) w.created_at = w.placed_at;
      MirrorCommitted(w, committed.version, /*released=*/false);
      continue;
    }
    absl::MutexLock lock(&mu_);
    ReleaseTentative(w.id);
    // Lost a race (another replica, or a node that changed): the next
    // decisions keep off the node until the winner's commit arrives.
    if (absl::IsAborted(committed.status)) MarkContendedLocked(w.node_name);
  }
  return outcomes;
}

}  // namespace wsched::scheduler
