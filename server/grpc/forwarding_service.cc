#include "server/grpc/forwarding_service.h"

#include <atomic>
#include <memory>

#include "absl/strings/str_cat.h"
#include "server/grpc/handler.h"
#include "server/grpc/placement_service.h"

namespace wsched::grpc_api {
namespace {

constexpr char kPlacementService[] = "wsched.v1.PlacementService";

void Fill(const grpc::Status& status, internal::v1::ForwardedAnswer* answer) {
  answer->set_code(static_cast<int32_t>(status.error_code()));
  answer->set_message(status.error_message());
  answer->set_details(status.error_details());
  if (!status.ok()) answer->clear_workspace();
}

}  // namespace

ForwardingServiceImpl::ForwardingServiceImpl(const ServiceContext& context)
    : context_(context), blocking_(BlockingPool::Options{}) {}

grpc::Status ForwardingServiceImpl::Run(const internal::v1::ForwardedCall& call,
                                        absl::Time received, v1::Workspace* out) const {
  // Nobody waits for a call whose time is up: it is not started.
  if (call.timeout_ms() > 0 && absl::Now() > received + absl::Milliseconds(call.timeout_ms())) {
    return grpc::Status(grpc::StatusCode::DEADLINE_EXCEEDED,
                        "the caller's deadline passed before the placer started the call");
  }
  CallerCredentials caller;
  if (!call.authorization().empty()) caller.authorization = call.authorization();
  switch (call.call_case()) {
    case internal::v1::ForwardedCall::kPlace:
      return HandleAs(context_, caller, kPlacementService, "PlaceWorkspace", call.place(),
                      [&](const Principal&) {
                        return PlacementServiceImpl::PlaceInto(context_, call.place(), out);
                      });
    case internal::v1::ForwardedCall::kStop:
      return HandleAs(context_, caller, kPlacementService, "StopWorkspace", call.stop(),
                      [&](const Principal&) {
                        return PlacementServiceImpl::StopInto(context_, call.stop(), out);
                      });
    case internal::v1::ForwardedCall::CALL_NOT_SET:
      break;
  }
  return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                      "call: set place or stop (a newer front door sent a call this placer "
                      "does not know)");
}

grpc::ServerUnaryReactor* ForwardingServiceImpl::ForwardCalls(
    grpc::CallbackServerContext* context, const internal::v1::ForwardCallsRequest* request,
    internal::v1::ForwardCallsResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  const int n = request->calls_size();
  if (n == 0 || n > kMaxForwardedCalls) {
    reactor->Finish(grpc::Status(
        grpc::StatusCode::INVALID_ARGUMENT,
        absl::StrCat("calls: ", n, " calls; send 1 to ", kMaxForwardedCalls)));
    return reactor;
  }
  const absl::Time received = absl::Now();
  // Every answer exists before any thread fills one: each thread then
  // writes only its own element.
  for (int i = 0; i < n; ++i) response->add_answers();
  auto left = std::make_shared<std::atomic<int>>(n);
  for (int i = 0; i < n; ++i) {
    blocking_.Submit([this, request, response, reactor, received, left, i] {
      internal::v1::ForwardedAnswer* answer = response->mutable_answers(i);
      const absl::Time started = absl::Now();
      grpc::Status status = Run(request->calls(i), received, answer->mutable_workspace());
      Fill(status, answer);
      // Counted as the call it carries, as if it had come directly: the
      // placer's PlaceWorkspace numbers include the forwarded ones.
      if (context_.metrics != nullptr) {
        context_.metrics->ObserveRpc(
            request->calls(i).has_place() ? "/wsched.v1.PlacementService/PlaceWorkspace"
                                          : "/wsched.v1.PlacementService/StopWorkspace",
            absl::StatusCodeToString(static_cast<absl::StatusCode>(status.error_code())),
            absl::Now() - started);
      }
      if (left->fetch_sub(1) == 1) reactor->Finish(grpc::Status::OK);
    });
  }
  return reactor;
}

}  // namespace wsched::grpc_api
