// What wschedctl prints of a refusal beyond its code and message: the
// reason from the google.rpc.Status the server sends in the
// grpc-status-details-bin trailer, and each detail a person acts on (the
// fields that are wrong, the quota figures, the failed precondition, when
// to retry). docs/api.md lists the reasons.
#ifndef WSCHED_SERVER_CLI_ERROR_DETAILS_H_
#define WSCHED_SERVER_CLI_ERROR_DETAILS_H_

#include <string>
#include <vector>

#include <grpcpp/grpcpp.h>

namespace wsched::cli {

// ErrorInfo.reason ("ORG_GPU_QUOTA_EXCEEDED"), or "" when the status has no
// details (an old server, or gRPC's own refusals).
std::string ErrorReason(const grpc::Status& status);

// ErrorInfo.metadata[key] ("last_version" of WATCH_TOO_SLOW), or "" when
// the status has no ErrorInfo or it lacks the key.
std::string ErrorMetadata(const grpc::Status& status, const std::string& key);

// One line per detail, e.g. "reason: ORG_GPU_QUOTA_EXCEEDED (org=o-1 ...)",
// "field settings.allowed_classes[1]: class x does not exist",
// "quota org:o-1: ...", "retry after: 0.2s". Empty without details.
std::vector<std::string> DetailLines(const grpc::Status& status);

}  // namespace wsched::cli

#endif  // WSCHED_SERVER_CLI_ERROR_DETAILS_H_
