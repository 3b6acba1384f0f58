// PlaceWorkspace: one attempt, and the small bounded driver that runs it.
//
// An attempt reads what must be exact (the workspace's record, settings,
// quota), resolves the class, decides and commits through the steps every
// placement shares (decision_commit.cc), and returns what happens next: an
// answer, or another attempt after catching up with the feed. A negative
// answer (refusal, queueing) is given only on state confirmed against the
// database: the attempt asks to catch up first and decides again.
#include <variant>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "server/core/error_reason.h"
#include "server/log/log.h"
#include "server/scheduler/scheduler.h"

namespace wsched::scheduler {
namespace {

core::Workspace NewRecord(const PlaceRequest& request, const core::WorkspaceClass& cls,
                          const core::ClassResolution& resolution) {
  core::Workspace w;
  w.id = request.workspace_id;
  w.org_id = request.org_id;
  w.project_id = request.project_id;
  w.user_id = request.user_id;
  w.class_id = cls.id;
  w.class_source = core::ClassSourceName(resolution.source);
  w.explanation = resolution.explanation;
  w.priority = request.priority;
  return w;
}

}  // namespace

absl::StatusOr<WorkspaceView> Scheduler::Place(const PlaceRequest& request) {
  const absl::Time start = clock_();
  PlaceProgress progress;
  auto finish = [&](PlaceAnswer answer) {
    metrics_->ObservePlacement(progress.class_label, answer.result.ok() ? answer.outcome : "error",
                               clock_() - start);
    return std::move(answer.result);
  };
  for (int attempt = 0; attempt < options_.place_attempts; ++attempt) {
    PlaceNext next = AttemptPlace(request, progress);
    if (auto* answer = std::get_if<PlaceAnswer>(&next)) return finish(std::move(*answer));
    const PlaceRetry& retry = std::get<PlaceRetry>(next);
    progress.read |= retry.read;
    if (retry.wait_past_version) {
      // Another request for the same id holds it: wake when its commit is
      // mirrored rather than after a guess at how long a commit takes.
      WaitForChange(request.workspace_id, *retry.wait_past_version, absl::Seconds(1));
    }
    if (retry.catch_up) {
      progress.confirmed |= retry.confirms;
      if (absl::Status s = CatchUp(); !s.ok()) return finish({s, "error"});
    }
    if (retry.spread_out) {
      // Racing replicas retry after a short pause of their own, so they
      // spread out rather than collide again.
      absl::SleepFor(absl::Milliseconds(1 + absl::ToUnixNanos(clock_()) % (5 * (attempt + 1))));
    }
  }
  return finish({absl::AbortedError(absl::StrCat("placing ", request.workspace_id,
                                                 " kept losing races; retry the request")),
                 "error"});
}

Scheduler::PlaceNext Scheduler::AttemptPlace(const PlaceRequest& request, PlaceProgress& progress) {
  // Catch up with the feed, once per call, before a negative answer.
  const PlaceRetry confirm{.catch_up = true, .confirms = true};
  // The catalog first: an apply committed while the inputs are read shows
  // as a newer generation below, and the attempt catches up.
  auto [catalog, generation] = mirror_->CatalogNow();
  absl::StatusOr<PlacementInputs> in = InputsFor(request, progress.read, generation);
  if (!in.ok()) return PlaceAnswer{in.status(), "error"};
  // Idempotent: the same id answers with the same placement (or queue slot).
  if (in->existing && core::IsActive(in->existing->workspace)) {
    progress.class_label = in->existing->workspace.class_id;
    return PlaceAnswer{ViewOfStored(*in->existing), "repeated"};
  }
  // A lost workspace that still holds its old node's capacity is stopped
  // (freed) first, then restarted like any stopped one.
  if (in->existing && !in->existing->released) {
    if (auto stopped = StopAndMirror(request.workspace_id); !stopped.ok()) {
      return PlaceAnswer{stopped.status(), "error"};
    }
    return PlaceRetry{.read = true};
  }
  if (in->catalog_generation > generation) return confirm;  // Decide with the newest catalog.

  std::string previous = request.restart && in->existing ? in->existing->workspace.class_id : "";
  auto resolution = core::ResolveClass(
      {request.org_id, request.project_id, request.class_id, previous}, *catalog, in->project,
      in->org);
  if (!resolution.ok()) {
    if (progress.confirmed) return PlaceAnswer{resolution.status(), "refused"};
    PlaceRetry retry = confirm;
    retry.read = true;
    return retry;
  }
  const core::WorkspaceClass* cls = catalog->FindClass(resolution->class_id);
  progress.class_label = cls->id;
  if (cls->is_gpu() && in->org.gpu_quota >= 0 &&
      in->org_gpus + cls->gpu.count > in->org.gpu_quota) {
    return PlaceAnswer{core::OrgGpuQuotaExceededError(request.org_id, cls->id, in->org_gpus,
                                                      in->org.gpu_quota, cls->gpu.count),
                       "refused"};
  }
  core::Workspace w = NewRecord(request, *cls, *resolution);
  ReplicaMirror::HeldDecision held = mirror_->DecideAndHold(*cls, *catalog, w.id);
  if (held.id_busy) return PlaceRetry{.read = true, .wait_past_version = mirror_->KnownVersion(w.id)};
  const placement::Decision& decision = held.decision;
  // Nodes or capacity added on another replica may not have reached us.
  if (!std::holds_alternative<placement::Placed>(decision) && !progress.confirmed) return confirm;
  if (auto* never = std::get_if<placement::Never>(&decision)) {
    return PlaceAnswer{
        core::PreconditionError(core::ErrorReason::kClassUnplaceable, "CAPACITY",
                                absl::StrCat("class/", cls->id),
                                absl::StrCat("class ", cls->id, " can never be placed: ", never->reason),
                                {{"class", cls->id}}),
        "never"};
  }
  // What the decision rests on, for the commit to confirm.
  store::WorkspaceWrite write;
  write.from = {in->existing ? in->existing->version : 0, false};
  write.catalog_generation = generation;
  write.project_settings_version = in->project_version;
  write.org_settings_version = in->org_version;
  if (std::holds_alternative<placement::NotNow>(decision)) {
    return SavePending(std::move(w), *cls, std::move(write));
  }
  write.kind = store::WorkspaceWrite::Kind::kPlace;
  absl::StatusOr<HeldPlacement> built = BuildHeld(*cls, held, std::move(w), std::move(write));
  if (!built.ok()) return PlaceAnswer{built.status(), "error"};
  std::vector<HeldPlacement> one;
  one.push_back(*std::move(built));
  const store::WriteOutcome committed = CommitHeld(one)[0];
  if (committed.status.ok()) {
    const HeldPlacement& placed = one[0];
    return PlaceAnswer{ViewOfStored({placed.workspace, committed.version, false}), "placed"};
  }
  if (absl::IsResourceExhausted(committed.status)) return PlaceAnswer{committed.status, "refused"};
  if (!absl::IsAborted(committed.status)) return PlaceAnswer{committed.status, "error"};
  // Lost a race: apply what the others committed and try again.
  log::Info("placement lost a race; catching up",
            {{"workspace", request.workspace_id}, {"error", std::string(committed.status.message())}});
  return PlaceRetry{.read = true, .catch_up = true, .spread_out = true};
}

Scheduler::PlaceNext Scheduler::SavePending(core::Workspace w, const core::WorkspaceClass& cls,
                                            store::WorkspaceWrite write) {
  w.state = core::WorkspaceState::kPending;
  // Behind the whole queue: not queued yet. The quota and policy let it in.
  ScalingViews scaling = scaling_views_ ? scaling_views_() : ScalingViews();
  if (auto reason = ExplainPending(cls.id, 0, std::move(scaling), {})) w.pending_reason = reason->detail;
  write.kind = store::WorkspaceWrite::Kind::kSavePending;
  write.workspace = w;
  store::WriteOutcome saved = stores_.placement->Write(std::move(write));
  // Something changed meanwhile: read, retry.
  if (absl::IsAborted(saved.status)) return PlaceRetry{.read = true, .catch_up = true};
  if (!saved.status.ok()) return PlaceAnswer{saved.status, "error"};
  w.created_at = clock_();
  mirror_->Apply({w, saved.version, /*released=*/false});
  log::Info("workspace pending", {{"workspace", w.id}, {"class", w.class_id},
                                  {"reason", w.pending_reason}});
  return PlaceAnswer{ViewOfStored({w, saved.version, false}), "pending"};
}

absl::StatusOr<PlacementInputs> Scheduler::InputsFor(const PlaceRequest& request, bool read,
                                                     int64_t catalog_generation) {
  if (!read) {
    std::optional<CachedSettings> cached = settings_.Get(request.project_id, request.org_id);
    const bool known = mirror_->KnownVersion(request.workspace_id) > 0;
    // The hot path: a workspace this replica has never seen (new, as far as
    // it can tell: if not, the commit's guard says so and the next attempt
    // reads), cached settings, no GPU quota to count.
    if (cached && !known && cached->org.gpu_quota < 0) {
      PlacementInputs in;
      in.project = std::move(cached->project);
      in.project_version = cached->project_version;
      in.org = std::move(cached->org);
      in.org_version = cached->org_version;
      in.catalog_generation = catalog_generation;
      return in;
    }
  }
  absl::StatusOr<PlacementInputs> in = stores_.placement->ReadInputs(request);
  if (in.ok() && !(in->existing && core::IsActive(in->existing->workspace))) {
    settings_.Put({in->project, in->project_version, in->org, in->org_version});
  }
  return in;
}

}  // namespace wsched::scheduler
