#include "server/grpc/node_identity.h"

#include "absl/strings/str_cat.h"
#include "server/core/error_reason.h"
#include "server/grpc/token_hash.h"

namespace wsched::grpc_api {
namespace {

const char* MetricLabel(core::ErrorReason reason) {
  switch (reason) {
    case core::ErrorReason::kNotThisNode: return "not_this_node";
    case core::ErrorReason::kBootstrapNodeExists: return "bootstrap_node_exists";
    case core::ErrorReason::kBootstrapRegistersOnly: return "bootstrap_registers_only";
    default: return nullptr;
  }
}

absl::Status Refuse(absl::Status refusal, metrics::Metrics* metrics) {
  return CountedNodeIdentityRefusal(std::move(refusal), metrics);
}

absl::Status BootstrapRegistersOnly(const Principal& who, absl::string_view method) {
  return core::ReasonError(
      absl::StrCat(who.name, " is a bootstrap credential: it registers new nodes only; ", method,
                   " takes the node's own token"),
      {.reason = core::ErrorReason::kBootstrapRegistersOnly,
       .metadata = {{"principal", who.name}, {"method", std::string(method)}}});
}

}  // namespace

absl::Status CountedNodeIdentityRefusal(absl::Status status, metrics::Metrics* metrics) {
  if (metrics == nullptr || status.ok()) return status;
  std::optional<core::ErrorDetails> details = core::DetailsOf(status);
  if (details) {
    if (const char* label = MetricLabel(details->reason)) metrics->NodeIdentityRefused(label);
  }
  return status;
}

absl::Status CheckSpeaksForNode(const Principal& who, const std::string& node,
                                absl::string_view method, metrics::Metrics* metrics) {
  if (who.SpeaksForNode(node)) return absl::OkStatus();
  if (who.bootstrap) return Refuse(BootstrapRegistersOnly(who, method), metrics);
  return Refuse(core::ReasonError(
                    absl::StrCat(who.name, " speaks for node ", who.node, " only, not for ", node),
                    {.reason = core::ErrorReason::kNotThisNode,
                     .metadata = {{"principal", who.name},
                                  {"node", who.node},
                                  {"requested_node", node}}}),
                metrics);
}

absl::StatusOr<std::optional<inventory::NewNodeCredential>> RegistrationCredential(
    const Principal& who, const std::string& node, const std::string& node_token_sha256,
    metrics::Metrics* metrics) {
  if (!who.bootstrap) {
    if (!node_token_sha256.empty()) {
      return core::InvalidFieldError("node_token_sha256",
                                     "only a bootstrap credential registers a node token");
    }
    if (absl::Status s = CheckSpeaksForNode(who, node, "RegisterNode", metrics); !s.ok()) return s;
    return std::nullopt;
  }
  if (node_token_sha256.empty()) {
    return core::InvalidFieldError(
        "node_token_sha256",
        "is required with a bootstrap credential: the SHA-256 of the token the node will use");
  }
  absl::StatusOr<TokenDigest> digest = ParseHexDigest(node_token_sha256);
  if (!digest.ok()) return core::InvalidFieldError("node_token_sha256", digest.status().message());
  return inventory::NewNodeCredential{std::string(digest->begin(), digest->end()), who.name};
}

}  // namespace wsched::grpc_api
