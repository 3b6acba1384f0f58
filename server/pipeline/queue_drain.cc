#include "server/pipeline/queue_drain.h"

#include <variant>

#include "absl/strings/str_cat.h"
#include "absl/container/flat_hash_set.h"
#include "server/core/class_resolution.h"
#include "server/core/error_reason.h"
#include "server/log/log.h"
#include "server/placement/queue_pass.h"

namespace wsched::pipeline {
namespace {

// Queue placements committed together in one drain step: large enough that
// a node arriving for a long queue fills in a few commits, small enough that
// the first of them is not held back by the decisions of the last.
constexpr size_t kDrainBatch = 64;

}  // namespace

void QueueDrain::Drain(Scope scope) {
  // The pools asked for stay in the requests, for the day this replica
  // becomes the placer; its first full drain comes within
  // --refresh_interval of that.
  if (drains_queue_ && !drains_queue_()) return;
  absl::MutexLock drain_lock(&drain_mu_);
  replica::DrainRequests::Scope asked = parts_.drains->Take();
  asked.everything |= scope == Scope::kEverything;
  const std::vector<std::string> ids = parts_.mirror->Queued(asked);
  if (asked.everything) {
    const absl::flat_hash_set<std::string> queued_now(ids.begin(), ids.end());
    budget_holds_.Keep([&](const std::string& id) { return queued_now.contains(id); });
  }
  if (ids.empty()) return;  // Nothing to try: the reasons stand.
  absl::flat_hash_set<std::string> classes;
  std::vector<std::optional<replica::ReplicaMirror::QueuedWorkspace>> queued;
  for (const std::string& id : ids) {
    queued.push_back(Decidable(id));
    if (queued.back()) classes.insert(queued.back()->entry.class_id);
  }
  // Decided in queue order, each holding what it chose so the next one
  // decides on what is left, then committed a batch at a time: a drain
  // that places many workspaces costs a few commits, not one each.
  std::vector<HeldPlacement> batch;
  placement::QueuePass(std::move(classes)).Run(
      [&](auto visit) {
        for (size_t i = 0; i < queued.size() && !parts_.drains->stopping(); ++i) {
          if (!visit(i)) return;
        }
      },
      [&](size_t i) { return queued[i] ? &queued[i]->entry.class_id : nullptr; },
      [&](size_t i) -> std::optional<placement::Decision> {
        decisions_++;
        absl::StatusOr<Decided> decided = Decide(*queued[i]);
        if (!decided.ok()) {
          log::Warning("pending workspace not placed",
                       {{"workspace", ids[i]}, {"error", std::string(decided.status().message())}});
          return std::nullopt;
        }
        if (decided->held) {
          batch.push_back(*std::move(decided->held));
          drain_mu_.AssertHeld();  // Run inside this drain, under its lock.
          if (batch.size() >= kDrainBatch) Commit(batch);
        }
        return decided->decision;
      });
  Commit(batch);
  if (!parts_.drains->stopping()) Explain();
}

void QueueDrain::Explain() {
  // Each is told what stops it, in queue order, in one pass
  // (placement/pending_reason.h).
  placement::PendingContext ctx;
  ctx.scaling = parts_.views->Scaling();
  ctx.now = clock_();
  parts_.mirror->ExplainQueue(std::move(ctx));
}

std::optional<replica::ReplicaMirror::QueuedWorkspace> QueueDrain::Decidable(const std::string& id) {
  std::optional<replica::ReplicaMirror::QueuedWorkspace> queued = parts_.mirror->FindQueued(id);
  if (!queued) return std::nullopt;  // Placed or stopped meanwhile.
  const placement::PendingEntry& entry = queued->entry;
  // A class the project's or org's policy forbids since it was queued stays
  // pending (its reason says so) until allowed again or stopped.
  if (std::optional<replica::CachedSettings> cached =
          parts_.settings->CachedOrRead(entry.project, entry.org)) {
    if (core::ForbiddingRule(entry.class_id, cached->project, cached->org)) return std::nullopt;
    // Refused by a spending limit: stays pending (its reason says so) and
    // takes no room from the workspaces behind it.
    if (budget_holds_.Holds(id, {cached->project_version, cached->org_version}, clock_())) {
      return std::nullopt;
    }
  }
  // Class gone: stays pending, visible.
  if (queued->catalog->FindClass(entry.class_id) == nullptr) return std::nullopt;
  return queued;
}

absl::StatusOr<QueueDrain::Decided> QueueDrain::Decide(
    const replica::ReplicaMirror::QueuedWorkspace& queued) {
  const placement::PendingEntry& entry = queued.entry;
  const std::string& id = entry.workspace;
  const core::WorkspaceClass* cls = queued.catalog->FindClass(entry.class_id);
  replica::ReplicaMirror::HeldDecision held = parts_.mirror->DecideAndHold(*cls, *queued.catalog, id);
  if (auto* not_now = std::get_if<placement::NotNow>(&held.decision)) {
    // Its reason is set once the whole queue was tried (Explain).
    parts_.mirror->NoteQueuedPools(id, not_now->pools);
    return Decided{held.decision};
  }
  // Never (the catalog changed; stays visible), or the id held already.
  if (!std::holds_alternative<placement::Placed>(held.decision) || held.id_busy) {
    return Decided{held.decision};
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
  absl::StatusOr<HeldPlacement> built = parts_.commit->Build(*cls, held, std::move(w), std::move(write));
  if (!built.ok()) return built.status();
  return Decided{held.decision, *std::move(built)};
}

void QueueDrain::NoteBudgetHold(const core::Workspace& w, const absl::Status& refused) {
  std::optional<core::ErrorDetails> details = core::DetailsOf(refused);
  if (!details || details->reason != core::ErrorReason::kBudgetExhausted) return;
  // Judged by the settings cached now: a change to them since lets it be
  // tried again at once.
  std::optional<replica::CachedSettings> cached = parts_.settings->Cached(w.project_id, w.org_id);
  if (!cached) return;
  budget_holds_.Refused(w.id, {cached->project_version, cached->org_version}, clock_(),
                        details->retry_delay);
  // The room it was given is free again: the workspaces behind it are tried
  // at once, without it, not at the next refresh.
  parts_.drains->Everything();
}

void QueueDrain::Commit(std::vector<HeldPlacement>& batch) {
  if (batch.empty()) return;
  std::vector<store::WriteOutcome> outcomes = parts_.commit->Commit(batch);
  std::vector<std::string> placed;
  for (size_t i = 0; i < batch.size(); ++i) {
    const core::Workspace& w = batch[i].workspace;
    const absl::Status& status = outcomes[i].status;
    if (status.ok()) {
      log::Info("pending workspace placed", {{"workspace", w.id}, {"node", w.node_name}});
      parts_.metrics->ObservePlacement(w.class_id, "placed_from_queue", absl::ZeroDuration());
      placed.push_back(w.id);
    } else if (absl::IsResourceExhausted(status)) {
      NoteBudgetRefusal(*parts_.metrics, status);
      NoteBudgetHold(w, status);
      parts_.mirror->NoteQueuedReason(w.id, std::string(status.message()));
    } else if (absl::IsAborted(status)) {
      parts_.follower->Notify();  // Stopped or changed elsewhere: the feed says how.
    } else if (!absl::IsUnavailable(status)) {
      log::Warning("pending workspace not placed", {{"workspace", w.id},
                                                   {"error", std::string(status.message())}});
    }
  }
  batch.clear();
  if (parts_.estimates) parts_.estimates->Placed(placed);
}

}  // namespace wsched::pipeline
