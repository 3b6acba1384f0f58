// Which node each per-node token belongs to (docs/security.md, "Node
// identity"): this replica's copy of the node_credentials table, by the
// token's SHA-256, so an agent's call is authenticated without a query.
// Every replica follows the table through the change feed (Refresh with
// the names a node_credential change names) and the replica that made a
// change refreshes before it answers, so a revocation holds from the next
// call on that replica and, on the others, once they apply the entry.
//
// Its own locks; it never takes another part's. Reads are a hash lookup.
#ifndef WSCHED_SERVER_INVENTORY_NODE_CREDENTIALS_H_
#define WSCHED_SERVER_INVENTORY_NODE_CREDENTIALS_H_

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "server/store/types.h"

namespace wsched::inventory {

struct NodeBinding {
  std::string node;
  std::string pool;
};

class NodeCredentials {
 public:
  // The stored credentials of `nodes` (all of them for an empty list).
  using Loader =
      std::function<absl::StatusOr<std::vector<store::NodeCredentialRow>>(const std::vector<std::string>&)>;

  explicit NodeCredentials(Loader load) : load_(std::move(load)) {}

  // The node whose token has this SHA-256 (32 raw bytes). The key is a
  // hash of a 256-bit random secret, so a lookup's timing tells a caller
  // nothing it could use.
  std::optional<NodeBinding> Find(absl::string_view token_sha256) const ABSL_LOCKS_EXCLUDED(mu_);

  // Replaces what is known of `nodes` with the database's word (a node
  // without a row has no credential any more).
  absl::Status Refresh(const std::vector<std::string>& nodes) ABSL_LOCKS_EXCLUDED(refresh_mu_, mu_);
  // Replaces everything (start, and a feed gap).
  absl::Status ReloadAll() ABSL_LOCKS_EXCLUDED(refresh_mu_, mu_);

  size_t size() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  void ForgetLocked(const std::string& node) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void PutLocked(const store::NodeCredentialRow& row) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const Loader load_;
  // Held from read to apply, so reads land in the order they were made
  // and an older read never overwrites a newer one.
  absl::Mutex refresh_mu_ ABSL_ACQUIRED_BEFORE(mu_);
  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, NodeBinding> by_digest_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, std::string> digest_of_node_ ABSL_GUARDED_BY(mu_);
};

}  // namespace wsched::inventory

#endif  // WSCHED_SERVER_INVENTORY_NODE_CREDENTIALS_H_
