// What a placed workspace is handed (core/hand_off.h): its GPUs and how to
// mount them, built once at placement and stored with the workspace (so a
// repeated request returns exactly the same answer).
#ifndef WSCHED_SERVER_PIPELINE_DEVICE_SPEC_H_
#define WSCHED_SERVER_PIPELINE_DEVICE_SPEC_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "server/core/hand_off.h"
#include "server/core/node.h"
#include "server/core/pool.h"
#include "server/core/workspace.h"
#include "server/core/workspace_class.h"

namespace wsched::pipeline {

struct BuiltPlacement {
  std::vector<std::string> gpu_uuids;  // Parallel to the indices asked for.
  std::optional<core::WorkspaceSlice> slice;  // BuildSlicePlacement's.
  std::shared_ptr<const core::HandOff> hand_off;
};

// CDI for container isolation, VFIO for VM isolation (never an unsafe group
// unless the pool allows it); the class's extra devices either way.
absl::StatusOr<BuiltPlacement> BuildPlacement(const core::WorkspaceClass& cls,
                                              const core::NodeInfo& node,
                                              const core::NodePool& pool,
                                              const std::vector<int>& gpu_indices);

// The same for a slice class's one MIG slice: always CDI (a VM cannot take
// a slice; catalog validation refuses such a class).
absl::StatusOr<BuiltPlacement> BuildSlicePlacement(const core::WorkspaceClass& cls,
                                                   const core::NodeInfo& node,
                                                   const core::HeldSlice& slice);

}  // namespace wsched::pipeline

#endif  // WSCHED_SERVER_PIPELINE_DEVICE_SPEC_H_
