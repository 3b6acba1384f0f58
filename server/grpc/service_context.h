// What every gRPC service handler shares: the parts it authorizes with and
// the application it calls. Long-lived, not owned; built by the
// composition root (root/server.cc, app/application.h).
#ifndef WSCHED_SERVER_GRPC_SERVICE_CONTEXT_H_
#define WSCHED_SERVER_GRPC_SERVICE_CONTEXT_H_

#include <cstdint>

#include "absl/time/time.h"
#include "server/app/audit_operations.h"
#include "server/app/class_operations.h"
#include "server/app/settings_operations.h"
#include "server/app/usage_operations.h"
#include "server/grpc/concurrency_limiter.h"
#include "server/grpc/live_authenticator.h"
#include "server/grpc/rate_limiter.h"
#include "server/metrics/metrics.h"
#include "server/scheduler/scheduler.h"

namespace wsched::grpc_api {

class PlacementForwarder;  // placement_forwarder.h

// Shared, long-lived dependencies handed to each service. Not owned.
struct ServiceContext {
  const LiveAuthenticator* auth = nullptr;
  // Caps in-flight calls of agent and project-owner principals; may be null.
  ConcurrencyLimiter* limiter = nullptr;
  // Calls per second per principal, by role (--rate_limits); may be null.
  RateLimiter* rate_limiter = nullptr;
  metrics::Metrics* metrics = nullptr;
  scheduler::Scheduler* scheduler = nullptr;
  absl::Duration heartbeat_interval = absl::Seconds(10);
  // Requests larger than this are refused with MESSAGE_TOO_LARGE (0: not
  // checked). gRPC's own limit sits above it (server.cc), so such a request
  // reaches the handler and its refusal carries the sizes.
  int64_t max_request_bytes = 0;
  // --watch_buffer: messages a watch stream (WatchWorkspaces, WatchNodes) may
  // fall behind before it is ended (watch/outbox.h).
  size_t watch_buffer = 1000;
  // Sends placements and stops to the placer; null: this replica places
  // every call it receives (no --advertise_host).
  PlacementForwarder* forwarder = nullptr;
  // The application rules the handlers call (server/app/).
  app::ClassOperations* classes = nullptr;
  app::SettingsOperations* settings = nullptr;
  app::UsageOperations* usage = nullptr;
  // Appends the audit record of each audited call (handler.h); null: no
  // trail is kept.
  app::AuditOperations* audit = nullptr;
};

}  // namespace wsched::grpc_api

#endif  // WSCHED_SERVER_GRPC_SERVICE_CONTEXT_H_
