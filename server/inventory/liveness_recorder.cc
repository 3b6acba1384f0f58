#include "server/inventory/liveness_recorder.h"

#include "server/log/log.h"

namespace wsched::inventory {

LivenessRecorder::~LivenessRecorder() { StopFlushing(); }

void LivenessRecorder::StopFlushing() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  if (thread_.joinable()) thread_.join();
  (void)Flush();
}

void LivenessRecorder::Record(const std::string& node) {
  absl::MutexLock lock(&mu_);
  heard_.insert(node);
}

absl::Status LivenessRecorder::Flush() {
  absl::MutexLock flush_lock(&flush_mu_);
  absl::flat_hash_set<std::string> batch;
  {
    absl::MutexLock lock(&mu_);
    batch.swap(heard_);
  }
  if (batch.empty()) return absl::OkStatus();
  absl::Status written = writer_(std::vector<std::string>(batch.begin(), batch.end()));
  if (!written.ok()) {
    absl::MutexLock lock(&mu_);
    heard_.insert(batch.begin(), batch.end());
  }
  return written;
}

void LivenessRecorder::StartFlushing(absl::Duration period) {
  thread_ = std::thread([this, period] {
    while (true) {
      {
        absl::MutexLock lock(&mu_);
        auto stop = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stopping_; };
        if (mu_.AwaitWithTimeout(absl::Condition(&stop), period)) return;
      }
      if (absl::Status s = Flush(); !s.ok()) {
        log::Warning("recording node liveness failed; retrying",
                     {{"error", std::string(s.message())}});
      }
    }
  });
}

}  // namespace wsched::inventory
