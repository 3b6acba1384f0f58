// The usage ledger's core types (core/usage.h) <-> wsched.v1 usage messages.
#ifndef WSCHED_SERVER_CONVERT_USAGE_CONVERT_H_
#define WSCHED_SERVER_CONVERT_USAGE_CONVERT_H_

#include <optional>

#include "server/core/usage.h"
#include "wsched/v1/usage.pb.h"

namespace wsched::convert {

v1::UsageRecord ToProto(const core::UsageRecord& record);
v1::UsageSummaryRow ToProto(const core::UsageSummaryRow& row);
// USAGE_END_REASON_UNSPECIFIED for an open placement.
v1::UsageEndReason ToProto(const std::optional<core::EndReason>& reason);

// nullopt for UNSPECIFIED and unknown values (the request validation
// refuses those first).
std::optional<core::UsageGroup> FromProto(v1::UsageGroupBy group);
std::optional<core::UsageBucket> FromProto(v1::UsageBucket bucket);

}  // namespace wsched::convert

#endif  // WSCHED_SERVER_CONVERT_USAGE_CONVERT_H_
