// WatchNodes (docs/api.md "Following every node"): the node face of a
// watch stream (watch_stream.h), with WatchWorkspaces' contract. Admins
// and the control plane follow every node; a node's agent only the node it
// speaks for; project owners none.
#ifndef WSCHED_SERVER_GRPC_WATCH_NODES_H_
#define WSCHED_SERVER_GRPC_WATCH_NODES_H_

#include "absl/status/statusor.h"
#include "server/grpc/principal.h"
#include "server/grpc/watch_stream.h"
#include "server/metrics/metrics.h"
#include "server/watch/node_change.h"
#include "wsched/v1/inventory.pb.h"

namespace wsched::grpc_api {

struct NodeStreamFace {
  using Kind = watch::NodeKind;
  using Request = v1::WatchNodesRequest;
  using Response = v1::WatchNodesResponse;
  static constexpr char kMethod[] = "/wsched.v1.InventoryService/WatchNodes";

  static absl::StatusOr<watch::NodeFilter> FilterFor(const Principal &who,
                                                     const Request &request,
                                                     metrics::Metrics *metrics);
  static void ChangeToProto(const watch::NodeChange &change, int64_t version,
                            v1::NodeChange *out);
  static watch::NodeFanout &FanoutOf(scheduler::Scheduler &scheduler) {
    return scheduler.node_fanout();
  }
  static watch::NodeHistorySource &HistoryOf(scheduler::Scheduler &scheduler) {
    return scheduler.node_history();
  }
};

extern template class WatchStream<NodeStreamFace>;
using NodesWatch = WatchStream<NodeStreamFace>;

} // namespace wsched::grpc_api

#endif // WSCHED_SERVER_GRPC_WATCH_NODES_H_
