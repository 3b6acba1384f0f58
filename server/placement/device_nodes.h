// Merging device-node lists without clobbering (the fuse/tun lesson).
//
// A cloud IDE once installed a fixed device list for /dev/fuse and /dev/net/tun
// that replaced the edits a GPU device plugin had made, and workspaces lost
// their GPU. Here every list is merged: entries are appended, a path appears
// once, and the first entry for a path (GPU and control nodes go first)
// always wins.
#ifndef WSCHED_SERVER_PLACEMENT_DEVICE_NODES_H_
#define WSCHED_SERVER_PLACEMENT_DEVICE_NODES_H_

#include <vector>

#include "absl/status/status.h"
#include "server/core/workspace_class.h"

namespace wsched::placement {

// Appends the entries of `extra` whose path is not in `base` (nor earlier in
// `extra`). Returns how many were appended.
int MergeDeviceNodes(std::vector<core::DeviceNode>& base, const std::vector<core::DeviceNode>& extra);

// A class's extra devices must be plain device nodes under /dev and must not
// name a GPU (/dev/nvidia<N>) or VFIO node: those grant one particular GPU
// and only placement hands them out.
absl::Status CheckClassDevices(const std::vector<core::DeviceNode>& devices);

}  // namespace wsched::placement

#endif  // WSCHED_SERVER_PLACEMENT_DEVICE_NODES_H_
