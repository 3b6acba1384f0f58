// The feed follower's sink for the replica mirror: reads the rows a batch
// of change-log entries names (only what the mirror does not know yet) and
// applies them, or replaces everything with a full load; the node
// credentials and the usage of removed nodes follow along.
#ifndef WSCHED_SERVER_SCHEDULER_MIRROR_FEED_SINK_H_
#define WSCHED_SERVER_SCHEDULER_MIRROR_FEED_SINK_H_

#include <vector>

#include "server/replica/feed_follower.h"
#include "server/inventory/node_credentials.h"
#include "server/replica/replica_mirror.h"
#include "server/replica/stores.h"
#include "server/usage/usage_accounting.h"

namespace wsched::scheduler {

class MirrorFeedSink : public replica::FeedSink {
 public:
  MirrorFeedSink(replica::StateStore* state, replica::ReplicaMirror* mirror,
                 inventory::NodeCredentials* credentials, usage::UsageAccounting* usage)
      : state_(state), mirror_(mirror), credentials_(credentials), usage_(usage) {}
  absl::Status Apply(const std::vector<store::ChangeRecord>& records) override;
  absl::StatusOr<int64_t> Reload() override;

 private:
  replica::StateStore* const state_;
  replica::ReplicaMirror* const mirror_;
  inventory::NodeCredentials* const credentials_;
  usage::UsageAccounting* const usage_;
};

}  // namespace wsched::scheduler

#endif  // WSCHED_SERVER_SCHEDULER_MIRROR_FEED_SINK_H_
