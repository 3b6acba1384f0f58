// Validation of every RPC's request message, before any read or write:
// each string and list is bounded, enums are known values, ids have their
// syntax. Rules that need stored state (does the class exist?) stay in the
// handlers. Errors are INVALID_ARGUMENT naming the field and the rule.
#ifndef WSCHED_SERVER_GRPC_REQUEST_VALIDATION_H_
#define WSCHED_SERVER_GRPC_REQUEST_VALIDATION_H_

#include <string>
#include <vector>

#include <google/protobuf/message.h>

#include "absl/status/status.h"
#include "wsched/v1/audit.pb.h"
#include "wsched/v1/classes.pb.h"
#include "wsched/v1/inventory.pb.h"
#include "wsched/v1/placement.pb.h"
#include "wsched/v1/scaling.pb.h"
#include "wsched/v1/settings.pb.h"
#include "wsched/v1/usage.pb.h"

namespace wsched::grpc_api {

// The largest catalog ApplyCatalog takes (the receive limit caps it too).
inline constexpr size_t kMaxCatalogBytes = 4 << 20;
// No validated request holds a longer string (the catalog YAML aside) or a
// longer list; the fuzz target for requests checks this of every message.
inline constexpr size_t kMaxValidatedStringBytes = 4096;
inline constexpr int kMaxValidatedListEntries = 1000;

absl::Status ValidateRequest(const v1::ListClassesRequest& request);
absl::Status ValidateRequest(const v1::GetClassRequest& request);
absl::Status ValidateRequest(const v1::UpdateClassRequest& request);
absl::Status ValidateRequest(const v1::DeleteClassRequest& request);
absl::Status ValidateRequest(const v1::ApplyCatalogRequest& request);
absl::Status ValidateRequest(const v1::GetCatalogRequest& request);

absl::Status ValidateRequest(const v1::GetProjectSettingsRequest& request);
absl::Status ValidateRequest(const v1::SetProjectSettingsRequest& request);
absl::Status ValidateRequest(const v1::GetOrgSettingsRequest& request);
absl::Status ValidateRequest(const v1::SetOrgSettingsRequest& request);
absl::Status ValidateRequest(const v1::ResolveClassRequest& request);

absl::Status ValidateRequest(const v1::RegisterNodeRequest& request);
absl::Status ValidateRequest(const v1::HeartbeatRequest& request);
absl::Status ValidateRequest(const v1::NodeNameRequest& request);
absl::Status ValidateRequest(const v1::ListNodesRequest& request);
absl::Status ValidateRequest(const v1::WatchNodesRequest &request);
absl::Status ValidateRequest(const v1::ListPoolsRequest& request);
absl::Status ValidateRequest(const v1::ListDriverWorkRequest& request);
absl::Status ValidateRequest(const v1::ReportDriverInstallRequest& request);
absl::Status ValidateRequest(const v1::ListDriverRolloutsRequest& request);
absl::Status ValidateRequest(const v1::SetDriverRolloutPausedRequest& request);
absl::Status ValidateRequest(const v1::ClearGpuHealthRequest& request);
absl::Status ValidateRequest(const v1::RotateNodeCredentialRequest& request);
absl::Status ValidateRequest(const v1::RevokeNodeCredentialRequest& request);

absl::Status ValidateRequest(const v1::PlaceWorkspaceRequest& request);
absl::Status ValidateRequest(const v1::StopWorkspaceRequest& request);
absl::Status ValidateRequest(const v1::ReportWorkspaceReadyRequest& request);
absl::Status ValidateRequest(const v1::GetWorkspaceRequest& request);
absl::Status ValidateRequest(const v1::ListWorkspacesRequest& request);
absl::Status ValidateRequest(const v1::WatchWorkspaceRequest& request);
absl::Status ValidateRequest(const v1::WatchWorkspacesRequest& request);

absl::Status ValidateRequest(const v1::GetScalingStateRequest& request);
absl::Status ValidateRequest(const v1::WatchScalingSignalsRequest& request);
absl::Status ValidateRequest(const v1::ActuatorReport& request);

absl::Status ValidateRequest(const v1::ListAuditRecordsRequest& request);

absl::Status ValidateRequest(const v1::ListUsageRequest& request);
absl::Status ValidateRequest(const v1::SummarizeUsageRequest& request);
absl::Status ValidateRequest(const v1::GetSpendingForecastRequest& request);

// Any request message of a served RPC, by its type; UNIMPLEMENTED for a
// message type without a validator.
absl::Status ValidateAnyRequest(const google::protobuf::Message& request);

// Lists the request types of the given services' RPCs that have no
// validator (so a new RPC cannot ship unvalidated); OK when none.
absl::Status CheckValidatorsCover(const std::vector<std::string>& service_names);

}  // namespace wsched::grpc_api

#endif  // WSCHED_SERVER_GRPC_REQUEST_VALIDATION_H_
