// Heartbeats that change nothing the scheduler uses are liveness only: they
// are collected here and written in one statement per flush period for all
// nodes heard from, instead of a node-row rewrite (and a wake-up of every
// other replica) per heartbeat. Lost-node detection reads what is written,
// on the database clock.
#ifndef WSCHED_SERVER_INVENTORY_LIVENESS_RECORDER_H_
#define WSCHED_SERVER_INVENTORY_LIVENESS_RECORDER_H_

#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace wsched::inventory {

class LivenessRecorder {
 public:
  // Writes the liveness of `nodes` (each once) durably.
  using Writer = std::function<absl::Status(const std::vector<std::string>& nodes)>;

  explicit LivenessRecorder(Writer writer) : writer_(std::move(writer)) {}
  ~LivenessRecorder();  // Stops flushing, after a last flush.
  LivenessRecorder(const LivenessRecorder&) = delete;
  LivenessRecorder& operator=(const LivenessRecorder&) = delete;

  void Record(const std::string& node);
  // Writes everything recorded since the last flush in one call; on failure
  // the nodes are kept for the next one.
  absl::Status Flush();
  // Flushes every `period` on a thread of its own.
  void StartFlushing(absl::Duration period);
  // Ends the flushing thread after a last flush.
  void StopFlushing();

 private:
  const Writer writer_;
  absl::Mutex flush_mu_;  // One flush at a time, outside mu_.
  absl::Mutex mu_;
  absl::flat_hash_set<std::string> heard_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace wsched::inventory

#endif  // WSCHED_SERVER_INVENTORY_LIVENESS_RECORDER_H_
