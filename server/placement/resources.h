// Exact free capacity of a node and what a workspace takes from it: the
// one fit model. The decision (decide.h), the pending reasons
// (pending_reason.h) and the scaler's node count (scaling/capacity.h,
// scaling/binpack.h) all ask these functions whether, and how many times,
// a class fits.
#ifndef WSCHED_SERVER_PLACEMENT_RESOURCES_H_
#define WSCHED_SERVER_PLACEMENT_RESOURCES_H_

#include <cstdint>
#include <limits>
#include <string>

#include "server/core/node.h"
#include "server/core/pool.h"
#include "server/core/workspace_class.h"

namespace wsched::placement {

// Integers only (millicores, bytes): placement never rounds.
struct Resources {
  int64_t cpu_millis = 0;
  int64_t memory_bytes = 0;
  int64_t ephemeral_storage_bytes = 0;
  int64_t disk_bytes = 0;

  Resources& operator+=(const Resources& other);
  Resources& operator-=(const Resources& other);
  friend Resources operator+(Resources a, const Resources& b) { return a += b; }
  friend Resources operator-(Resources a, const Resources& b) { return a -= b; }
  friend bool operator==(const Resources&, const Resources&) = default;
};

// What a workspace of this class takes from a node. CPU counts at its
// request, not its limit: limits may overcommit, requests may not.
Resources RequestOf(const core::WorkspaceClass& cls);

// What the agent says the node can give to workspaces.
Resources AllocatableOf(const core::NodeInfo& node);

// True when `free` covers `request` in every dimension.
bool Covers(const Resources& free, const Resources& request);

// A dimension a pool's shape leaves at zero is not stated: it limits
// nothing (core/feasibility.h). Large but far from overflow, so sums and
// differences of a few stay exact.
inline constexpr int64_t kUnstated = std::numeric_limits<int64_t>::max() / 4;

// The room of a fresh node of `shape` (kUnstated where the shape is silent).
Resources RoomOfShape(const core::NodeShape& shape);

// How many `request`s `room` holds at once: 0 exactly when it does not
// cover one; a dimension the request does not use limits nothing (the
// largest int64 when the request uses none).
int64_t HowManyFit(const Resources& room, const Resources& request);

// "4 CPU, 16Gi memory, 20Gi ephemeral storage, 50Gi disk" (zero parts left out).
std::string DescribeResources(const Resources& resources);

}  // namespace wsched::placement

#endif  // WSCHED_SERVER_PLACEMENT_RESOURCES_H_
