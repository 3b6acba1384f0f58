#include "server/grpc/placement_forwarder.h"

#include "absl/strings/str_cat.h"
#include "server/core/error_reason.h"
#include "server/grpc/status.h"
#include "server/store/change_feed.h"

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
// without one came from the transport (connection refused or reset).
bool FromTransport(const grpc::Status& status) {
  return status.error_code() == grpc::StatusCode::UNAVAILABLE && status.error_details().empty();
}

}  // namespace

PlacementForwarder::PlacementForwarder(PlacerElection* election, ClientTlsOptions peer_tls,
                                       metrics::Metrics* metrics)
    : election_(election), peer_tls_(std::move(peer_tls)), metrics_(metrics) {}

std::optional<std::string> PlacementForwarder::TargetFor(const grpc::ServerContext& context) const {
  const auto& metadata = context.client_metadata();
  if (metadata.count(kForwardedByHeader) > 0) return std::nullopt;
  if (metadata.count("authorization") == 0) return std::nullopt;
  PlacerView placer = election_->Current();
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

template <typename Call>
grpc::Status PlacementForwarder::Forward(const char* method, const grpc::ServerContext& context,
                                         const std::string& target, Call&& call) {
  const absl::Time start = absl::Now();
  auto stub = StubFor(target);
  if (!stub.ok()) return PlacerUnreachable(target, std::string(stub.status().message()));
  // The caller's deadline and cancellation go along.
  std::unique_ptr<grpc::ClientContext> forwarded = grpc::ClientContext::FromServerContext(context);
  for (const auto& [key, value] : context.client_metadata()) {
    if (key == "authorization") {
      forwarded->AddMetadata("authorization", std::string(value.data(), value.size()));
    }
  }
  forwarded->AddMetadata(kForwardedByHeader, store::ReplicaId());
  grpc::Status status = call(**stub, forwarded.get());
  const char* outcome = status.ok() ? "ok" : FromTransport(status) ? "unreachable" : "refused";
  if (metrics_ != nullptr) metrics_->ObserveForward(method, outcome, absl::Now() - start);
  if (!FromTransport(status)) return status;
  election_->Recheck();
  return PlacerUnreachable(target, status.error_message());
}

grpc::Status PlacementForwarder::Place(const grpc::ServerContext& context,
                                       const std::string& target,
                                       const v1::PlaceWorkspaceRequest& request,
                                       v1::Workspace* response) {
  return Forward("PlaceWorkspace", context, target,
                 [&](v1::PlacementService::Stub& stub, grpc::ClientContext* forwarded) {
                   return stub.PlaceWorkspace(forwarded, request, response);
                 });
}

grpc::Status PlacementForwarder::Stop(const grpc::ServerContext& context,
                                      const std::string& target,
                                      const v1::StopWorkspaceRequest& request,
                                      v1::Workspace* response) {
  return Forward("StopWorkspace", context, target,
                 [&](v1::PlacementService::Stub& stub, grpc::ClientContext* forwarded) {
                   return stub.StopWorkspace(forwarded, request, response);
                 });
}

}  // namespace wsched::grpc_api
