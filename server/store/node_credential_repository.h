// Node credentials' SQL (migration 0011): the SHA-256 of each node's own
// bearer token. Writes record a node_credential change, so every replica's
// directory follows (inventory/node_credentials.h).
#ifndef WSCHED_SERVER_STORE_NODE_CREDENTIAL_REPOSITORY_H_
#define WSCHED_SERVER_STORE_NODE_CREDENTIAL_REPOSITORY_H_

#include <optional>
#include <string>
#include <vector>

#include <pqxx/pqxx>

#include "absl/time/time.h"
#include "server/store/types.h"

namespace wsched::store {

// Stores the node's first credential; nullopt (nothing written) when the
// node has one already or another node has this token.
std::optional<NodeCredentialRow> InsertNodeCredential(pqxx::work& txn, const std::string& node,
                                                      const std::string& token_sha256,
                                                      const std::string& issued_by,
                                                      ChangeSet& changes);
// Stores or replaces the node's credential (the node must exist);
// nullopt when another node has this token.
std::optional<NodeCredentialRow> ReplaceNodeCredential(pqxx::work& txn, const std::string& node,
                                                       const std::string& token_sha256,
                                                       const std::string& issued_by,
                                                       ChangeSet& changes);
// False when the node had none.
bool DeleteNodeCredential(pqxx::work& txn, const std::string& node, ChangeSet& changes);
// Those of `nodes` that have one; every one when `nodes` is empty.
std::vector<NodeCredentialRow> LoadNodeCredentials(pqxx::work& txn,
                                                   const std::vector<std::string>& nodes);

}  // namespace wsched::store

#endif  // WSCHED_SERVER_STORE_NODE_CREDENTIAL_REPOSITORY_H_
