// A node pool: a group of identical nodes the autoscaler sizes.
#ifndef WSCHED_SERVER_CORE_POOL_H_
#define WSCHED_SERVER_CORE_POOL_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/time/civil_time.h"
#include "absl/time/time.h"

namespace wsched::core {

// Allocatable resources of one node.
struct NodeShape {
  int64_t cpu_millis = 0;
  int64_t memory_bytes = 0;
  int64_t ephemeral_storage_bytes = 0;
  int64_t disk_bytes = 0;
  int gpus_per_node = 0;
  std::string gpu_model;  // Empty for CPU pools.
  friend bool operator==(const NodeShape&, const NodeShape&) = default;
};

inline constexpr int kMinutesPerDay = 24 * 60;

// A weekly time-of-day window, read in the local time of its schedule's
// time zone (so "08:00" stays 08:00 across DST changes).
struct TimeWindow {
  // Days on which the window starts; empty means every day. A window that
  // wraps past midnight ("22:00-06:00") belongs to the day it starts on.
  std::vector<absl::Weekday> days;
  int start_minute = 0;  // Minutes after local midnight, [0, 1440).
  // Exclusive, [0, 1440]: 1440 is midnight at the end of the day. Before
  // start: wraps past midnight. Equal to start: the whole day.
  int end_minute = kMinutesPerDay;
  friend bool operator==(const TimeWindow&, const TimeWindow&) = default;
};

struct WarmBufferWindow {
  TimeWindow when;
  int nodes = 0;
  friend bool operator==(const WarmBufferWindow&, const WarmBufferWindow&) = default;
};

// Extra empty nodes kept ready so a new workspace does not wait for a node
// to boot: a constant, or a weekly schedule ("2 nodes on weekdays
// 08:00-18:00 Europe/Berlin, none otherwise").
struct WarmBuffer {
  // Outside every window; the whole buffer when there are no windows.
  int default_nodes = 0;
  // An IANA name ("Europe/Berlin") or a fixed offset ("UTC", "+01:00");
  // empty reads the windows in UTC.
  std::string time_zone;
  // The first window that covers a moment wins, so a window can lower the
  // buffer too (e.g. weekends at 0 ahead of an every-day window).
  std::vector<WarmBufferWindow> windows;

  static WarmBuffer Constant(int nodes) { return {.default_nodes = nodes}; }
  bool is_constant() const { return windows.empty(); }
  friend bool operator==(const WarmBuffer&, const WarmBuffer&) = default;
};

struct ScaleDownWindow {
  TimeWindow when;
  bool allow = false;
  friend bool operator==(const ScaleDownWindow&, const ScaleDownWindow&) = default;
};

// When idle nodes may be removed ("never during business hours"). Only idle
// nodes wait for it: broken nodes are no capacity and go at any time.
struct ScaleDownSchedule {
  // Outside every window.
  bool default_allow = true;
  std::string time_zone;  // As WarmBuffer::time_zone.
  // The first window that covers a moment wins.
  std::vector<ScaleDownWindow> windows;

  bool empty() const { return windows.empty() && default_allow; }
  friend bool operator==(const ScaleDownSchedule&, const ScaleDownSchedule&) = default;
};

struct ScaleDownSettings {
  // A node must be empty this long before it is named for removal.
  absl::Duration unneeded = absl::Minutes(10);
  // No scale-down of a pool this soon after it scaled up.
  absl::Duration delay_after_add = absl::Minutes(10);
  // Empty: scale-down is allowed at any time.
  ScaleDownSchedule schedule;
  friend bool operator==(const ScaleDownSettings&, const ScaleDownSettings&) = default;
};

// Which driver a pool's GPUs are bound to on the host (docs/catalog.md
// "Pools"): the NVIDIA driver for containers, or vfio-pci for VMs. The agent
// of a vfio pool binds each GPU's IOMMU group itself (docs/agent.md "VFIO
// binding"); placement hands out only GPUs bound as the pool needs.
enum class GpuBinding {
  kHost,  // The host's driver (nvidia); container classes.
  kVfio,  // vfio-pci, the GPU and its whole IOMMU group; vm classes.
};

// Who runs a GPU node's driver installer (docs/operations.md "Driver
// installs"): an operator by hand, the node's own agent, or the scaling
// leader through an admin-given command per node.
enum class DriverInstall {
  kManual,   // An operator runs the image and reports (wschedctl driver-report).
  kNode,     // The node's agent runs the image with podman and reports.
  kCluster,  // The scaling leader runs a command per node.
};

// How a driver policy change rolls through a pool (docs/operations.md
// "Driver rollouts"). A kernel change is not a rollout: that node has no
// working driver and installs at once.
struct DriverRollout {
  // Nodes released to install at once; the first one of a rollout is the
  // canary, alone until it is ready on the new driver.
  int max_unavailable = 1;
  // How long a released node waits for its last workspace to end before its
  // install starts anyway; zero waits for as long as they run.
  absl::Duration drain_deadline = absl::ZeroDuration();
  friend bool operator==(const DriverRollout&, const DriverRollout&) = default;
};

// How a GPU pool's GPUs are cut into MIG slices (docs/catalog.md "Slices of
// a GPU"). Placement always uses what each GPU reports; the layout says what
// the node's agent makes of a GPU that holds nothing.
enum class MigLayoutKind {
  kWhole,     // No MIG: GPUs are handed out whole (the default).
  kFixed,     // Every GPU cut into `MigLayout::profiles`, once, while it holds nothing.
  kByDemand,  // Re-cut a GPU that holds nothing when pending work needs a profile no free slot holds.
};

struct MigLayout {
  MigLayoutKind kind = MigLayoutKind::kWhole;
  // kFixed: the profiles of one GPU ("3g.71gb", "2g.35gb", "1g.18gb",
  // "1g.18gb"), laid out in this order by core::LayOutMig (core/mig_layout.h:
  // each at the lowest free legal start that leaves the rest a start);
  // kByDemand: the layout a GPU starts with (empty: seven of the smallest).
  std::vector<std::string> profiles;
  friend bool operator==(const MigLayout&, const MigLayout&) = default;
};

const char* MigLayoutKindName(MigLayoutKind kind);  // "whole", "fixed", "by_demand".
std::optional<MigLayoutKind> ParseMigLayoutKind(absl::string_view name);

struct NodePool {
  std::string id;  // DNS label.
  std::map<std::string, std::string> labels;
  NodeShape shape;
  int min_size = 0;
  int max_size = 0;
  ScaleDownSettings scale_down;
  // A node not registered within this time counts as failed.
  absl::Duration max_node_provision_time = absl::Minutes(15);
  // Extra empty nodes kept ready.
  WarmBuffer warm_buffer;
  // Let VM classes take GPUs whose IOMMU group holds foreign devices.
  bool allow_unsafe_iommu = false;
  GpuBinding gpu_binding = GpuBinding::kHost;
  DriverInstall driver_install = DriverInstall::kManual;
  DriverRollout driver_rollout;
  MigLayout mig;  // GPU pools of a MIG-capable model only.
  int64_t version = 0;  // Etag; bumped by the store when an apply changes the spec.

  bool is_gpu() const { return shape.gpus_per_node > 0; }

  // Equal in everything an admin sets (ignores version).
  bool SameSpec(const NodePool& other) const {
    NodePool a = *this, b = other;
    a.version = b.version = 0;
    return a == b;
  }

  // True when every selector label is on the pool.
  bool Matches(const std::map<std::string, std::string>& selector) const {
    for (const auto& [key, value] : selector) {
      auto it = labels.find(key);
      if (it == labels.end() || it->second != value) return false;
    }
    return true;
  }
  friend bool operator==(const NodePool&, const NodePool&) = default;
};

// The pool of `pools` with this id; null when none.
inline const NodePool* FindPool(const std::vector<NodePool>& pools, absl::string_view id) {
  for (const NodePool& pool : pools) {
    if (pool.id == id) return &pool;
  }
  return nullptr;
}

}  // namespace wsched::core

#endif  // WSCHED_SERVER_CORE_POOL_H_
