// Machine-readable reasons on absl::Status, for code that must not depend on
// gRPC or protobuf (core/, catalog/, placement/, scheduler/, store/).
//
// An error is tagged where it is born: the reason (one of ErrorReason, which
// mirrors wsched.v1.ErrorReason in api/wsched/v1/errors.proto number for
// number) and the typed details a caller acts on (the quota figures, the
// field that is wrong, the precondition that failed, how long to wait) ride
// as a payload of the status under kErrorDetailsTypeUrl. The gRPC layer
// (server/grpc/status.h) turns them into a google.rpc.Status with ErrorInfo
// and the matching detail messages; a status without a tag leaves with the
// generic reason of its code (GenericReasonFor), so no refusal leaves the
// server without a reason.
//
// The payload survives `return status;` and StatusOr propagation; a status
// rebuilt from another one's message (absl::InternalError(StrCat(...))) loses
// it, so tag after rewording, not before.
#ifndef WSCHED_SERVER_CORE_ERROR_REASON_H_
#define WSCHED_SERVER_CORE_ERROR_REASON_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace wsched::core {

// The numbers are wsched.v1.ErrorReason's (error_reason_test checks both
// lists agree). Each reason is always sent with the code ErrorReasonCode
// gives; a new reason is appended, never renumbered.
enum class ErrorReason : int {
  kUnspecified = 0,
  // Identity and access.
  kUnauthenticated = 1,
  kTokenLacksRole = 2,
  kOutsideTokenScope = 3,
  // Limits.
  kOrgGpuQuotaExceeded = 4,
  kTooManyRequests = 5,
  kMessageTooLarge = 6,
  // Requests.
  kInvalidField = 7,
  // Things that do not exist.
  kClassNotFound = 8,
  kPoolNotFound = 9,
  kNodeNotFound = 10,
  kWorkspaceNotFound = 11,
  kGpuNotFound = 12,
  kClassAlreadyExists = 13,
  // Policy and state.
  kClassNotAllowed = 14,
  kClassDeprecated = 15,
  kNoClassApplies = 16,
  kClassUnplaceable = 17,
  kClassIsDefault = 18,
  kNodeLost = 19,
  kNodeInOtherPool = 20,
  kStaleKernelReport = 21,
  kProjectInOtherOrg = 22,
  // Concurrency.
  kVersionMismatch = 23,
  kConcurrentChange = 24,
  // The server.
  kDatabaseUnavailable = 25,
  kShuttingDown = 26,
  // Generic reasons of untagged errors, one per code (GenericReasonFor).
  kInvalidRequest = 27,
  kResourceNotFound = 28,
  kResourceAlreadyExists = 29,
  kPermissionDenied = 30,
  kResourceExhausted = 31,
  kPreconditionFailed = 32,
  kOutOfRange = 33,
  kNotImplemented = 34,
  kServiceUnavailable = 35,
  kDeadlineExceeded = 36,
  kCancelled = 37,
  kInternalError = 38,
  // Node identity (docs/security.md).
  kNotThisNode = 39,
  kBootstrapNodeExists = 40,
  kBootstrapRegistersOnly = 41,
  // A front door could not reach the placer (docs/architecture.md).
  kPlacerUnreachable = 42,
  // A registration claims another node's provider id or GPU UUID.
  kNodeIdentityClaimed = 43,
  // WatchWorkspaces and WatchNodes (docs/api.md "Following every workspace").
  kResumeTooOld = 44,
  kWatchTooSlow = 45,
  // Spending limits (docs/billing.md "Spending limits").
  kBudgetExhausted = 46,
  // A quote token that no longer holds (docs/placement.md "Quotes").
  kQuoteStale = 47,
  // A ready report for a workspace that is not placed (ReportWorkspaceReady).
  kWorkspaceNotPlaced = 48,
};

// The short name, as ErrorInfo.reason carries it: "ORG_GPU_QUOTA_EXCEEDED"
// (the proto value without its ERROR_REASON_ prefix). "UNSPECIFIED" for
// values outside the enum.
absl::string_view ErrorReasonName(ErrorReason reason);
// Every value, kUnspecified excluded, in number order.
const std::vector<ErrorReason>& AllErrorReasons();
// The code a status with this reason has.
absl::StatusCode ErrorReasonCode(ErrorReason reason);
// The reason an untagged status of `code` is sent with.
ErrorReason GenericReasonFor(absl::StatusCode code);

// google.rpc.BadRequest.FieldViolation; `field` is a path into the request,
// e.g. "settings.allowed_classes[2]" or "node.gpus[0].uuid".
struct FieldViolation {
  std::string field;
  std::string description;
  friend bool operator==(const FieldViolation&, const FieldViolation&) = default;
};
// google.rpc.QuotaFailure.Violation; subject e.g. "org:acme".
struct QuotaViolation {
  std::string subject;
  std::string description;
  friend bool operator==(const QuotaViolation&, const QuotaViolation&) = default;
};
// google.rpc.PreconditionFailure.Violation; type e.g. "VERSION", "POLICY",
// "STATE"; subject e.g. "class/gpu-a100".
struct PreconditionViolation {
  std::string type;
  std::string subject;
  std::string description;
  friend bool operator==(const PreconditionViolation&, const PreconditionViolation&) = default;
};
// google.rpc.ResourceInfo: what was looked for (type e.g. "class").
struct ResourceRef {
  std::string type;
  std::string name;
  std::string description;
  friend bool operator==(const ResourceRef&, const ResourceRef&) = default;
};

struct ErrorDetails {
  ErrorReason reason = ErrorReason::kUnspecified;
  // ErrorInfo.metadata: the figures (org, class, quota, held, ...).
  std::map<std::string, std::string> metadata;
  std::vector<FieldViolation> field_violations;
  std::vector<QuotaViolation> quota_violations;
  std::vector<PreconditionViolation> precondition_violations;
  std::optional<ResourceRef> resource;
  // google.rpc.RetryInfo: wait this long, then retry the same request.
  std::optional<absl::Duration> retry_delay;
  friend bool operator==(const ErrorDetails&, const ErrorDetails&) = default;
};

inline constexpr absl::string_view kErrorDetailsTypeUrl = "type.wsched.io/wsched.core.ErrorDetails";

// `status` with `details` attached (replacing earlier ones). OK stays OK.
absl::Status WithDetails(absl::Status status, const ErrorDetails& details);
// `status` tagged with `reason` and nothing else, code and message kept.
absl::Status WithReason(absl::Status status, ErrorReason reason);
// The attached details; nullopt when untagged (or the payload is damaged).
std::optional<ErrorDetails> DetailsOf(const absl::Status& status);

// A status of ErrorReasonCode(details.reason) with `message`.
absl::Status ReasonError(std::string message, ErrorDetails details);

// INVALID_ARGUMENT "<field>: <rule>" with one BadRequest field violation.
absl::Status InvalidFieldError(absl::string_view field, absl::string_view rule);
// INVALID_ARGUMENT with `message` and every violation (several bad fields).
absl::Status InvalidFieldsError(std::string message, std::vector<FieldViolation> violations);
// INVALID_ARGUMENT from "<path>: <rule>" lines (core::ErrorList, catalog
// checks): the message is the lines joined by "\n", each line one field
// violation (a line without ": " is a violation of field "").
absl::Status InvalidFieldLinesError(const std::vector<std::string>& lines);

// NOT_FOUND "<type> <name> does not exist" with ResourceInfo; `reason` is
// one of the *_NOT_FOUND reasons.
absl::Status NotFoundError(ErrorReason reason, absl::string_view type, absl::string_view name,
                           std::string message = "");

// For optimistic concurrency (expected_version, etags): ABORTED with
// reason VERSION_MISMATCH, a PreconditionFailure violation of type
// "VERSION" on subject "<type>/<name>", and the figures in the metadata
// (current_version, expected_version) so the caller re-reads and retries.
// `message` defaults to "<type> <name> is at version <current>, not
// expected_version <expected>: it changed since you read it; re-read and
// retry".
absl::Status VersionMismatchError(absl::string_view type, absl::string_view name,
                                  int64_t current_version, int64_t expected_version,
                                  std::string message = "");

// FAILED_PRECONDITION with one PreconditionFailure violation; `reason` is
// a policy or state reason (CLASS_NOT_ALLOWED, NODE_LOST, ...).
absl::Status PreconditionError(ErrorReason reason, absl::string_view type,
                               absl::string_view subject, std::string message,
                               std::map<std::string, std::string> metadata = {});

// RESOURCE_EXHAUSTED, ORG_GPU_QUOTA_EXCEEDED: QuotaFailure on "org:<org>"
// and the figures (org, class, gpu_quota, gpus_held, gpus_requested).
// The same in sevenths of a GPU, where a MIG slice counts its share
// (compute slices / 7): "holds 2.43 GPUs".
absl::Status OrgGpuQuotaExceededInSevenths(absl::string_view org, absl::string_view class_id,
                                           int64_t held_sevenths, int64_t quota,
                                           int64_t requested_sevenths);
// 14 -> "2", 17 -> "2.43".
std::string GpuSeventhsFigure(int64_t sevenths);
absl::Status OrgGpuQuotaExceededError(absl::string_view org, absl::string_view class_id,
                                      int64_t held, int64_t quota, int64_t requested);

// RESOURCE_EXHAUSTED, TOO_MANY_REQUESTS: back-pressure, with RetryInfo.
absl::Status TooManyRequestsError(std::string message, absl::Duration retry_delay,
                                  std::map<std::string, std::string> metadata = {});

// UNAVAILABLE, DATABASE_UNAVAILABLE: PostgreSQL cannot be reached; RetryInfo
// advises kDatabaseRetryDelay.
inline constexpr absl::Duration kDatabaseRetryDelay = absl::Seconds(1);
absl::Status DatabaseUnavailableError(std::string message);

}  // namespace wsched::core

#endif  // WSCHED_SERVER_CORE_ERROR_REASON_H_
