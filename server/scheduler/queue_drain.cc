// The pending queue's drain: each queued workspace decided in queue order
// on what the ones before it left, committed a batch at a time through the
// steps every placement shares (decision_commit.cc); then what is left is
// told why it waits.
#include <variant>

#include "absl/strings/str_cat.h"
#include "absl/container/flat_hash_set.h"
#include "server/log/log.h"
#include "server/placement/queue_pass.h"
#include "server/scheduler/scheduler.h"

namespace wsched::scheduler {
namespace {

// Queue placements committed together in one drain step: large enough that
// a node arriving for a long queue fills in a few commits, small enough that
// the first of them is not held back by the decisions of the last.
constexpr size_t kDrainBatch = 64;

}  // namespace

void Scheduler::DrainPending(DrainScope scope) {
  // The pools asked for stay in the requests, for the day this replica
  // becomes the placer; its first full drain comes within
  // --refresh_interval of that.
  if (options_.drains_queue && !options_.drains_queue()) return;
  absl::MutexLock drain_lock(&drain_mu_);  // One drain at a time.
  DrainRequests::Scope asked = drains_.Take();
  asked.everything |= scope == DrainScope::kEverything;
  const std::vector<std::string> ids = mirror_->Queued(asked);
  if (ids.empty()) return;  // Nothing to try: the reasons stand.
  absl::flat_hash_set<std::string> classes;
  std::vector<std::optional<ReplicaMirror::QueuedWorkspace>> queued;
  for (const std::string& id : ids) {
    queued.push_back(DecidableQueued(id));
    if (queued.back()) classes.insert(queued.back()->entry.class_id);
  }
  // Decided in queue order, each holding what it chose so the next one
  // decides on what is left (placement/queue_pass.h), then committed a
  // batch at a time: a drain that places many workspaces costs a few
  // commits, not one each.
  placement::QueuePass pass(std::move(classes));
  std::vector<HeldPlacement> batch;
  for (size_t i = 0; i < queued.size() && !pass.Done() && !stopping(); ++i) {
    if (!queued[i] || !pass.ShouldDecide(queued[i]->entry.class_id)) continue;
    queue_decisions_++;
    absl::StatusOr<QueueDecision> decided = DecideQueued(*queued[i]);
    if (!decided.ok()) {
      log::Warning("pending workspace not placed", {{"workspace", ids[i]},
                                                   {"error", std::string(decided.status().message())}});
      continue;
    }
    pass.Decided(queued[i]->entry.class_id, decided->decision);
    if (decided->held) {
      batch.push_back(*std::move(decided->held));
      if (batch.size() >= kDrainBatch) CommitQueuePlacements(batch);
    }
  }
  CommitQueuePlacements(batch);
  if (stopping()) return;
  // What is left waits: each is told what stops it, in queue order, in one
  // pass (placement/pending_reason.h).
  placement::PendingContext ctx;
  ctx.scaling = scaling_views_ ? scaling_views_() : ScalingViews();
  ctx.now = clock_();
  mirror_->ExplainQueue(std::move(ctx));
}

std::optional<ReplicaMirror::QueuedWorkspace> Scheduler::DecidableQueued(const std::string& id) {
  std::optional<ReplicaMirror::QueuedWorkspace> queued = mirror_->FindQueued(id);
  if (!queued) return std::nullopt;  // Placed or stopped meanwhile.
  const placement::PendingEntry& entry = queued->entry;
  // A class the project's or org's policy forbids since it was queued stays
  // pending (its reason says so) until allowed again or stopped.
  if (std::optional<CachedSettings> cached = SettingsFor(entry.project, entry.org)) {
    if (core::ForbiddingRule(entry.class_id, cached->project, cached->org)) return std::nullopt;
  }
  // Class gone: stays pending, visible.
  if (queued->catalog->FindClass(entry.class_id) == nullptr) return std::nullopt;
  return queued;
}

absl::StatusOr<Scheduler::QueueDecision> Scheduler::DecideQueued(
    const ReplicaMirror::QueuedWorkspace& queued) {
  const placement::PendingEntry& entry = queued.entry;
  const std::string& id = entry.workspace;
  const core::WorkspaceClass* cls = queued.catalog->FindClass(entry.class_id);
  ReplicaMirror::HeldDecision held = mirror_->DecideAndHold(*cls, *queued.catalog, id);
  if (auto* not_now = std::get_if<placement::NotNow>(&held.decision)) {
    // Its reason is set once the whole queue was tried (DrainPending).
    mirror_->NoteQueuedPools(id, not_now->pools);
    return QueueDecision{held.decision};
  }
  // Never (the catalog changed; stays visible), or the id held already.
  if (!std::holds_alternative<placement::Placed>(held.decision) || held.id_busy) {
    return QueueDecision{held.decision};
  }
  core::Workspace w;
  w.id = id;
  w.org_id = entry.org;
  w.project_id = entry.project;
  w.class_id = entry.class_id;
  w.priority = entry.priority;
  w.created_at = entry.since;
  // The queue placement lands only on the pending record it was decided
  // for: a stop (or any change) since then bumps the version and wins.
  store::WorkspaceWrite write;
  write.kind = store::WorkspaceWrite::Kind::kQueuePlace;
  write.from = {queued.version, /*pending=*/true};
  write.catalog_generation = queued.catalog_generation;
  absl::StatusOr<HeldPlacement> built = BuildHeld(*cls, held, std::move(w), std::move(write));
  if (!built.ok()) return built.status();
  return QueueDecision{held.decision, *std::move(built)};
}

void Scheduler::CommitQueuePlacements(std::vector<HeldPlacement>& batch) {
  if (batch.empty()) return;
  std::vector<store::WriteOutcome> outcomes = CommitHeld(batch);
  for (size_t i = 0; i < batch.size(); ++i) {
    const core::Workspace& w = batch[i].workspace;
    const absl::Status& status = outcomes[i].status;
    if (status.ok()) {
      log::Info("pending workspace placed", {{"workspace", w.id}, {"node", w.node_name}});
      metrics_->ObservePlacement(w.class_id, "placed_from_queue", absl::ZeroDuration());
    } else if (absl::IsResourceExhausted(status)) {
      mirror_->NoteQueuedReason(w.id, std::string(status.message()));
    } else if (absl::IsAborted(status)) {
      follower_->Notify();  // Stopped or changed elsewhere: the feed says how.
    } else if (!absl::IsUnavailable(status)) {
      log::Warning("pending workspace not placed", {{"workspace", w.id},
                                                   {"error", std::string(status.message())}});
    }
  }
  batch.clear();
}

}  // namespace wsched::scheduler
