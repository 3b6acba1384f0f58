#include "server/core/error_reason.h"

#include <array>
#include <utility>

#include "absl/strings/cord.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "server/core/mig.h"

namespace wsched::core {
namespace {

struct ReasonInfo {
  ErrorReason reason;
  absl::string_view name;
  absl::StatusCode code;
};

using C = absl::StatusCode;
using R = ErrorReason;
// In number order: kReasons[n].reason == ErrorReason(n).
constexpr std::array kReasons = {
    ReasonInfo{R::kUnspecified, "UNSPECIFIED", C::kUnknown},
    ReasonInfo{R::kUnauthenticated, "UNAUTHENTICATED", C::kUnauthenticated},
    ReasonInfo{R::kTokenLacksRole, "TOKEN_LACKS_ROLE", C::kPermissionDenied},
    ReasonInfo{R::kOutsideTokenScope, "OUTSIDE_TOKEN_SCOPE", C::kPermissionDenied},
    ReasonInfo{R::kOrgGpuQuotaExceeded, "ORG_GPU_QUOTA_EXCEEDED", C::kResourceExhausted},
    ReasonInfo{R::kTooManyRequests, "TOO_MANY_REQUESTS", C::kResourceExhausted},
    ReasonInfo{R::kMessageTooLarge, "MESSAGE_TOO_LARGE", C::kResourceExhausted},
    ReasonInfo{R::kInvalidField, "INVALID_FIELD", C::kInvalidArgument},
    ReasonInfo{R::kClassNotFound, "CLASS_NOT_FOUND", C::kNotFound},
    ReasonInfo{R::kPoolNotFound, "POOL_NOT_FOUND", C::kNotFound},
    ReasonInfo{R::kNodeNotFound, "NODE_NOT_FOUND", C::kNotFound},
    ReasonInfo{R::kWorkspaceNotFound, "WORKSPACE_NOT_FOUND", C::kNotFound},
    ReasonInfo{R::kGpuNotFound, "GPU_NOT_FOUND", C::kNotFound},
    ReasonInfo{R::kClassAlreadyExists, "CLASS_ALREADY_EXISTS", C::kAlreadyExists},
    ReasonInfo{R::kClassNotAllowed, "CLASS_NOT_ALLOWED", C::kFailedPrecondition},
    ReasonInfo{R::kClassDeprecated, "CLASS_DEPRECATED", C::kFailedPrecondition},
    ReasonInfo{R::kNoClassApplies, "NO_CLASS_APPLIES", C::kFailedPrecondition},
    ReasonInfo{R::kClassUnplaceable, "CLASS_UNPLACEABLE", C::kFailedPrecondition},
    ReasonInfo{R::kClassIsDefault, "CLASS_IS_DEFAULT", C::kFailedPrecondition},
    ReasonInfo{R::kNodeLost, "NODE_LOST", C::kFailedPrecondition},
    ReasonInfo{R::kNodeInOtherPool, "NODE_IN_OTHER_POOL", C::kFailedPrecondition},
    ReasonInfo{R::kStaleKernelReport, "STALE_KERNEL_REPORT", C::kFailedPrecondition},
    ReasonInfo{R::kProjectInOtherOrg, "PROJECT_IN_OTHER_ORG", C::kPermissionDenied},
    ReasonInfo{R::kVersionMismatch, "VERSION_MISMATCH", C::kAborted},
    ReasonInfo{R::kConcurrentChange, "CONCURRENT_CHANGE", C::kAborted},
    ReasonInfo{R::kDatabaseUnavailable, "DATABASE_UNAVAILABLE", C::kUnavailable},
    ReasonInfo{R::kShuttingDown, "SHUTTING_DOWN", C::kUnavailable},
    ReasonInfo{R::kInvalidRequest, "INVALID_REQUEST", C::kInvalidArgument},
    ReasonInfo{R::kResourceNotFound, "RESOURCE_NOT_FOUND", C::kNotFound},
    ReasonInfo{R::kResourceAlreadyExists, "RESOURCE_ALREADY_EXISTS", C::kAlreadyExists},
    ReasonInfo{R::kPermissionDenied, "PERMISSION_DENIED", C::kPermissionDenied},
    ReasonInfo{R::kResourceExhausted, "RESOURCE_EXHAUSTED", C::kResourceExhausted},
    ReasonInfo{R::kPreconditionFailed, "PRECONDITION_FAILED", C::kFailedPrecondition},
    ReasonInfo{R::kOutOfRange, "OUT_OF_RANGE", C::kOutOfRange},
    ReasonInfo{R::kNotImplemented, "NOT_IMPLEMENTED", C::kUnimplemented},
    ReasonInfo{R::kServiceUnavailable, "SERVICE_UNAVAILABLE", C::kUnavailable},
    ReasonInfo{R::kDeadlineExceeded, "DEADLINE_EXCEEDED", C::kDeadlineExceeded},
    ReasonInfo{R::kCancelled, "CANCELLED", C::kCancelled},
    ReasonInfo{R::kInternalError, "INTERNAL_ERROR", C::kInternal},
    ReasonInfo{R::kNotThisNode, "NOT_THIS_NODE", C::kPermissionDenied},
    ReasonInfo{R::kBootstrapNodeExists, "BOOTSTRAP_NODE_EXISTS", C::kPermissionDenied},
    ReasonInfo{R::kBootstrapRegistersOnly, "BOOTSTRAP_REGISTERS_ONLY", C::kPermissionDenied},
    ReasonInfo{R::kPlacerUnreachable, "PLACER_UNREACHABLE", C::kUnavailable},
    ReasonInfo{R::kNodeIdentityClaimed, "NODE_IDENTITY_CLAIMED", C::kFailedPrecondition},
    ReasonInfo{R::kResumeTooOld, "RESUME_TOO_OLD", C::kOutOfRange},
    ReasonInfo{R::kWatchTooSlow, "WATCH_TOO_SLOW", C::kResourceExhausted},
    ReasonInfo{R::kBudgetExhausted, "BUDGET_EXHAUSTED", C::kResourceExhausted},
    ReasonInfo{R::kQuoteStale, "QUOTE_STALE", C::kFailedPrecondition},
    ReasonInfo{R::kWorkspaceNotPlaced, "WORKSPACE_NOT_PLACED", C::kFailedPrecondition},
};

const ReasonInfo& InfoOf(ErrorReason reason) {
  int n = static_cast<int>(reason);
  if (n < 0 || n >= static_cast<int>(kReasons.size())) return kReasons[0];
  return kReasons[n];
}

// The payload: records of a tag letter and a fixed number of strings, each
// "<length>:<bytes>". Private to this file; only DetailsOf reads it.
void Put(std::string* out, absl::string_view s) { absl::StrAppend(out, s.size(), ":", s); }

template <typename... S>
void Record(std::string* out, char tag, const S&... strings) {
  out->push_back(tag);
  (Put(out, strings), ...);
}

std::string Encode(const ErrorDetails& d) {
  std::string out;
  Record(&out, 'R', absl::StrCat(static_cast<int>(d.reason)));
  for (const auto& [key, value] : d.metadata) Record(&out, 'M', key, value);
  for (const auto& v : d.field_violations) Record(&out, 'F', v.field, v.description);
  for (const auto& v : d.quota_violations) Record(&out, 'Q', v.subject, v.description);
  for (const auto& v : d.precondition_violations) {
    Record(&out, 'P', v.type, v.subject, v.description);
  }
  if (d.resource) Record(&out, 'I', d.resource->type, d.resource->name, d.resource->description);
  if (d.retry_delay) {
    Record(&out, 'D', absl::StrCat(absl::ToInt64Nanoseconds(*d.retry_delay)));
  }
  return out;
}

class Reader {
 public:
  explicit Reader(absl::string_view in) : in_(in) {}
  bool Done() const { return in_.empty(); }
  char Tag() {
    char tag = in_.front();
    in_.remove_prefix(1);
    return tag;
  }
  bool Next(std::string* out) {
    size_t colon = in_.find(':');
    size_t length = 0;
    if (colon == absl::string_view::npos || !absl::SimpleAtoi(in_.substr(0, colon), &length) ||
        length > in_.size() - colon - 1) {
      return false;
    }
    *out = std::string(in_.substr(colon + 1, length));
    in_.remove_prefix(colon + 1 + length);
    return true;
  }

 private:
  absl::string_view in_;
};

std::optional<ErrorDetails> Decode(absl::string_view in) {
  ErrorDetails d;
  Reader r(in);
  std::string a, b, c;
  while (!r.Done()) {
    switch (r.Tag()) {
      case 'R': {
        int n = 0;
        if (!r.Next(&a) || !absl::SimpleAtoi(a, &n)) return std::nullopt;
        d.reason = static_cast<ErrorReason>(n);
        break;
      }
      case 'M':
        if (!r.Next(&a) || !r.Next(&b)) return std::nullopt;
        d.metadata[a] = b;
        break;
      case 'F':
        if (!r.Next(&a) || !r.Next(&b)) return std::nullopt;
        d.field_violations.push_back({a, b});
        break;
      case 'Q':
        if (!r.Next(&a) || !r.Next(&b)) return std::nullopt;
        d.quota_violations.push_back({a, b});
        break;
      case 'P':
        if (!r.Next(&a) || !r.Next(&b) || !r.Next(&c)) return std::nullopt;
        d.precondition_violations.push_back({a, b, c});
        break;
      case 'I':
        if (!r.Next(&a) || !r.Next(&b) || !r.Next(&c)) return std::nullopt;
        d.resource = ResourceRef{a, b, c};
        break;
      case 'D': {
        int64_t nanos = 0;
        if (!r.Next(&a) || !absl::SimpleAtoi(a, &nanos)) return std::nullopt;
        d.retry_delay = absl::Nanoseconds(nanos);
        break;
      }
      default:
        return std::nullopt;
    }
  }
  return d;
}

}  // namespace

absl::string_view ErrorReasonName(ErrorReason reason) { return InfoOf(reason).name; }

const std::vector<ErrorReason>& AllErrorReasons() {
  static const auto* all = [] {
    auto* v = new std::vector<ErrorReason>;
    for (const ReasonInfo& info : kReasons) {
      if (info.reason != ErrorReason::kUnspecified) v->push_back(info.reason);
    }
    return v;
  }();
  return *all;
}

absl::StatusCode ErrorReasonCode(ErrorReason reason) { return InfoOf(reason).code; }

ErrorReason GenericReasonFor(absl::StatusCode code) {
  switch (code) {
    case C::kOk: return R::kUnspecified;
    case C::kCancelled: return R::kCancelled;
    case C::kInvalidArgument: return R::kInvalidRequest;
    case C::kDeadlineExceeded: return R::kDeadlineExceeded;
    case C::kNotFound: return R::kResourceNotFound;
    case C::kAlreadyExists: return R::kResourceAlreadyExists;
    case C::kPermissionDenied: return R::kPermissionDenied;
    case C::kResourceExhausted: return R::kResourceExhausted;
    case C::kFailedPrecondition: return R::kPreconditionFailed;
    case C::kAborted: return R::kConcurrentChange;
    case C::kOutOfRange: return R::kOutOfRange;
    case C::kUnimplemented: return R::kNotImplemented;
    case C::kUnavailable: return R::kServiceUnavailable;
    case C::kUnauthenticated: return R::kUnauthenticated;
    default: return R::kInternalError;  // UNKNOWN, INTERNAL, DATA_LOSS
  }
}

absl::Status WithDetails(absl::Status status, const ErrorDetails& details) {
  if (status.ok()) return status;
  status.SetPayload(kErrorDetailsTypeUrl, absl::Cord(Encode(details)));
  return status;
}

absl::Status WithReason(absl::Status status, ErrorReason reason) {
  ErrorDetails details;
  details.reason = reason;
  return WithDetails(std::move(status), details);
}

std::optional<ErrorDetails> DetailsOf(const absl::Status& status) {
  auto payload = status.GetPayload(kErrorDetailsTypeUrl);
  if (!payload) return std::nullopt;
  return Decode(std::string(*payload));
}

absl::Status ReasonError(std::string message, ErrorDetails details) {
  return WithDetails(absl::Status(ErrorReasonCode(details.reason), message), details);
}

absl::Status InvalidFieldError(absl::string_view field, absl::string_view rule) {
  return InvalidFieldsError(absl::StrCat(field, ": ", rule),
                            {FieldViolation{std::string(field), std::string(rule)}});
}

absl::Status InvalidFieldsError(std::string message, std::vector<FieldViolation> violations) {
  ErrorDetails d;
  d.reason = ErrorReason::kInvalidField;
  d.field_violations = std::move(violations);
  return ReasonError(std::move(message), std::move(d));
}

absl::Status InvalidFieldLinesError(const std::vector<std::string>& lines) {
  std::vector<FieldViolation> violations;
  for (const std::string& line : lines) {
    size_t at = line.find(": ");
    if (at == std::string::npos) {
      violations.push_back({"", line});
    } else {
      violations.push_back({line.substr(0, at), line.substr(at + 2)});
    }
  }
  return InvalidFieldsError(absl::StrJoin(lines, "\n"), std::move(violations));
}

absl::Status NotFoundError(ErrorReason reason, absl::string_view type, absl::string_view name,
                           std::string message) {
  if (message.empty()) message = absl::StrCat(type, " ", name, " does not exist");
  ErrorDetails d;
  d.reason = reason;
  d.metadata[std::string(type)] = std::string(name);
  d.resource = ResourceRef{std::string(type), std::string(name), message};
  return ReasonError(std::move(message), std::move(d));
}

absl::Status VersionMismatchError(absl::string_view type, absl::string_view name,
                                  int64_t current_version, int64_t expected_version,
                                  std::string message) {
  if (message.empty()) {
    message = absl::StrCat(type, " ", name, " is at version ", current_version,
                           ", not expected_version ", expected_version,
                           ": it changed since you read it; re-read and retry");
  }
  ErrorDetails d;
  d.reason = ErrorReason::kVersionMismatch;
  d.metadata = {{std::string(type), std::string(name)},
                {"current_version", absl::StrCat(current_version)},
                {"expected_version", absl::StrCat(expected_version)}};
  d.precondition_violations.push_back(
      {"VERSION", absl::StrCat(type, "/", name),
       absl::StrCat("at version ", current_version, ", not ", expected_version)});
  return ReasonError(std::move(message), std::move(d));
}

absl::Status PreconditionError(ErrorReason reason, absl::string_view type,
                               absl::string_view subject, std::string message,
                               std::map<std::string, std::string> metadata) {
  ErrorDetails d;
  d.reason = reason;
  d.metadata = std::move(metadata);
  d.precondition_violations.push_back({std::string(type), std::string(subject), message});
  return ReasonError(std::move(message), std::move(d));
}

absl::Status OrgGpuQuotaExceededError(absl::string_view org, absl::string_view class_id,
                                      int64_t held, int64_t quota, int64_t requested) {
  return OrgGpuQuotaExceededInSevenths(org, class_id, held * kMigComputeSlices, quota,
                                       requested * kMigComputeSlices);
}

std::string GpuSeventhsFigure(int64_t sevenths) {
  if (sevenths % kMigComputeSlices == 0) return absl::StrCat(sevenths / kMigComputeSlices);
  return absl::StrFormat("%.2f", static_cast<double>(sevenths) / kMigComputeSlices);
}

absl::Status OrgGpuQuotaExceededInSevenths(absl::string_view org, absl::string_view class_id,
                                           int64_t held_sevenths, int64_t quota,
                                           int64_t requested_sevenths) {
  const std::string held = GpuSeventhsFigure(held_sevenths);
  const std::string requested = GpuSeventhsFigure(requested_sevenths);
  std::string message = absl::StrCat("org ", org, " holds ", held, " GPUs of its quota of ", quota,
                                     "; class ", class_id, " needs ", requested, " more");
  ErrorDetails d;
  d.reason = ErrorReason::kOrgGpuQuotaExceeded;
  d.metadata = {{"org", std::string(org)},
                {"class", std::string(class_id)},
                {"gpu_quota", absl::StrCat(quota)},
                {"gpus_held", absl::StrCat(held)},
                {"gpus_requested", absl::StrCat(requested)}};
  d.quota_violations.push_back({absl::StrCat("org:", org), message});
  return ReasonError(std::move(message), std::move(d));
}

absl::Status TooManyRequestsError(std::string message, absl::Duration retry_delay,
                                  std::map<std::string, std::string> metadata) {
  ErrorDetails d;
  d.reason = ErrorReason::kTooManyRequests;
  d.metadata = std::move(metadata);
  d.retry_delay = retry_delay;
  return ReasonError(std::move(message), std::move(d));
}

absl::Status DatabaseUnavailableError(std::string message) {
  ErrorDetails d;
  d.reason = ErrorReason::kDatabaseUnavailable;
  d.retry_delay = kDatabaseRetryDelay;
  return ReasonError(std::move(message), std::move(d));
}

}  // namespace wsched::core
