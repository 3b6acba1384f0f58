#include "server/watch/node_change.h"

#include "absl/strings/str_cat.h"

namespace wsched::watch {
namespace {

NodeWhat WhatOf(const NodeHappened &happened) {
  if (!happened.after)
    return NodeWhat::kRemoved;
  return happened.registered ? NodeWhat::kRegistered : NodeWhat::kChanged;
}

} // namespace

const char *NodeWhatName(NodeWhat what) {
  switch (what) {
  case NodeWhat::kExisting:
    return "existing";
  case NodeWhat::kRegistered:
    return "registered";
  case NodeWhat::kChanged:
    return "changed";
  case NodeWhat::kRemoved:
    return "removed";
  }
  return "unknown";
}

bool Selects(const NodeFilter &filter, const NodeHappened &happened) {
  return (filter.pool.empty() || filter.pool == happened.pool) &&
         (filter.node.empty() || filter.node == happened.name);
}

std::optional<NodeChange>
Classify(const NodeFilter &filter,
         const std::shared_ptr<const NodeHappened> &happened) {
  if (!Selects(filter, *happened))
    return std::nullopt;
  // Neither the pool nor the name changes: a node never leaves a filter.
  return NodeChange{WhatOf(*happened), false, happened};
}

std::string IndexKeyOf(const NodeFilter &filter) {
  if (!filter.node.empty())
    return absl::StrCat("node:", filter.node);
  if (!filter.pool.empty())
    return absl::StrCat("pool:", filter.pool);
  return "*";
}

void KeysOf(const NodeHappened &happened,
            absl::flat_hash_set<std::string> &keys) {
  keys.insert(absl::StrCat("node:", happened.name));
  keys.insert(absl::StrCat("pool:", happened.pool));
}

} // namespace wsched::watch
