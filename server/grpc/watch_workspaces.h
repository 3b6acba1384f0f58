// One WatchWorkspaces stream (docs/api.md "Following every workspace"):
// authorize, then on a pool thread list (or check the resume point) and
// catch up from the change log until the stream has what the fanout has,
// join the fanout, and from then on write what its outbox holds, one
// message at a time. The fanout never waits for this stream: a stream
// that falls --watch_buffer messages behind ends with WATCH_TOO_SLOW. The
// stream writes bytes (a raw callback method): a batch the fanout handed to
// many streams is encoded once, by the first that writes it.
//
// Lifetime: gRPC's OnDone and the pool's opening work each hold the
// reactor; the last of the two to finish deletes it. OnDone leaves the
// fanout, after which nothing calls it from there.
//
// Locks, in the order they nest: the fanout's (it hands a batch to the
// outbox, which calls Pump), mu_, the outbox's. Nothing calls the fanout
// while holding mu_.
#ifndef WSCHED_SERVER_GRPC_WATCH_WORKSPACES_H_
#define WSCHED_SERVER_GRPC_WATCH_WORKSPACES_H_

#include <atomic>
#include <optional>

#include <grpcpp/grpcpp.h>
#include <grpcpp/impl/codegen/proto_utils.h>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "server/grpc/blocking_pool.h"
#include "server/grpc/service_context.h"
#include "server/watch/fanout.h"
#include "server/watch/filter.h"
#include "server/watch/outbox.h"
#include "wsched/v1/placement.pb.h"

namespace wsched::grpc_api {

class WorkspacesWatch final : public grpc::ServerWriteReactor<grpc::ByteBuffer> {
 public:
  struct Parts {
    const ServiceContext* services = nullptr;
    BlockingPool* pool = nullptr;  // Runs the listing and the catch-up.
    size_t buffer = 1000;          // --watch_buffer: messages a stream may fall behind.
  };

  // The stream's reactor; a refused call is finished at once.
  static grpc::ServerWriteReactor<grpc::ByteBuffer>* Start(
      const Parts& parts, grpc::CallbackServerContext* context,
      const grpc::ByteBuffer* request);

  void OnWriteDone(bool ok) override;
  void OnCancel() override;
  void OnDone() override;

 private:
  WorkspacesWatch(const Parts& parts, watch::Filter filter, int64_t resume_version);

  // On the pool: the listing or the resume check, the catch-up, the join.
  void Open();
  absl::Status CatchUpAndJoin(int64_t cursor, bool check_resume);
  // Writes the next message when none is in flight.
  void Pump() ABSL_LOCKS_EXCLUDED(mu_);
  // One of the two holders is done; the second deletes the reactor.
  void Release();

  const Parts parts_;
  const watch::Filter filter_;
  const int64_t resume_version_;
  watch::Outbox outbox_;
  std::atomic<int> holders_{2};

  absl::Mutex mu_;
  bool writing_ ABSL_GUARDED_BY(mu_) = false;
  bool finished_ ABSL_GUARDED_BY(mu_) = false;  // Finish was called.
  bool done_ ABSL_GUARDED_BY(mu_) = false;      // OnDone ran.
  // Why it ended, for wsched_watch_streams_ended_total.
  const char* end_reason_ ABSL_GUARDED_BY(mu_) = "client_gone";
  std::optional<watch::Fanout::Id> member_ ABSL_GUARDED_BY(mu_);
  // The message in flight (its wire bytes) and the version it completes (0: none).
  grpc::ByteBuffer message_;
  int64_t message_version_ = 0;
};

}  // namespace wsched::grpc_api

#endif  // WSCHED_SERVER_GRPC_WATCH_WORKSPACES_H_
