// The feed follower's sink for the replica mirror: reads the rows a batch
// of change-log entries names (only what the mirror does not know yet) and
// applies them, or replaces everything with a full load; the node
// credentials and the usage of removed nodes follow along.
#ifndef WSCHED_SERVER_SCHEDULER_MIRROR_FEED_SINK_H_
#define WSCHED_SERVER_SCHEDULER_MIRROR_FEED_SINK_H_

#include <vector>

#include "server/scheduler/feed_follower.h"
#include "server/scheduler/node_credentials.h"
#include "server/scheduler/replica_mirror.h"
#include "server/scheduler/stores.h"
#include "server/scheduler/usage_accounting.h"

namespace wsched::scheduler {

class MirrorFeedSink : public FeedSink {
 public:
  MirrorFeedSink(StateStore* state, ReplicaMirror* mirror, NodeCredentials* credentials,
                 UsageAccounting* usage)
      : state_(state), mirror_(mirror), credentials_(credentials), usage_(usage) {}
  absl::Status Apply(const std::vector<store::ChangeRecord>& records) override;
  absl::StatusOr<int64_t> Reload() override;

 private:
  StateStore* const state_;
  ReplicaMirror* const mirror_;
  NodeCredentials* const credentials_;
  UsageAccounting* const usage_;
};

}  // namespace wsched::scheduler

#endif  // WSCHED_SERVER_SCHEDULER_MIRROR_FEED_SINK_H_
