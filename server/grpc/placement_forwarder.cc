#include "server/grpc/placement_forwarder.h"

#include "absl/strings/str_cat.h"
#include "server/core/error_reason.h"
#include "server/grpc/status.h"

namespace wsched::grpc_api {
namespace {

// A lost placer is replaced within PlacerElectionOptions::interval; the
// caller retries after about that long.
constexpr absl::Duration kRetryAfterPlacerLoss = absl::Milliseconds(250);

grpc::ChannelArguments PeerChannelArguments() {
  grpc::ChannelArguments args;
  // A placer that vanishes without closing its connections (a node dies)
  // is noticed in seconds, not at the kernel's TCP timeout.
  args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, 10'000);
  args.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 5'000);
  args.SetInt(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  // After a failover, reconnect to a restarted placer at once.
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 1'000);
  return args;
}

grpc::Status PlacerUnreachable(const std::string& target, const std::string& why) {
  return ToGrpc(core::ReasonError(
      absl::StrCat("the placer (", target, ") could not be reached: ", why,
                   "; retry, another replica takes over placement if it is gone"),
      {.reason = core::ErrorReason::kPlacerUnreachable,
       .metadata = {{"placer", target}},
       .retry_delay = kRetryAfterPlacerLoss}));
}

// Every answer of a wsched handler carries a google.rpc.Status; a failure
// without one came from the transport (connection refused or reset:
// UNAVAILABLE) or from a placer shutting down, which cancels the calls it
// had not started (CANCELLED). Either way another replica is to place; a
// caller who cancelled its own call reads no answer.
bool FromTransport(const grpc::Status& status) {
  return (status.error_code() == grpc::StatusCode::UNAVAILABLE ||
          status.error_code() == grpc::StatusCode::CANCELLED) &&
         status.error_details().empty();
}

}  // namespace

PlacementForwarder::PlacementForwarder(app::PlacerElection* election, ClientTlsOptions peer_tls,
                                       metrics::Metrics* metrics)
    : election_(election), peer_tls_(std::move(peer_tls)), metrics_(metrics) {}

std::optional<std::string> PlacementForwarder::TargetFor(const grpc::ServerContextBase& context) const {
  const auto& metadata = context.client_metadata();
  if (metadata.count(kForwardedByHeader) > 0) return std::nullopt;
  if (metadata.count("authorization") == 0) return std::nullopt;
  app::PlacerView placer = election_->Current();
  if (placer.self || placer.address.empty()) return std::nullopt;
  return placer.address;
}

absl::StatusOr<std::shared_ptr<v1::PlacementService::Stub>> PlacementForwarder::StubFor(
    const std::string& target) {
  absl::MutexLock lock(&mu_);
  auto it = stubs_.find(target);
  if (it != stubs_.end()) return it->second;
  auto channel = CreateClientChannel(target, peer_tls_, PeerChannelArguments());
  if (!channel.ok()) return channel.status();
  auto stub = std::shared_ptr<v1::PlacementService::Stub>(v1::PlacementService::NewStub(*channel));
  stubs_.emplace(target, stub);
  return stub;
}

template <typename Request>
void PlacementForwarder::Forward(const char* method, AsyncCall<Request> call,
                                 const grpc::ServerContextBase& context, const std::string& target,
                                 const Request* request, v1::Workspace* response, Done done) {
  const absl::Time started = absl::Now();
  auto stub = StubFor(target);
  if (!stub.ok()) {
    done(PlacerUnreachable(target, std::string(stub.status().message())));
    return;
  }
  // The caller's deadline and cancellation go along.
  std::shared_ptr<grpc::ClientContext> forwarded = grpc::ClientContext::FromServerContext(context);
  for (const auto& [key, value] : context.client_metadata()) {
    if (key == "authorization") {
      forwarded->AddMetadata("authorization", std::string(value.data(), value.size()));
    }
  }
  forwarded->AddMetadata(kForwardedByHeader, app::PlacerElection::Self());
  grpc::ClientContext* raw = forwarded.get();
  v1::PlacementService::Stub& placer = **stub;
  // The completion owns the client context and the stub until the call
  // has ended; gRPC calls it exactly once.
  (placer.async()->*call)(
      raw, request, response,
      [this, method, target, started, forwarded = std::move(forwarded), stub = *stub,
       done = std::move(done)](grpc::Status status) {
        const char* outcome =
            status.ok() ? "ok" : FromTransport(status) ? "unreachable" : "refused";
        if (metrics_ != nullptr) metrics_->ObserveForward(method, outcome, absl::Now() - started);
        if (!FromTransport(status)) {
          done(std::move(status));
          return;
        }
        election_->Recheck();  // Only sets a flag: safe on a callback thread.
        done(PlacerUnreachable(target, status.error_message()));
      });
}

void PlacementForwarder::Place(const grpc::ServerContextBase& context, const std::string& target,
                               const v1::PlaceWorkspaceRequest* request, v1::Workspace* response,
                               Done done) {
  Forward<v1::PlaceWorkspaceRequest>("PlaceWorkspace",
                                     &v1::PlacementService::Stub::async::PlaceWorkspace, context,
                                     target, request, response, std::move(done));
}

void PlacementForwarder::Stop(const grpc::ServerContextBase& context, const std::string& target,
                              const v1::StopWorkspaceRequest* request, v1::Workspace* response,
                              Done done) {
  Forward<v1::StopWorkspaceRequest>("StopWorkspace",
                                    &v1::PlacementService::Stub::async::StopWorkspace, context,
                                    target, request, response, std::move(done));
}

}  // namespace wsched::grpc_api
