// What WatchNodes streams (docs/api.md "Following every node"): one
// committed change of one node (NodeHappened), what a node filter makes of
// it, and the node kind of batch.h. A node stream selects by pool and node
// name, and neither changes for a node (RegisterNode refuses another pool
// for a registered name): a node never leaves a filter, so no facts from
// before the change are kept. Pure.
#ifndef WSCHED_SERVER_WATCH_NODE_CHANGE_H_
#define WSCHED_SERVER_WATCH_NODE_CHANGE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "absl/container/flat_hash_set.h"
#include "server/store/types.h"
#include "server/watch/batch.h"

namespace wsched::watch {

// One node's change as its transaction committed it.
struct NodeHappened {
  std::string name;
  std::string pool;        // Also of a removed node.
  int64_t version = 0;     // The node's version after it.
  bool registered = false; // The change made the node (the listing: false).
  // nullopt: removed. Its held capacity is not followed (it moves with
  // every placement and bumps no version).
  std::optional<store::StoredNode> after;
};

enum class NodeWhat { kExisting, kRegistered, kChanged, kRemoved };
const char *NodeWhatName(NodeWhat what);

// Which nodes a WatchNodes stream follows: each set field narrows.
struct NodeFilter {
  std::string pool;
  std::string node;
};

// The kind WatchNodes follows (batch.h).
struct NodeKind {
  using Happened = NodeHappened;
  using What = NodeWhat;
  using Filter = NodeFilter;
  static constexpr char kName[] = "node";
};

using NodeEntry = BasicEntry<NodeKind>;
using NodeChange = BasicChange<NodeKind>;
using NodeBatch = BasicBatch<NodeKind>;

// The node `happened` changed is one `filter` follows.
bool Selects(const NodeFilter &filter, const NodeHappened &happened);

// What `filter`'s stream says of `happened`: nothing when the node is not
// one it follows.
std::optional<NodeChange>
Classify(const NodeFilter &filter,
         const std::shared_ptr<const NodeHappened> &happened);

// The fanout's index (fanout.h): a filter is filed under its node, else
// its pool, else "*"; a change matters to the streams filed under its
// node's name and pool.
std::string IndexKeyOf(const NodeFilter &filter);
void KeysOf(const NodeHappened &happened,
            absl::flat_hash_set<std::string> &keys);

} // namespace wsched::watch

#endif // WSCHED_SERVER_WATCH_NODE_CHANGE_H_
