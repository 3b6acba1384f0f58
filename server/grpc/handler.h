// The shape every RPC handler shares: authorize against the method table,
// limit, validate, run the body (which returns absl::Status), map the
// status once.
#ifndef WSCHED_SERVER_GRPC_HANDLER_H_
#define WSCHED_SERVER_GRPC_HANDLER_H_

#include <optional>
#include <string>

#include <grpcpp/grpcpp.h>

#include "absl/strings/str_cat.h"
#include "server/core/error_reason.h"
#include "server/grpc/audit_trail.h"
#include "server/grpc/auth.h"
#include "server/grpc/request_validation.h"
#include "server/grpc/service_context.h"
#include "server/grpc/status.h"

namespace wsched::grpc_api {

inline absl::Status MessageTooLarge(size_t size, int64_t limit) {
  return core::ReasonError(
      absl::StrCat("the request is ", size, " bytes, more than --max_receive_message_size (",
                   limit, " bytes)"),
      {.reason = core::ErrorReason::kMessageTooLarge,
       .metadata = {{"size_bytes", absl::StrCat(size)}, {"limit_bytes", absl::StrCat(limit)}}});
}

// `body` is called as body(const Principal&) -> absl::Status. Order:
// who is calling, may they call this, are they within their rate limit
// (checked before the concurrency slot, so a throttled caller holds
// nothing), are they within their concurrency limit, is the request within --max_receive_message_size, is it
// well-formed (request_validation.h), then the body. A state-changing call
// of an admin or project owner then leaves its audit record (audit.h),
// whatever its outcome once the caller was known and admitted.
template <typename Request, typename Body>
grpc::Status Handle(const ServiceContext& services, grpc::ServerContextBase* context,
                    const char* service, const char* method, const Request& request,
                    Body&& body) {
  const std::string full_method = absl::StrCat("/", service, "/", method);
  auto principal = services.auth->Authorize(*context, full_method);
  if (!principal.ok()) return ToGrpc(principal.status());
  if (services.rate_limiter != nullptr) {
    if (absl::Status admitted = services.rate_limiter->Admit(*principal); !admitted.ok()) {
      return ToGrpc(admitted);
    }
  }
  std::optional<ConcurrencyLimiter::Slot> slot;
  if (services.limiter != nullptr && principal->ConcurrencyLimited()) {
    auto acquired = services.limiter->Acquire(principal->name);
    if (!acquired.ok()) return ToGrpc(acquired.status());
    slot.emplace(*std::move(acquired));
  }
  absl::Status outcome;
  if (services.max_request_bytes > 0 &&
      request.ByteSizeLong() > static_cast<size_t>(services.max_request_bytes)) {
    outcome = MessageTooLarge(request.ByteSizeLong(), services.max_request_bytes);
  } else if (outcome = ValidateRequest(request); outcome.ok()) {
    outcome = body(*principal);
  }
  if (services.audit != nullptr && Audited(full_method, *principal)) {
    services.audit->Record(AuditRecordOf(*principal, full_method, request, outcome));
  }
  return ToGrpc(outcome);
}

}  // namespace wsched::grpc_api

#endif  // WSCHED_SERVER_GRPC_HANDLER_H_
