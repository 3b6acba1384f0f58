// VFIO binding: in a pool with gpu_binding vfio the agent binds each NVIDIA
// GPU and every member of its IOMMU group except PCI bridges to vfio-pci, so
// a VM can take the group (docs/agent.md "VFIO binding").
//
// Per device, in the kernel's order (Documentation/PCI/sysfs-pci.rst,
// driver_override): write "vfio-pci" to
// /sys/bus/pci/devices/<bdf>/driver_override, write the address to
// .../<bdf>/driver/unbind when it is bound to another driver, then write the
// address to /sys/bus/pci/drivers_probe, which binds it to the override.
// Devices already on vfio-pci are left alone, so a bound node costs no
// writes per cycle; bridges stay on pcieport (VFIO accepts a group whose
// bridges do) and nothing outside a GPU's group is ever written.
//
// A group with a foreign endpoint (a USB or network controller: unsafe for
// passthrough, core/iommu.h) is not bound: unbinding the host's own devices
// would take them from the host, and placement does not hand such a GPU to
// a VM anyway unless the pool allows it; an operator binds it by hand then.
//
// The writes go through SysfsWriter, so tests run on a fake tree and check
// their order; planning is pure.
#ifndef WSCHED_SERVER_AGENT_VFIO_BIND_H_
#define WSCHED_SERVER_AGENT_VFIO_BIND_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "server/agent/pci.h"
#include "server/agent/rooted_fs.h"

namespace wsched::agent {

// Writes a value to a sysfs attribute.
class SysfsWriter {
 public:
  virtual ~SysfsWriter() = default;
  // `node_path` is absolute, as the node sees it ("/sys/bus/pci/drivers_probe").
  virtual absl::Status Write(const std::string& node_path, const std::string& value) = 0;
};

// Writes below a root (symlinks followed inside it, like RootedFs), and
// never creates a file: a missing attribute is a kernel without it
// (NotFound). Writing sysfs needs root; EACCES comes back as
// PermissionDenied.
class RootedSysfsWriter : public SysfsWriter {
 public:
  explicit RootedSysfsWriter(std::string root) : fs_(std::move(root)) {}
  absl::Status Write(const std::string& node_path, const std::string& value) override;

 private:
  RootedFs fs_;
};

struct SysfsWrite {
  std::string path;
  std::string value;
  friend bool operator==(const SysfsWrite&, const SysfsWrite&) = default;
};

// The writes that bind one device to vfio-pci, in order; none when it is
// bound already.
std::vector<SysfsWrite> PlanVfioBind(const PciFunction& device);

// One IOMMU group holding NVIDIA GPUs, as this cycle left it.
struct GroupBinding {
  int group = -1;
  std::vector<std::string> gpus;      // Addresses, sorted.
  std::vector<SysfsWrite> writes;     // Done this cycle, in order.
  bool bound = false;                 // Every non-bridge member on vfio-pci (before the writes
                                      // or planned by them) and /dev/vfio/<group> exists.
  std::string problem;                // Why not bound; empty when bound.
  // Bound as far as the writes go, but /dev/vfio/<group> is missing: the
  // kernel did not take the group, and no VM can open it.
  bool device_missing = false;
};

// Binds the IOMMU group of every NVIDIA GPU of the node below `fs`'s root
// to vfio-pci (see above), one group after another by group number; a
// failed write ends its group's binding (with the problem), not the others.
// GPUs without an IOMMU group are skipped: VFIO cannot take them at all.
// Fails only when /sys/bus/pci cannot be read.
absl::StatusOr<std::vector<GroupBinding>> BindGpuGroupsToVfio(const RootedFs& fs,
                                                              SysfsWriter& writer);

}  // namespace wsched::agent

#endif  // WSCHED_SERVER_AGENT_VFIO_BIND_H_
