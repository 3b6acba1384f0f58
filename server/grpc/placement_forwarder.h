// The front door's half of "one placer, many front doors"
// (docs/architecture.md): a replica that is not the placer sends
// PlaceWorkspace and StopWorkspace to the one that is, with the caller's
// deadline, cancellation and bearer token, and hands back the placer's
// answer as it came (code, message and error details). The placer checks
// the call as if the caller had called it: who they are, their limits,
// the request.
#ifndef WSCHED_SERVER_GRPC_PLACEMENT_FORWARDER_H_
#define WSCHED_SERVER_GRPC_PLACEMENT_FORWARDER_H_

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include <grpcpp/grpcpp.h>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "server/grpc/channel_credentials.h"
#include "server/app/placer_election.h"
#include "server/metrics/metrics.h"
#include "wsched/v1/placement.grpc.pb.h"

namespace wsched::grpc_api {

// Set on a forwarded call (to the forwarding replica's id): the receiver
// never forwards it again, whoever it thinks the placer is.
inline constexpr char kForwardedByHeader[] = "wsched-forwarded-by";

class PlacementForwarder {
 public:
  // `peer_tls`: how this replica reaches the others (plaintext when the
  // server itself serves plaintext).
  PlacementForwarder(app::PlacerElection* election, ClientTlsOptions peer_tls,
                     metrics::Metrics* metrics);

  // The placer's address when this call is to go there: another replica
  // holds the placement lock, the call was not forwarded already, and it
  // carries a bearer token to pass on (a caller known only by its client
  // certificate is served here; docs/architecture.md says why).
  std::optional<std::string> TargetFor(const grpc::ServerContextBase& context) const;

  // Told the placer's answer, or why it could not be had. Called once, on
  // one of gRPC's callback threads: it must not block.
  using Done = std::function<void(grpc::Status)>;

  // Send the call on with gRPC's callback API and return at once: no
  // thread of this replica waits while the placer works. `request` and
  // `response` must live until `done` is called.
  void Place(const grpc::ServerContextBase& context, const std::string& target,
             const v1::PlaceWorkspaceRequest* request, v1::Workspace* response, Done done);
  void Stop(const grpc::ServerContextBase& context, const std::string& target,
            const v1::StopWorkspaceRequest* request, v1::Workspace* response, Done done);

 private:
  // The callback client's method for `Request` (Stub::async's
  // PlaceWorkspace or StopWorkspace).
  template <typename Request>
  using AsyncCall = void (v1::PlacementService::Stub::async::*)(
      grpc::ClientContext*, const Request*, v1::Workspace*, std::function<void(grpc::Status)>);

  template <typename Request>
  void Forward(const char* method, AsyncCall<Request> call, const grpc::ServerContextBase& context,
               const std::string& target, const Request* request, v1::Workspace* response,
               Done done);
  absl::StatusOr<std::shared_ptr<v1::PlacementService::Stub>> StubFor(const std::string& target);

  app::PlacerElection* const election_;
  const ClientTlsOptions peer_tls_;
  metrics::Metrics* const metrics_;
  absl::Mutex mu_;
  // By address; a placer that moves leaves a channel that idles out.
  std::map<std::string, std::shared_ptr<v1::PlacementService::Stub>> stubs_ ABSL_GUARDED_BY(mu_);
};

}  // namespace wsched::grpc_api

#endif  // WSCHED_SERVER_GRPC_PLACEMENT_FORWARDER_H_
