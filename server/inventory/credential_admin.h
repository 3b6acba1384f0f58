// Changes to node credentials (docs/security.md, "Node identity"): admins
// rotate and revoke them; bootstrap registration and removal change them in
// their own transactions (node_inventory.h) and refresh through here. The
// replica that made a change knows it before it answers; the change feed
// brings it to the others. No state of its own: the copy is NodeCredentials'.
#ifndef WSCHED_SERVER_INVENTORY_CREDENTIAL_ADMIN_H_
#define WSCHED_SERVER_INVENTORY_CREDENTIAL_ADMIN_H_

#include <string>

#include "absl/status/statusor.h"
#include "server/inventory/node_credentials.h"
#include "server/store/database.h"
#include "server/store/types.h"

namespace wsched::inventory {

class CredentialAdmin {
 public:
  // Reads the stored credentials of some nodes (all for an empty list);
  // none without a database.
  static NodeCredentials::Loader LoaderOver(store::Database* db);

  CredentialAdmin(store::Database* db, NodeCredentials* credentials)
      : db_(db), credentials_(credentials) {}

  // The node's credential becomes `token_sha256` (32 raw bytes); the
  // previous one stops working. NOT_FOUND for an unknown node.
  absl::StatusOr<store::NodeCredentialRow> Rotate(const std::string& node,
                                                  const std::string& token_sha256,
                                                  const std::string& issued_by);
  // False when the node had none. NOT_FOUND for an unknown node.
  absl::StatusOr<bool> Revoke(const std::string& node);
  // After a credential change committed: this replica's copy follows now.
  void Refresh(const std::string& node);

 private:
  store::Database* const db_;
  NodeCredentials* const credentials_;
};

}  // namespace wsched::inventory

#endif  // WSCHED_SERVER_INVENTORY_CREDENTIAL_ADMIN_H_
