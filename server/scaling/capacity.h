// Node-shape arithmetic for scaling: how much room a node has, what one
// workspace of a class takes, and how many fit (the pool's density).
//
// placement::Resources and its fit functions (placement/resources.h, the
// model the decision uses) plus whole GPUs: GPUs are usually the dimension
// that decides how many nodes a GPU pool needs.
#ifndef WSCHED_SERVER_SCALING_CAPACITY_H_
#define WSCHED_SERVER_SCALING_CAPACITY_H_

#include <cstdint>
#include <limits>

#include "server/core/pool.h"
#include "server/core/workspace_class.h"
#include "server/placement/resources.h"

namespace wsched::scaling {

struct Capacity {
  // A pool shape may leave a dimension at 0 (e.g. disk it does not manage);
  // that dimension then never limits density. Large but far from overflow,
  // so subtracting requests from it stays exact.
  static constexpr int64_t kUnlimited = placement::kUnstated;

  int64_t gpus = 0;
  int64_t cpu_millis = 0;
  int64_t memory_bytes = 0;
  int64_t ephemeral_storage_bytes = 0;
  int64_t disk_bytes = 0;

  // Everything a fresh node of this shape offers. GPUs are always counted
  // (0 GPUs means a CPU node, which can hold no GPU workspace).
  static Capacity OfShape(const core::NodeShape& shape);
  // What one workspace takes: its CPU request (limits may overcommit), memory,
  // storage and whole GPUs.
  static Capacity OfClass(const core::WorkspaceClass& workspace_class);

  // Without the GPUs: what placement's fit functions take.
  placement::Resources resources() const {
    return {cpu_millis, memory_bytes, ephemeral_storage_bytes, disk_bytes};
  }

  Capacity& operator-=(const Capacity& other);
  friend bool operator==(const Capacity&, const Capacity&) = default;
};

// How many `item`s fit into `room`; int max when the item takes nothing.
int64_t HowManyFit(const Capacity& room, const Capacity& item);

// Density: workspaces of this class per empty node of this shape, i.e.
// floor(G / k) for a k-GPU class on G-GPU nodes, lowered by CPU, memory and
// storage. 0: the class can never fit this pool.
int64_t WorkspacesPerNode(const core::NodeShape& shape,
                          const core::WorkspaceClass& workspace_class);

}  // namespace wsched::scaling

#endif  // WSCHED_SERVER_SCALING_CAPACITY_H_
