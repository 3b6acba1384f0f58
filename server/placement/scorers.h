// Scoring policies: which node and which GPUs are best, as plain orderings.
//
// Everything here is "lower is better" and totally ordered, so the capacity
// index can keep nodes sorted by their score and a decision is the first
// entry that passes the filters — no per-decision scoring pass over nodes.
#ifndef WSCHED_SERVER_PLACEMENT_SCORERS_H_
#define WSCHED_SERVER_PLACEMENT_SCORERS_H_

#include <compare>
#include <cstdint>
#include <vector>

namespace wsched::placement {

// Node packing (bin packing, "most allocated" first).
//
// GPU classes: the node with the fewest free GPUs that still fits wins, so
// partly used nodes fill up and idle nodes stay whole and can scale to zero.
//
// CPU classes: also pack, on the least free CPU that fits. Spreading would
// balance noisy neighbours, but it keeps every node a little busy and the
// autoscaler could never empty one; the design puts scale-down first. On a
// GPU pool (a CPU class only gets there when it asks for it) free GPUs still
// come first, so CPU work lands on nodes that GPU work already keeps alive.
//
// Ties go to the node id (insertion order), which makes decisions repeatable
// for a given sequence of snapshot updates.
struct PackingScore {
  int free_gpus = 0;
  int64_t free_cpu_millis = 0;
  friend auto operator<=>(const PackingScore&, const PackingScore&) = default;
};

// GPU set choice within one node, for classes with several GPUs: span as few
// NUMA nodes as possible (GPU<->CPU and peer traffic stays local); then leave
// as few free GPUs behind on the NUMA nodes used (best fit, so a whole NUMA
// node stays free for the next multi-GPU workspace); then lowest indices.
struct GpuSetScore {
  int numa_nodes_spanned = 0;
  int numa_leftover = 0;
  std::vector<int> indices;  // Sorted.
  friend auto operator<=>(const GpuSetScore&, const GpuSetScore&) = default;
};

// The same on a node whose NVLink peers are known (placement/nvlink_peers.h):
// a set whose every two GPUs share NVLink first when the class asks for one
// (unlinked is 0 otherwise); then NUMA span; then how many NVLink pairs
// between a chosen GPU and a free one left behind it breaks, so that free
// pairs stay whole for the classes that need them; then best fit; then
// lowest indices.
struct LinkedSetScore {
  int unlinked = 0;
  int numa_nodes_spanned = 0;
  int broken_pairs = 0;
  int numa_leftover = 0;
  std::vector<int> indices;  // Sorted.
  friend auto operator<=>(const LinkedSetScore&, const LinkedSetScore&) = default;
};

}  // namespace wsched::placement

#endif  // WSCHED_SERVER_PLACEMENT_SCORERS_H_
