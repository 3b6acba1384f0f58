// Which GPUs of a node share NVLink, from what its agent reports
// (core::Gpu::links): the graph multi-GPU placements pick connected sets
// from and single-GPU placements keep free pairs whole in.
#ifndef WSCHED_SERVER_PLACEMENT_NVLINK_PEERS_H_
#define WSCHED_SERVER_PLACEMENT_NVLINK_PEERS_H_

#include <optional>
#include <utility>
#include <vector>

#include "server/core/node.h"

namespace wsched::placement {

class NvlinkPeers {
 public:
  NvlinkPeers() = default;
  // A pair counts when both GPUs report NVLink to each other: a link only
  // one side claims is a report to distrust, not a promise to place on.
  static NvlinkPeers Of(const std::vector<core::Gpu>& gpus);

  bool empty() const { return pairs_.empty(); }
  bool Linked(int a, int b) const;
  // Every two of `indices` linked (true for fewer than two).
  bool AllLinked(const std::vector<int>& indices) const;
  // The weakest link between any two of `indices` as the GPUs report it;
  // nullopt for fewer than two GPUs or when a pair's link is unknown.
  static std::optional<core::GpuLinkKind> Weakest(const std::vector<core::Gpu>& gpus,
                                                  const std::vector<int>& indices);
  friend bool operator==(const NvlinkPeers&, const NvlinkPeers&) = default;

 private:
  std::vector<std::pair<int, int>> pairs_;  // (lower index, higher), sorted.
};

}  // namespace wsched::placement

#endif  // WSCHED_SERVER_PLACEMENT_NVLINK_PEERS_H_
