#include "server/scheduler/scaling_election.h"

#include "server/log/log.h"
#include "server/store/change_feed.h"

namespace wsched::scheduler {

ScalingElection::ScalingElection(std::string database_url, int64_t key, absl::Duration interval,
                                 store::LeaseOptions lease, metrics::Metrics* metrics)
    : interval_(interval), metrics_(metrics), lock_(std::move(database_url), key, lease) {}

ScalingElection::~ScalingElection() { Stop(); }

void ScalingElection::Start() {
  ProbeOnce();
  thread_ = std::thread([this] { Run(); });
}

void ScalingElection::Stop() {
  {
    absl::MutexLock lock(&mu_);
    if (stopping_) return;
    stopping_ = true;
  }
  if (thread_.joinable()) thread_.join();
  lock_.Release();
  Announce(false, "scaling leadership released: shutting down");
}

std::optional<int64_t> ScalingElection::LeaderTerm() const {
  absl::MutexLock lock(&mu_);
  if (!announced_ || !lock_.Holds()) return std::nullopt;
  return term_;
}

void ScalingElection::Run() {
  while (true) {
    {
      absl::MutexLock lock(&mu_);
      mu_.AwaitWithTimeout(absl::Condition(&stopping_), interval_);
      if (stopping_) return;
    }
    ProbeOnce();
  }
}

void ScalingElection::ProbeOnce() {
  // A lease that ran out while this thread waited (a paused process) is
  // told before the probe that may renew it.
  if (!lock_.Holds()) Announce(false, "lost scaling leadership: stepping down");
  // At once, whatever the reason (the lock taken, the session lost or
  // silent past the probe bound): a leader that cannot prove its lock does
  // not act.
  const bool held = lock_.TryAcquire() && lock_.Holds();
  Announce(held, "lost scaling leadership: stepping down");
}

void ScalingElection::Announce(bool leads, const char* lost_message) {
  // Only the probing thread announces (Stop, after it has ended), so the
  // state read here cannot change before it is written below.
  {
    absl::MutexLock lock(&mu_);
    if (announced_ == leads) return;
    // Stopping acts first and tells after; starting tells first and acts
    // after: no log line or gauge ever shows less leading than there is.
    if (!leads) announced_ = false;
  }
  if (metrics_ != nullptr) metrics_->SetScalingLeader(leads);
  if (leads) {
    log::Info("scaling leadership acquired", {{"replica", store::ReplicaId()}});
    absl::MutexLock lock(&mu_);
    announced_ = true;
    ++term_;
  } else {
    log::Warning(lost_message, {{"replica", store::ReplicaId()}});
  }
}

}  // namespace wsched::scheduler
