#include "server/grpc/placement_forwarder.h"

#include <algorithm>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "server/core/error_reason.h"
#include "server/grpc/status.h"
#include "server/store/change_feed.h"

namespace wsched::grpc_api {
namespace {

// A lost placer is replaced within PlacerElectionOptions::interval; the
// caller retries after about that long.
constexpr absl::Duration kRetryAfterPlacerLoss = absl::Milliseconds(250);

// Two batches on the wire: one the placer commits while the next waits in
// its group-commit queue, so a front door's calls never wait a whole
// commit for a slot. A batch holds what one commit takes and more.
constexpr int kBatchesInFlight = 2;
constexpr size_t kMaxBatch = 256;

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

PlacementForwarder::PlacementForwarder(PlacerElection* election, ClientTlsOptions peer_tls,
                                       Options options, metrics::Metrics* metrics)
    : election_(election), peer_tls_(std::move(peer_tls)), options_(options), metrics_(metrics) {}

std::optional<std::string> PlacementForwarder::TargetFor(const grpc::ServerContextBase& context) const {
  const auto& metadata = context.client_metadata();
  if (metadata.count(kForwardedByHeader) > 0) return std::nullopt;
  if (metadata.count("authorization") == 0) return std::nullopt;
  PlacerView placer = election_->Current();
  if (placer.self || placer.address.empty()) return std::nullopt;
  return placer.address;
}

absl::StatusOr<PlacementForwarder::Peer*> PlacementForwarder::PeerFor(const std::string& target) {
  auto it = peers_.find(target);
  if (it != peers_.end()) return it->second.get();
  auto channel = CreateClientChannel(target, peer_tls_, PeerChannelArguments());
  if (!channel.ok()) return channel.status();
  auto peer = std::make_unique<Peer>(Peer{
      .placement = v1::PlacementService::NewStub(*channel),
      .forwarding = internal::v1::ForwardingService::NewStub(*channel),
      .queue = ForwardQueue<Pending>(kBatchesInFlight, kMaxBatch)});
  Peer* raw = peer.get();
  peers_.emplace(target, std::move(peer));
  return raw;
}

template <typename Request>
void PlacementForwarder::Forward(const char* method, AsyncCall<Request> call,
                                 const grpc::ServerContextBase& context, const std::string& target,
                                 const Request* request, v1::Workspace* response, Done done) {
  const absl::Time started = absl::Now();
  absl::StatusOr<std::shared_ptr<v1::PlacementService::Stub>> stub;
  {
    absl::MutexLock lock(&mu_);
    auto peer = PeerFor(target);
    if (peer.ok()) {
      stub = (*peer)->placement;
    } else {
      stub = peer.status();
    }
  }
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
  forwarded->AddMetadata(kForwardedByHeader, store::ReplicaId());
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

struct PlacementForwarder::Batch {
  grpc::ClientContext context;
  internal::v1::ForwardCallsRequest request;
  internal::v1::ForwardCallsResponse response;
  std::vector<Pending> calls;
};

template <typename Request>
void PlacementForwarder::Enqueue(const char* method, AsyncCall<Request> call,
                                 const grpc::ServerContextBase& context, const std::string& target,
                                 const Request* request, v1::Workspace* response, Done done) {
  if (!options_.in_batches) {
    Forward(method, call, context, target, request, response, std::move(done));
    return;
  }
  Pending pending{.method = method,
                  .deadline = absl::InfiniteFuture(),
                  .started = absl::Now(),
                  .response = response,
                  .done = std::move(done)};
  if constexpr (std::is_same_v<Request, v1::PlaceWorkspaceRequest>) {
    *pending.call.mutable_place() = *request;
  } else {
    *pending.call.mutable_stop() = *request;
  }
  if (auto it = context.client_metadata().find("authorization");
      it != context.client_metadata().end()) {
    pending.call.set_authorization(std::string(it->second.data(), it->second.size()));
  }
  if (context.deadline() != std::chrono::system_clock::time_point::max()) {
    pending.deadline = absl::FromChrono(context.deadline());
  }
  // The caller's context and request live until `done` is called.
  pending.alone = [this, method, call, &context, target, request, response](Done done) {
    Forward(method, call, context, target, request, response, std::move(done));
  };
  absl::Status reachable;
  bool alone = false;
  std::vector<Pending> now;
  {
    absl::MutexLock lock(&mu_);
    auto peer = PeerFor(target);
    if (!peer.ok()) {
      reachable = peer.status();
    } else if ((*peer)->calls_alone) {
      alone = true;
    } else {
      now = (*peer)->queue.Add(std::move(pending));
    }
  }
  if (!reachable.ok()) {
    pending.done(PlacerUnreachable(target, std::string(reachable.message())));
  } else if (alone) {
    pending.alone(std::move(pending.done));
  } else if (!now.empty()) {
    Send(target, std::move(now));
  }
}

void PlacementForwarder::Send(const std::string& target, std::vector<Pending> calls) {
  auto batch = std::make_shared<Batch>();
  const absl::Time now = absl::Now();
  absl::Time latest = absl::InfinitePast();
  for (Pending& pending : calls) {
    if (pending.deadline != absl::InfiniteFuture()) {
      pending.call.set_timeout_ms(
          std::max<int64_t>(1, absl::ToInt64Milliseconds(pending.deadline - now)));
    }
    latest = std::max(latest, pending.deadline);
    batch->request.add_calls()->Swap(&pending.call);
  }
  // The batch lives as long as the caller who waits longest.
  if (latest != absl::InfiniteFuture()) batch->context.set_deadline(absl::ToChronoTime(latest));
  batch->context.AddMetadata(kForwardedByHeader, store::ReplicaId());
  batch->calls = std::move(calls);
  std::shared_ptr<internal::v1::ForwardingService::Stub> stub;
  {
    absl::MutexLock lock(&mu_);
    stub = peers_.at(target)->forwarding;  // Made by Enqueue; never removed.
  }
  stub->async()->ForwardCalls(
      &batch->context, &batch->request, &batch->response,
      [this, target, batch, stub](grpc::Status status) {
        Answer(target, *batch, status);
        std::vector<Pending> next;
        {
          absl::MutexLock lock(&mu_);
          next = peers_.at(target)->queue.Answered();
        }
        if (!next.empty()) Send(target, std::move(next));
      });
}

void PlacementForwarder::Answer(const std::string& target, Batch& batch,
                                const grpc::Status& status) {
  if (status.error_code() == grpc::StatusCode::UNIMPLEMENTED && status.error_details().empty()) {
    // An older placer: one RPC per call from now on, these calls first.
    {
      absl::MutexLock lock(&mu_);
      peers_.at(target)->calls_alone = true;
    }
    for (Pending& pending : batch.calls) pending.alone(std::move(pending.done));
    return;
  }
  if (!status.ok()) {
    const bool lost = FromTransport(status);
    if (lost) election_->Recheck();  // Only sets a flag: safe on a callback thread.
    for (Pending& pending : batch.calls) {
      Finish(pending, lost ? PlacerUnreachable(target, status.error_message()) : status,
             lost ? "unreachable" : "refused");
    }
    return;
  }
  const int answers = batch.response.answers_size();
  for (size_t i = 0; i < batch.calls.size(); ++i) {
    Pending& pending = batch.calls[i];
    if (static_cast<int>(i) >= answers) {
      Finish(pending,
             grpc::Status(grpc::StatusCode::INTERNAL,
                          absl::StrCat("the placer (", target, ") answered ", answers, " of ",
                                       batch.calls.size(), " forwarded calls")),
             "refused");
      continue;
    }
    internal::v1::ForwardedAnswer& answer = *batch.response.mutable_answers(static_cast<int>(i));
    grpc::Status answered(static_cast<grpc::StatusCode>(answer.code()), answer.message(),
                          answer.details());
    const char* outcome = answered.ok() ? "ok" : "refused";
    if (answered.ok()) pending.response->Swap(answer.mutable_workspace());
    Finish(pending, std::move(answered), outcome);
  }
}

void PlacementForwarder::Finish(Pending& pending, grpc::Status status, const char* outcome) {
  if (metrics_ != nullptr) {
    metrics_->ObserveForward(pending.method, outcome, absl::Now() - pending.started);
  }
  pending.done(std::move(status));
}

void PlacementForwarder::Place(const grpc::ServerContextBase& context, const std::string& target,
                               const v1::PlaceWorkspaceRequest* request, v1::Workspace* response,
                               Done done) {
  Enqueue<v1::PlaceWorkspaceRequest>("PlaceWorkspace",
                                     &v1::PlacementService::Stub::async::PlaceWorkspace, context,
                                     target, request, response, std::move(done));
}

void PlacementForwarder::Stop(const grpc::ServerContextBase& context, const std::string& target,
                              const v1::StopWorkspaceRequest* request, v1::Workspace* response,
                              Done done) {
  Enqueue<v1::StopWorkspaceRequest>("StopWorkspace",
                                    &v1::PlacementService::Stub::async::StopWorkspace, context,
                                    target, request, response, std::move(done));
}

}  // namespace wsched::grpc_api
