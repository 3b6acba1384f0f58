// Placing and stopping workspaces; the pending queue and its drain.
//
// The pipeline runs one way: read what must be exact (the workspace's
// record, settings, quota) -> resolve the class -> decide on the snapshot ->
// hold tentatively -> commit, guarded by the version the decision saw ->
// mirror -> answer. A negative answer (refusal, queueing) is given only on
// state confirmed against the database: the replica catches up with the
// change feed first and decides again.
#include <tuple>
#include <variant>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/algorithm/container.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "server/core/error_reason.h"
#include "server/log/log.h"
#include "server/placement/decide.h"
#include "server/placement/node_ownership.h"
#include "server/placement/time_to_gpu.h"
#include "server/scheduler/device_spec.h"
#include "server/scheduler/scheduler.h"

namespace wsched::scheduler {
namespace {

// Queue placements committed together in one drain step: large enough that
// a node arriving for a long queue fills in a few commits, small enough that
// the first of them is not held back by the decisions of the last.
constexpr size_t kDrainBatch = 64;

// Long enough for the winner's commit to reach this replica through the
// feed, short enough that packing resumes at once.
constexpr absl::Duration kContendedFor = absl::Milliseconds(200);
// A replica that wrote no workspace for this long no longer owns nodes.
constexpr absl::Duration kPeerQuietFor = absl::Seconds(10);

absl::Status QuotaExceeded(const std::string& org, int64_t held, int64_t quota,
                           const std::string& class_id, int gpus) {
  return core::OrgGpuQuotaExceededError(org, class_id, held, quota, gpus);
}

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

absl::StatusOr<WorkspaceView> Scheduler::ViewOfStored(const store::WorkspaceRow& row,
                                                      LimitsMemo* limits_memo) {
  WorkspaceView view;
  view.workspace = row.workspace;
  view.version = row.version;
  if (row.workspace.state != core::WorkspaceState::kPending) return view;
  // Read before taking the lock: both may do I/O or take other locks.
  ScalingViews scaling = scaling_views_ ? scaling_views_() : ScalingViews();
  PendingLimits limits;
  if (limits_memo == nullptr) {
    limits = LimitsOf(row.workspace);
  } else {
    const core::Workspace& w = row.workspace;
    std::string key = absl::StrCat(w.project_id.size(), ":", w.project_id, w.org_id.size(), ":",
                                   w.org_id, w.class_id);
    auto [it, fresh] = limits_memo->try_emplace(std::move(key));
    if (fresh) it->second = LimitsOf(w);
    limits = it->second;
  }
  const store::TimingFigures timing = inventory_->Timings();
  for (const auto& [pool, figure] : timing.node_start) {
    scaling[pool].median_start = figure.median;
    scaling[pool].start_samples = figure.samples;
  }
  {
    absl::MutexLock lock(&mu_);
    view.queue_position = pending_.Position(row.workspace.id);
  }
  view.pending = ExplainPending(row.workspace.class_id, view.queue_position, std::move(scaling), limits);
  if (!view.pending) return view;  // Class gone: the stored reason stays.
  view.workspace.pending_reason = view.pending->detail;
  placement::TimeToGpuInputs in;
  in.reason = *view.pending;
  if (auto it = timing.node_start.find(in.reason.pool); it != timing.node_start.end()) {
    in.node_start = placement::MeasuredTime{it->second.median, it->second.samples};
  }
  if (auto it = timing.driver_install.find({in.reason.pool, in.reason.kernel});
      it != timing.driver_install.end()) {
    in.driver_install = placement::MeasuredTime{it->second.median, it->second.samples};
  }
  in.default_node_start = options_.default_node_start;
  in.default_driver_install = options_.default_driver_install;
  in.now = clock_();
  placement::TimeToGpu estimate = placement::EstimateTimeToGpu(in);
  view.estimated_wait = estimate.estimate;
  view.estimate_basis = std::move(estimate.basis);
  return view;
}

absl::StatusOr<CachedSettings> Scheduler::ReadSettings(const std::string& project_id,
                                                       const std::string& org_id,
                                                       int64_t* org_gpus_held) {
  absl::StatusOr<StoredSettings> stored =
      placement_->ReadSettings(project_id, org_id, org_gpus_held != nullptr);
  if (!stored.ok()) return stored.status();
  if (org_gpus_held != nullptr) *org_gpus_held = stored->org_gpus_held;
  CachedSettings read{std::move(stored->project), stored->project_version, std::move(stored->org),
                      stored->org_version};
  settings_.Put(read);
  return read;
}

std::optional<CachedSettings> Scheduler::SettingsFor(const std::string& project_id,
                                                     const std::string& org_id) {
  if (std::optional<CachedSettings> cached = settings_.Get(project_id, org_id)) return cached;
  absl::StatusOr<CachedSettings> read = ReadSettings(project_id, org_id, nullptr);
  if (!read.ok()) return std::nullopt;
  return *read;
}

Scheduler::PendingLimits Scheduler::LimitsOf(const core::Workspace& w) {
  PendingLimits limits;
  // Read, not cached: the answer must reflect a settings change the caller
  // just made, whichever replica it made it on. Unreadable (database down):
  // these layers are not judged.
  int64_t held = 0;
  absl::StatusOr<CachedSettings> settings = ReadSettings(w.project_id, w.org_id, &held);
  if (!settings.ok()) return limits;
  if (auto rule = core::ForbiddingRule(w.class_id, settings->project, settings->org)) {
    limits.policy_denial = absl::StrCat("class ", w.class_id, " is ", *rule);
  }
  if (settings->org.gpu_quota >= 0) {
    limits.quota = placement::QuotaFigures{held, settings->org.gpu_quota};
  }
  return limits;
}

std::optional<placement::PendingReason> Scheduler::ExplainPending(const std::string& class_id,
                                                                  int queue_position,
                                                                  ScalingViews scaling,
                                                                  const PendingLimits& limits) const {
  const std::shared_ptr<const ClusterView> view = View();
  const core::WorkspaceClass* cls = view->catalog->FindClass(class_id);
  if (cls == nullptr) return std::nullopt;
  placement::PendingContext ctx;
  ctx.quota = limits.quota;
  ctx.policy_denial = limits.policy_denial;
  ctx.cls = cls;
  ctx.pools = &view->catalog->pools;
  ctx.snapshot = &view->snapshot;
  ctx.driver_policy = &view->catalog->driver_policy;
  ctx.scaling = std::move(scaling);
  ctx.queue_position = queue_position;
  // The workspaces ahead take their share first (all of the queue when this
  // one is not queued yet).
  for (const PendingDemand& entry : view->pending) {
    if (queue_position > 0 && static_cast<int>(ctx.ahead.size()) + 1 >= queue_position) break;
    ctx.ahead.push_back(view->catalog->FindClass(entry.class_id));
  }
  ctx.now = clock_();
  return placement::ExplainPending(ctx);
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

absl::StatusOr<PlacementInputs> Scheduler::InputsFor(const PlaceRequest& request, bool read) {
  if (!read) {
    std::optional<CachedSettings> cached = settings_.Get(request.project_id, request.org_id);
    bool known;
    int64_t generation;
    {
      absl::MutexLock lock(&mu_);
      known = KnownVersionLocked(request.workspace_id) > 0;
      generation = catalog_generation_;
    }
    // The hot path: a workspace this replica has never seen (new, as far as
    // it can tell: if not, the commit's guard says so and the next attempt
    // reads), cached settings, no GPU quota to count.
    if (cached && !known && cached->org.gpu_quota < 0) {
      PlacementInputs in;
      in.project = std::move(cached->project);
      in.project_version = cached->project_version;
      in.org = std::move(cached->org);
      in.org_version = cached->org_version;
      in.catalog_generation = generation;
      return in;
    }
  }
  absl::StatusOr<PlacementInputs> in = placement_->ReadInputs(request);
  if (in.ok() && !(in->existing && core::IsActive(in->existing->workspace))) {
    settings_.Put({in->project, in->project_version, in->org, in->org_version});
  }
  return in;
}

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

absl::StatusOr<WorkspaceView> Scheduler::Place(const PlaceRequest& request) {
  absl::Time start = clock_();
  std::string class_label = "unresolved";
  auto finish = [&](absl::StatusOr<WorkspaceView> result, absl::string_view outcome) {
    metrics_->ObservePlacement(class_label, result.ok() ? outcome : "error", clock_() - start);
    return result;
  };
  // Set once this call has caught up with the feed: negative answers wait
  // for it, positive ones are confirmed by the commit's guards.
  bool confirmed = false;
  auto confirm = [&]() -> absl::Status {
    confirmed = true;
    return CatchUp();
  };
  bool read = false;  // After a refused commit: read what memory may have wrong.
  for (int attempt = 0; attempt < options_.place_attempts; ++attempt) {
    absl::StatusOr<PlacementInputs> in = InputsFor(request, read);
    if (!in.ok()) return finish(in.status(), "error");
    // Idempotent: the same id answers with the same placement (or queue slot).
    if (in->existing && core::IsActive(in->existing->workspace)) {
      class_label = in->existing->workspace.class_id;
      return finish(ViewOfStored(*in->existing), "repeated");
    }
    // A lost workspace that still holds its old node's capacity is stopped
    // (freed) first, then restarted like any stopped one.
    if (in->existing && !in->existing->released) {
      if (auto stopped = StopAndMirror(request.workspace_id); !stopped.ok()) {
        return finish(stopped.status(), "error");
      }
      read = true;
      continue;
    }
    auto [catalog, generation] = CatalogNow();
    if (in->catalog_generation > generation) {
      if (absl::Status s = confirm(); !s.ok()) return finish(s, "error");
      std::tie(catalog, generation) = CatalogNow();
    }

    std::string previous = request.restart && in->existing ? in->existing->workspace.class_id : "";
    auto resolution = core::ResolveClass(
        {request.org_id, request.project_id, request.class_id, previous}, *catalog, in->project,
        in->org);
    if (!resolution.ok()) {
      if (!confirmed) {
        if (absl::Status s = confirm(); !s.ok()) return finish(s, "error");
        read = true;
        continue;
      }
      return finish(resolution.status(), "refused");
    }
    const core::WorkspaceClass* cls = catalog->FindClass(resolution->class_id);
    class_label = cls->id;
    if (cls->is_gpu() && in->org.gpu_quota >= 0 &&
        in->org_gpus + cls->gpu.count > in->org.gpu_quota) {
      return finish(QuotaExceeded(request.org_id, in->org_gpus, in->org.gpu_quota, cls->id,
                                  cls->gpu.count),
                    "refused");
    }
    core::Workspace w = NewRecord(request, *cls, *resolution);

    HeldDecision held = DecideAndHold(*cls, *catalog, w.id);
    if (held.id_busy) {
      // The same id is being placed by a concurrent request (a caller that
      // gave up and retried): let it win, and wake when its commit is
      // mirrored rather than after a guess at how long a commit takes.
      int64_t known;
      {
        absl::MutexLock lock(&mu_);
        known = KnownVersionLocked(w.id);
      }
      WaitForChange(w.id, known, absl::Seconds(1));
      read = true;
      continue;
    }
    placement::Decision& decision = held.decision;
    if (!std::holds_alternative<placement::Placed>(decision) && !confirmed) {
      // Nodes or capacity added on another replica may not have reached us.
      if (absl::Status s = confirm(); !s.ok()) return finish(s, "error");
      continue;
    }
    if (auto* never = std::get_if<placement::Never>(&decision)) {
      return finish(core::PreconditionError(
                        core::ErrorReason::kClassUnplaceable, "CAPACITY",
                        absl::StrCat("class/", cls->id),
                        absl::StrCat("class ", cls->id, " can never be placed: ", never->reason),
                        {{"class", cls->id}}),
                    "never");
    }
    // What the decision rests on, for the commit to confirm.
    store::WorkspaceWrite write;
    write.from = {in->existing ? in->existing->version : 0, false};
    write.catalog_generation = generation;
    write.project_settings_version = in->project_version;
    write.org_settings_version = in->org_version;
    if (std::holds_alternative<placement::NotNow>(decision)) {
      w.state = core::WorkspaceState::kPending;
      // Behind the whole queue: not queued yet. The quota and policy let it in.
      ScalingViews scaling = scaling_views_ ? scaling_views_() : ScalingViews();
      if (auto reason = ExplainPending(cls->id, 0, std::move(scaling), {})) w.pending_reason = reason->detail;
      write.kind = store::WorkspaceWrite::Kind::kSavePending;
      write.workspace = w;
      store::WriteOutcome saved = placement_->Write(std::move(write));
      if (absl::IsAborted(saved.status)) {  // Something changed meanwhile: read, retry.
        read = true;
        if (absl::Status s = CatchUp(); !s.ok()) return finish(s, "error");
        continue;
      }
      if (!saved.status.ok()) return finish(saved.status, "error");
      w.created_at = clock_();
      MirrorCommitted(w, saved.version, /*released=*/false);
      log::Info("workspace pending", {{"workspace", w.id}, {"class", w.class_id},
                                      {"reason", w.pending_reason}});
      return finish(ViewOfStored({w, saved.version, false}), "pending");
    }

    const auto& placed = std::get<placement::Placed>(decision);
    auto built = BuildPlacement(*cls, held.node, held.pool, placed.gpu_indices);
    if (!built.ok()) {
      absl::MutexLock lock(&mu_);
      ReleaseTentative(w.id);
      return finish(built.status(), "error");
    }
    SetPlaced(w, placed, *built);
    write.kind = store::WorkspaceWrite::Kind::kPlace;
    write.workspace = w;
    store::WriteOutcome committed = placement_->Write(std::move(write));
    if (committed.status.ok()) {
      w.placed_at = w.created_at = PlacedAt(committed, clock_());
      MirrorCommitted(w, committed.version, /*released=*/false);
      absl::StatusOr<WorkspaceView> view = ViewOfStored({w, committed.version, false});
      return finish(std::move(view), "placed");
    }
    {
      absl::MutexLock lock(&mu_);
      ReleaseTentative(w.id);
    }
    if (absl::IsResourceExhausted(committed.status)) return finish(committed.status, "refused");
    if (!absl::IsAborted(committed.status)) return finish(committed.status, "error");
    // Lost a race (another replica, or a node that changed): apply what the
    // others committed and retry after a short random pause, so racing
    // replicas spread out.
    log::Info("placement lost a race; catching up",
              {{"workspace", w.id}, {"error", std::string(committed.status.message())}});
    MarkContended(w.node_name);
    read = true;
    if (absl::Status s = CatchUp(); !s.ok()) return finish(s, "error");
    absl::SleepFor(absl::Milliseconds(1 + absl::ToUnixNanos(clock_()) % (5 * (attempt + 1))));
  }
  return finish(absl::AbortedError(absl::StrCat("placing ", request.workspace_id,
                                                " kept losing races; retry the request")),
                "error");
}

absl::StatusOr<store::WorkspaceRow> Scheduler::StopAndMirror(const std::string& id,
                                                             core::EndReason reason,
                                                             int64_t expected_version) {
  if (!core::IsStopReason(reason)) {
    return absl::InvalidArgumentError(absl::StrCat("a stop cannot end a workspace as \"",
                                                   core::EndReasonName(reason), "\""));
  }
  // A stop always wins: a refused batch (a deadlock, say) is the
  // database's to resolve, not the caller's to retry.
  store::WorkspaceWrite stop;
  stop.kind = store::WorkspaceWrite::Kind::kStop;
  stop.workspace.id = id;
  stop.end_reason = reason;
  stop.from.version = expected_version;
  store::WriteOutcome after = placement_->Write(stop);
  // A guarded stop that finds a newer record must not be repeated on it.
  const int attempts = expected_version != 0 ? 1 : options_.place_attempts;
  for (int attempt = 1; absl::IsAborted(after.status) && attempt < attempts; ++attempt) {
    after = placement_->Write(stop);
  }
  if (!after.status.ok()) return after.status;
  absl::MutexLock lock(&mu_);
  ApplyWorkspaceLocked(*after.row);  // Notes the pool its capacity returned to.
  return *after.row;
}

absl::StatusOr<WorkspaceView> Scheduler::StopWorkspace(const std::string& id,
                                                        core::EndReason reason) {
  auto after = StopAndMirror(id, reason);
  if (!after.ok()) return after.status();
  return ViewOfStored(*after);
}

absl::StatusOr<WorkspaceView> Scheduler::GetWorkspace(const std::string& id) {
  absl::StatusOr<std::optional<store::WorkspaceRow>> stored = placement_->LoadWorkspace(id);
  if (!stored.ok()) return stored.status();
  if (!*stored) return core::NotFoundError(core::ErrorReason::kWorkspaceNotFound, "workspace", id);
  return ViewOfStored(**stored);
}

absl::StatusOr<WorkspaceView> Scheduler::RefreshWorkspace(const std::string& id,
                                                          const WorkspaceView* last) {
  if (last != nullptr && last->workspace.id == id) {
    int64_t known;
    {
      absl::MutexLock lock(&mu_);
      known = KnownVersionLocked(id);
    }
    if (known <= last->version) return ViewOfStored({last->workspace, last->version, false});
  }
  return GetWorkspace(id);
}

absl::StatusOr<core::Page<WorkspaceView>> Scheduler::ListWorkspaces(
    const store::WorkspaceFilter& filter, const core::PageRequest& page) {
  absl::StatusOr<std::vector<core::Workspace>> stored =
      placement_->ListWorkspaces(filter, page.after, page.size + 1);
  if (!stored.ok()) return stored.status();
  std::vector<WorkspaceView> views;
  LimitsMemo limits;
  for (const auto& w : *stored) {
    auto view = ViewOfStored({w, 0, false}, &limits);
    if (!view.ok()) return view.status();
    views.push_back(std::move(*view));
  }
  return core::PageFromRows(std::move(views), page,
                            [](const WorkspaceView& view) { return view.workspace.id; });
}

void Scheduler::DrainPending(DrainScope scope) {
  // The pools asked for stay in drain_pools_ (a set of pool names), for the
  // day this replica becomes the placer; its first full drain comes within
  // --refresh_interval of that.
  if (options_.drains_queue && !options_.drains_queue()) return;
  absl::MutexLock drain_lock(&drain_mu_);  // One drain at a time.
  std::vector<std::string> ids;
  {
    absl::MutexLock lock(&mu_);
    const bool everything = scope == DrainScope::kEverything || drain_everything_;
    absl::flat_hash_set<std::string> pools;
    pools.swap(drain_pools_);
    drain_everything_ = false;
    // Only work that may use a pool whose capacity came back: while half the
    // fleet is lost, the GPU queue is not re-decided at every CPU stop.
    for (const auto* entry : pending_.Ordered()) {
      if (everything || absl::c_any_of(entry->pools, [&](const std::string& pool) {
            return pools.contains(pool);
          })) {
        ids.push_back(entry->workspace);
      }
    }
  }
  if (ids.empty()) return;  // Nothing to try: the reasons stand.
  // Decided in queue order, each holding what it chose so the next one
  // decides on what is left, then committed a batch at a time: a drain
  // that places many workspaces costs a few commits, not one each.
  std::vector<QueuePlacement> batch;
  for (const auto& id : ids) {
    if (stopping()) break;
    queue_decisions_++;
    absl::StatusOr<std::optional<QueuePlacement>> prepared = PrepareQueuePlacement(id);
    if (!prepared.ok()) {
      log::Warning("pending workspace not placed", {{"workspace", id},
                                                   {"error", std::string(prepared.status().message())}});
    } else if (prepared->has_value()) {
      batch.push_back(**std::move(prepared));
      if (batch.size() >= kDrainBatch) CommitQueuePlacements(batch);
    }
  }
  CommitQueuePlacements(batch);
  if (stopping()) return;
  // What is left waits: each is told what stops it, in queue order, in one
  // pass (placement/pending_reason.h).
  ScalingViews scaling = scaling_views_ ? scaling_views_() : ScalingViews();
  absl::MutexLock lock(&mu_);
  placement::PendingContext ctx;
  ctx.pools = &catalog_->pools;
  ctx.snapshot = &snapshot_;
  ctx.driver_policy = &catalog_->driver_policy;
  ctx.scaling = std::move(scaling);
  ctx.now = clock_();
  std::vector<placement::PendingEntry> entries;
  std::vector<const core::WorkspaceClass*> classes;
  for (const placement::PendingEntry* entry : pending_.Ordered()) {
    entries.push_back(*entry);
    classes.push_back(catalog_->FindClass(entry->class_id));
  }
  std::vector<placement::PendingReason> reasons = placement::ExplainQueue(ctx, classes);
  for (size_t i = 0; i < entries.size(); ++i) {
    entries[i].reason = std::move(reasons[i].detail);
    pending_.Upsert(std::move(entries[i]));
  }
}

absl::StatusOr<std::optional<Scheduler::QueuePlacement>> Scheduler::PrepareQueuePlacement(
    const std::string& id) {
  // A class the project's or org's policy forbids since it was queued stays
  // pending (its reason says so) until allowed again or stopped.
  core::Workspace queued;
  {
    absl::MutexLock lock(&mu_);
    const placement::PendingEntry* entry = pending_.Find(id);
    if (entry == nullptr) return std::nullopt;
    queued.project_id = entry->project;
    queued.org_id = entry->org;
    queued.class_id = entry->class_id;
  }
  if (std::optional<CachedSettings> cached = SettingsFor(queued.project_id, queued.org_id)) {
    if (core::ForbiddingRule(queued.class_id, cached->project, cached->org)) return std::nullopt;
  }
  placement::Decision decision;
  core::NodeInfo node;
  core::NodePool pool;
  core::WorkspaceClass cls;
  core::Workspace w;
  store::DecidedFrom from;
  int64_t generation = 0;
  {
    absl::MutexLock lock(&mu_);
    const placement::PendingEntry* entry = pending_.Find(id);
    if (entry == nullptr) return std::nullopt;  // Placed or stopped meanwhile.
    const core::WorkspaceClass* found = catalog_->FindClass(entry->class_id);
    if (found == nullptr) return std::nullopt;  // Class gone: stays pending, visible.
    cls = *found;
    decision = DecideLocked(cls, *catalog_);
    if (auto* not_now = std::get_if<placement::NotNow>(&decision)) {
      // Its reason is set once the whole queue was tried (DrainPending).
      placement::PendingEntry updated = *entry;
      updated.pools = not_now->pools;
      pending_.Upsert(std::move(updated));
      StateChangedLocked();
      return std::nullopt;
    }
    auto* placed = std::get_if<placement::Placed>(&decision);
    if (placed == nullptr) return std::nullopt;  // Never: the catalog changed; stays visible.
    if (!HoldTentatively(id, placed->node, placed->gpu_indices, placed->resources).ok()) {
      return std::nullopt;
    }
    node = snapshot_.FindNode(placed->node)->info;
    pool = *catalog_->FindPool(placed->pool);
    // The queue placement lands only on the pending record it was decided
    // for: a stop (or any change) since then bumps the version and wins.
    from = {KnownVersionLocked(id), /*pending=*/true};
    w.id = id;
    w.org_id = entry->org;
    w.class_id = entry->class_id;
    w.priority = entry->priority;
    w.created_at = entry->since;
    generation = catalog_generation_;
  }
  const auto& placed = std::get<placement::Placed>(decision);
  auto built = BuildPlacement(cls, node, pool, placed.gpu_indices);
  if (!built.ok()) {
    absl::MutexLock lock(&mu_);
    ReleaseTentative(id);
    return built.status();
  }
  SetPlaced(w, placed, *built);
  store::WorkspaceWrite write;
  write.kind = store::WorkspaceWrite::Kind::kQueuePlace;
  write.workspace = w;
  write.from = from;
  write.catalog_generation = generation;
  return QueuePlacement{w, placed, std::move(write)};
}

absl::Status Scheduler::FinishQueuePlacement(QueuePlacement& prepared,
                                             const store::WriteOutcome& committed) {
  core::Workspace& w = prepared.workspace;
  const std::string& id = w.id;
  const placement::Placed& placed = prepared.placed;
  if (committed.status.ok()) {
    w.placed_at = PlacedAt(committed, clock_());
    MirrorCommitted(w, committed.version, /*released=*/false);
    log::Info("pending workspace placed", {{"workspace", id}, {"node", placed.node}});
    metrics_->ObservePlacement(w.class_id, "placed_from_queue", absl::ZeroDuration());
    return absl::OkStatus();
  }
  absl::MutexLock lock(&mu_);
  ReleaseTentative(id);
  if (absl::IsResourceExhausted(committed.status)) {
    if (const placement::PendingEntry* entry = pending_.Find(id)) {
      placement::PendingEntry updated = *entry;
      updated.reason = std::string(committed.status.message());
      pending_.Upsert(std::move(updated));
    }
    return absl::OkStatus();
  }
  if (absl::IsAborted(committed.status)) {
    MarkContendedLocked(w.node_name);
    follower_->Notify();  // Stopped or changed elsewhere: the feed says how.
    return absl::OkStatus();
  }
  return committed.status;
}

void Scheduler::CommitQueuePlacements(std::vector<QueuePlacement>& batch) {
  if (batch.empty()) return;
  std::vector<store::WorkspaceWrite> writes;
  for (QueuePlacement& prepared : batch) writes.push_back(std::move(prepared.write));
  std::vector<store::WriteOutcome> outcomes = placement_->WriteAll(std::move(writes));
  for (size_t i = 0; i < batch.size(); ++i) {
    absl::Status status = FinishQueuePlacement(batch[i], outcomes[i]);
    if (!status.ok() && !absl::IsUnavailable(status)) {
      log::Warning("pending workspace not placed", {{"workspace", batch[i].workspace.id},
                                                   {"error", std::string(status.message())}});
    }
  }
  batch.clear();
}

}  // namespace wsched::scheduler
