#include "server/app/placer_election.h"

#include "server/log/log.h"
#include "server/store/change_feed.h"

namespace wsched::app {

PlacerElection::PlacerElection(std::string database_url, PlacerElectionOptions options,
                               metrics::Metrics* metrics)
    : options_(std::move(options)), metrics_(metrics), lock_(std::move(database_url), options_.lease) {}

PlacerElection::~PlacerElection() { Stop(); }

void PlacerElection::Start(std::string address) {
  address_ = std::move(address);
  PollOnce();
  thread_ = std::thread([this] { Run(); });
}

void PlacerElection::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  if (!thread_.joinable()) return;
  thread_.join();
  bool was_placer = false;
  {
    absl::MutexLock lock(&mu_);
    was_placer = view_.self;
  }
  lock_.Release();
  // A front door that stops has nothing to tell; a placer says it let go.
  if (was_placer) Publish({});
}

PlacerView PlacerElection::Current() const {
  PlacerView view;
  {
    absl::MutexLock lock(&mu_);
    view = view_;
  }
  if (view.self && !lock_.Holds()) {
    // The poll that would say so is still waiting on the database.
    view.self = false;
    view.address.clear();
  }
  return view;
}

void PlacerElection::Recheck() {
  absl::MutexLock lock(&mu_);
  recheck_ = true;
}

void PlacerElection::Run() {
  while (true) {
    {
      absl::MutexLock lock(&mu_);
      auto woken = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stopping_ || recheck_; };
      mu_.AwaitWithTimeout(absl::Condition(&woken), options_.interval);
      if (stopping_) return;
      recheck_ = false;
    }
    PollOnce();
  }
}

void PlacerElection::PollOnce() {
  auto poll = lock_.Poll(store::ReplicaId(), address_);
  PlacerView view;
  if (poll.ok() && poll->placer.has_value()) {
    view.replica = poll->placer->replica;
    view.address = poll->placer->address;
  }
  // Holding the lock, not the row, makes the placer: a row that still
  // names this replica after its session ended is a successor's to fix on
  // its first poll.
  view.self = poll.ok() && poll->held;
  if (!view.self && view.replica == store::ReplicaId()) view.address.clear();
  Publish(std::move(view));
}

void PlacerElection::Publish(PlacerView view) {
  PlacerView before;
  {
    absl::MutexLock lock(&mu_);
    before = std::exchange(view_, view);
  }
  if (metrics_ != nullptr) metrics_->SetPlacer(view.self);
  if (view.self != before.self) {
    log::Info(view.self ? "placement lock acquired: this replica places"
                        : "placement lock given up",
              {{"replica", store::ReplicaId()}, {"address", address_}});
  } else if (!view.self && view.address != before.address) {
    log::Info("placer", {{"replica", view.replica},
                         {"address", view.address.empty() ? "unknown" : view.address}});
  }
}

const std::string& PlacerElection::Self() { return store::ReplicaId(); }

}  // namespace wsched::app
