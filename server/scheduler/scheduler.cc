// Building and wiring the parts, start-up, the background loop (lost
// nodes, change-log pruning, the queue drain's timer), and watches.
#include "server/scheduler/scheduler.h"

#include "server/watch/database_history.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "server/log/log.h"
#include "server/placement/resources.h"
#include "server/replica/database_stores.h"
#include "server/scheduler/mirror_feed_sink.h"
#include "server/store/change_feed.h"
#include "server/store/unit_of_work.h"

namespace wsched::scheduler {
namespace {

// Every placement waits for one batch: a batch this slow is a latency spike
// every caller of the moment saw, so it is worth a line with its shape
// (like PostgreSQL's log_min_duration_statement).
constexpr absl::Duration kSlowCommitBatch = absl::Milliseconds(50);

void LogIfSlow(const store::CommitBatcher::BatchReport& batch) {
  if (batch.duration < kSlowCommitBatch) return;
  log::Warning("slow commit batch",
               {{"duration_ms", absl::StrCat(absl::ToDoubleMilliseconds(batch.duration))},
                {"oldest_wait_ms", absl::StrCat(absl::ToDoubleMilliseconds(batch.oldest_wait))},
                {"writes", absl::StrCat(batch.writes)},
                {"statements", absl::StrCat(batch.statements)},
                {"round_trips", absl::StrCat(batch.round_trips)},
                {"committed", batch.committed ? "true" : "false"}});
}

}  // namespace

struct Scheduler::OwnedStores {
  OwnedStores(store::Database* db, metrics::Metrics* metrics, const SchedulerOptions& options)
      : placement(db, {options.max_commit_batch, options.max_commit_wait, options.budget_interval},
                  [metrics](const store::CommitBatcher::BatchReport& batch) {
                    metrics->ObserveCommitBatch(batch.writes, batch.statements, batch.round_trips, batch.duration,
                                                batch.oldest_wait, batch.committed);
                    LogIfSlow(batch);
                  }),
        state(db),
        feed(db) {}
  replica::DatabasePlacementStore placement;
  replica::DatabaseStateStore state;
  replica::DatabaseFeedSource feed;
};

Scheduler::Scheduler(store::Database* db, metrics::Metrics* metrics, SchedulerOptions options)
    : Scheduler(std::make_unique<OwnedStores>(db, metrics, options), db, metrics, options) {}

Scheduler::Scheduler(std::unique_ptr<OwnedStores> owned, store::Database* db,
                     metrics::Metrics* metrics, SchedulerOptions options)
    : Scheduler({db, &owned->placement, &owned->state, &owned->feed}, metrics, options,
                core::WallClock()) {
  owned_ = std::move(owned);
}

namespace {

// What the inventory reads of the replica (node_inventory.h).
class InventoryReads : public inventory::NodeInventory::Mirror {
 public:
  explicit InventoryReads(const replica::ReplicaMirror* mirror) : mirror_(mirror) {}
  std::shared_ptr<const core::Catalog> CurrentCatalog() const override {
    return mirror_->CatalogNow().first;
  }
  std::shared_ptr<const replica::ClusterView> View() const override { return mirror_->View(); }
  Node MirroredNode(const std::string& name) const override {
    replica::ReplicaMirror::Node mirrored = mirror_->MirroredNode(name);
    return {std::move(mirrored.stored), std::move(mirrored.holders), mirrored.state_since,
            mirrored.holds_work};
  }

 private:
  const replica::ReplicaMirror* const mirror_;
};

}  // namespace

Scheduler::Scheduler(SchedulerStores stores, metrics::Metrics *metrics,
                     SchedulerOptions options, core::Clock clock)
    : stores_(stores), metrics_(metrics), options_(options),
      clock_(std::move(clock)), usage_(clock_),
      credentials_(inventory::CredentialAdmin::LoaderOver(stores.db)),
      credential_admin_(stores.db, &credentials_),
      fanout_(options.watch_bookmark_interval),
      node_fanout_(options.watch_bookmark_interval) {
  // Each part after what it reads and writes through.
  mirror_ = std::make_unique<replica::ReplicaMirror>(
      replica::ReplicaMirror::Listeners{&watches_, &settings_, &usage_, &drains_},
      options.ended_window, clock_);
  feed_sink_ = std::make_unique<MirrorFeedSink>(stores_.state, mirror_.get(), &credentials_, &usage_);
  follower_ = std::make_unique<replica::FeedFollower>(stores_.feed, feed_sink_.get(), metrics, clock_);
  inventory_reads_ = std::make_unique<InventoryReads>(mirror_.get());
  inventory_ = std::make_unique<inventory::NodeInventory>(
      inventory::NodeInventory::Parts{stores_.db, inventory_reads_.get(), follower_.get(), &drains_,
                                      &usage_, &credential_admin_, metrics},
      inventory::NodeInventory::Options{options.node_lost_after, options.gpu_healthy_for}, clock_);
  rollouts_ = std::make_unique<inventory::DriverRollouts>(
      inventory::DriverRollouts::Parts{stores_.db, inventory_reads_.get(), inventory_.get(),
                                       follower_.get(), &drains_},
      clock_);
  pipeline_ = std::make_unique<pipeline::PlacementPipeline>(
      pipeline::PlacementPipeline::Parts{stores_.placement, mirror_.get(), follower_.get(),
                                         &drains_, &watches_, &settings_, inventory_.get(),
                                         metrics},
      pipeline::PlacementPipeline::Options{
          options_.place_attempts,
          {options_.default_node_start, options_.default_driver_install,
           options_.scaling_batching_window},
          options_.drains_queue,
          options_.estimate_accuracy_window},
      clock_);
  WireIdleMonitor();
}

void Scheduler::WireIdleMonitor() {
  idle_actions_ = std::make_unique<idle::IdleActions>(stores_.db, mirror_.get(), follower_.get(),
                                                &pipeline_->stops());
  idle::IdleMonitor::Options options;
  options.stale_after = options_.idle_stale_after > absl::ZeroDuration()
                            ? options_.idle_stale_after
                            : 3 * options_.heartbeat_interval;
  idle_ = std::make_unique<idle::IdleMonitor>(idle_actions_.get(), options, clock_);
  // Called by the heartbeat after UsageAccounting's lock, never under ours.
  usage_.SetObserver(
      [monitor = idle_.get()](const usage::UsageAccounting::Report& report) { monitor->Observe(report); });
}

Scheduler::~Scheduler() { Stop(); }

absl::Status Scheduler::Start() {
  if (stores_.db == nullptr) return absl::FailedPreconditionError("a scheduler without a database cannot run");
  // Listen first, then load: an entry committed in between is read from the
  // log after the load, not missed.
  listener_ = std::make_unique<store::ChangeListener>(stores_.db->url(), stores_.db->bounds().probe,
                                                     [this] { follower_->Notify(); });
  (void)listener_->WaitUntilListening(absl::Seconds(5));
  if (absl::Status loaded = follower_->CatchUp(); !loaded.ok()) return loaded;
  follower_->StartFollowing(options_.feed_poll_interval, options_.feed_gap);
  StartHistoryFollowers();
  // Liveness reaches the database well inside the lost-node timeout.
  inventory_->liveness().StartFlushing(std::clamp(options_.node_lost_after / 10, absl::Milliseconds(100),
                                     absl::Seconds(1)));
  loop_ = std::thread([this] { Loop(); });
  idle_->Start();
  return absl::OkStatus();
}

void Scheduler::StartHistoryFollowers() {
  const watch::FollowOptions follow{options_.feed_poll_interval,
                                    options_.feed_gap};
  history_ = std::make_unique<watch::DatabaseHistory>(stores_.db);
  history_follower_ = std::make_unique<watch::HistoryFollower>(
      history_.get(), &fanout_, follow, clock_);
  history_follower_->Start();
  node_history_ = std::make_unique<watch::DatabaseNodeHistory>(stores_.db);
  node_history_follower_ = std::make_unique<watch::NodeHistoryFollower>(
      node_history_.get(), &node_fanout_, follow, clock_);
  node_history_follower_->Start();
  // One listener for both: each follower skips to the head while nobody
  // follows its kind.
  history_listener_ = std::make_unique<store::ChangeListener>(
      stores_.db->url(), stores_.db->bounds().probe,
      [this] {
        history_follower_->Notify();
        node_history_follower_->Notify();
      },
      store::ChangeListener::Hears::kEveryReplica);
}

void Scheduler::Stop() {
  if (drains_.stopping()) return;
  drains_.Stop();
  watches_.Stop();
  idle_->Stop();  // Its writes go through the store and the mirror.
  if (loop_.joinable()) loop_.join();
  listener_.reset();
  history_listener_.reset();
  if (history_follower_) history_follower_->Stop();
  if (node_history_follower_)
    node_history_follower_->Stop();
  follower_->StopFollowing();
  inventory_->liveness().StopFlushing();
}

absl::Status Scheduler::ReloadCatalog() {
  // The apply published a catalog entry; catching up applies it (and
  // anything committed before it).
  absl::Status caught_up = CatchUp();
  drains_.Everything();  // New pools or classes may let pending work fit.
  return caught_up;
}


void Scheduler::Loop() {
  // The first check waits one full timeout: when no replica served for a
  // while (an upgrade, a restore) every heartbeat on record is old, and
  // agents need one interval to reach a replica again before their nodes,
  // and the workspaces on them, may be called lost.
  absl::Time next_lost_check = clock_() + options_.node_lost_after;
  absl::Time next_drain = clock_();
  absl::Time next_prune = clock_();
  absl::Time next_accuracy = clock_();
  const absl::Duration lost_period =
      std::max(absl::Milliseconds(200), options_.node_lost_after / 4);
  while (true) {
    const bool drain = drains_.Await(absl::Milliseconds(100));
    if (drains_.stopping()) return;
    mirror_->ExpireEnded();
    const absl::Time now = clock_();
    if (now >= next_lost_check) {
      next_lost_check = now + lost_period;
      if (absl::Status s = inventory_->DetectLostNodes(); !s.ok()) {
        log::Warning("lost-node check failed", {{"error", std::string(s.message())}});
      }
    }
    if (now >= next_prune) {
      next_prune = now + absl::Minutes(1);
      absl::Status pruned = store::UnitOfWork::Run(*stores_.db, "pruning the change log",
                                                   [&](store::UnitOfWork& unit) -> absl::Status {
        unit.change_log().Prune(options_.feed_retention);
        return absl::OkStatus();
      });
      if (!pruned.ok()) log::Warning("pruning the change log failed", {{"error", std::string(pruned.message())}});
    }
    if (now >= next_accuracy) {
      // A grouped read of the window's checked placements (an index on when
      // they were checked): cheap enough for each replica every few seconds.
      next_accuracy = now + absl::Seconds(10);
      pipeline_->estimates().Report();
    }
    if (now >= next_drain) {
      next_drain = now + options_.refresh_interval;
      pipeline_->drain().Drain(pipeline::QueueDrain::Scope::kEverything);
    } else if (drain) {
      pipeline_->drain().Drain(pipeline::QueueDrain::Scope::kWhatChanged);
    }
  }
}

int64_t Scheduler::WaitForChange(const std::string& workspace_id, int64_t after,
                                 absl::Duration timeout) {
  return watches_.Wait(workspace_id, after, timeout,
                       [&] { return mirror_->KnownVersion(workspace_id); });
}

}  // namespace wsched::scheduler
