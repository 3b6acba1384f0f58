// Node identity of agent calls (docs/security.md, "Node identity"): a
// credential bound to a node speaks for that node alone, a bootstrap
// credential only registers new nodes, admins speak for every node. Every
// agent RPC that names a node (register, heartbeat, get) asks here first.
#ifndef WSCHED_SERVER_GRPC_NODE_IDENTITY_H_
#define WSCHED_SERVER_GRPC_NODE_IDENTITY_H_

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "server/grpc/principal.h"
#include "server/metrics/metrics.h"
#include "server/inventory/node_inventory.h"

namespace wsched::grpc_api {

// OK when `who` may report for, or read, `node`; otherwise
// PERMISSION_DENIED: NOT_THIS_NODE, or BOOTSTRAP_REGISTERS_ONLY for a
// bootstrap credential. Refusals are counted in `metrics` when given.
absl::Status CheckSpeaksForNode(const Principal& who, const std::string& node,
                                absl::string_view method, metrics::Metrics* metrics);

// What RegisterNode does about credentials: nullopt to register as usual,
// or the credential a bootstrap registration stores. Bootstrap needs
// `node_token_sha256` (validated hex); any other caller must leave it empty.
absl::StatusOr<std::optional<inventory::NewNodeCredential>> RegistrationCredential(
    const Principal& who, const std::string& node, const std::string& node_token_sha256,
    metrics::Metrics* metrics);

// Counts a refusal the inventory made (BOOTSTRAP_NODE_EXISTS); returns it.
absl::Status CountedNodeIdentityRefusal(absl::Status status, metrics::Metrics* metrics);

}  // namespace wsched::grpc_api

#endif  // WSCHED_SERVER_GRPC_NODE_IDENTITY_H_
