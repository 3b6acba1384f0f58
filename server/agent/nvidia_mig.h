// MIG as nvidia-smi and the driver's capability files describe it: pure
// parsers, text in, parsed rows out. nvidia_layout.h runs the commands and
// puts the pieces together; docs/agent.md "MIG slices and GPU links".
//
// Every command numbers GPUs by nvidia-smi's index (NVML's order), which is
// not necessarily the driver's device minor that discovery names GPUs by:
// the mode query's pci.bus_id ties the two together.
#ifndef WSCHED_SERVER_AGENT_NVIDIA_MIG_H_
#define WSCHED_SERVER_AGENT_NVIDIA_MIG_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "server/core/mig.h"
#include "server/core/workspace_class.h"

namespace wsched::agent {

// The columns of the MIG mode query, in this order. pci.bus_id is what ties
// nvidia-smi's GPU index to the GPU discovery found in sysfs.
inline constexpr char kMigModeQuery[] = "index,pci.bus_id,mig.mode.current,mig.mode.pending";

struct MigModeLine {
  int index = 0;            // nvidia-smi's GPU index.
  std::string pci_address;  // Normalised, "0000:3b:00.0".
  // False when nvidia-smi gave no mode: "[N/A]" on a GPU without MIG, or a
  // GPU error in its place; `enabled` and `pending_enabled` are then false.
  bool reported = false;
  bool enabled = false;          // mig.mode.current is Enabled.
  bool pending_enabled = false;  // mig.mode.pending is Enabled.
  friend bool operator==(const MigModeLine&, const MigModeLine&) = default;
};

// `nvidia-smi --query-gpu=<kMigModeQuery> --format=csv,noheader`. Lines of
// GPUs nvidia-smi cannot reach ("Unable to determine the device handle ...")
// are skipped: such a GPU has no mode to report. Any other malformed line
// fails the parse, naming the line.
absl::StatusOr<std::vector<MigModeLine>> ParseMigModeCsv(absl::string_view text);

// `nvidia-smi mig -lgip`: per nvidia-smi GPU index, the GPU instance profiles
// in the order printed (two table lines each; the second, CE/JPEG/OFA, is
// skipped), with name ("1g.18gb", "1g.18gb+me": as printed, without "MIG "),
// ID, compute slices (the N of "Ng") and memory (the Memory GiB column).
// `size` and `starts` stay empty: -lgipp says them. "No MIG-enabled devices
// found" is no profiles. A profile row that does not parse, or a profile ID
// twice on one GPU, fails the parse naming the line.
absl::StatusOr<std::map<int, std::vector<core::MigProfile>>> ParseMigProfileTable(
    absl::string_view text);

struct MigPlacements {
  int size = 0;             // Memory slots one instance takes.
  std::vector<int> starts;  // Ascending.
  friend bool operator==(const MigPlacements&, const MigPlacements&) = default;
};

// `nvidia-smi mig -lgipp`: "GPU  0 Profile ID 19 Placements: {0,1,2,3,4,5,6}:1"
// (also the singular "Placement : {0}:8"), per GPU index and profile ID.
// Placements must lie within the kMigMemorySlots slots, starts ascending.
absl::StatusOr<std::map<int, std::map<int, MigPlacements>>> ParseMigPlacements(
    absl::string_view text);

// -lgip and -lgipp together: each profile with its size and starts. A
// profile -lgipp does not place fails the parse (the GPU would seem unable
// to hold it); placements of a profile -lgip did not list are ignored.
absl::StatusOr<std::map<int, std::vector<core::MigProfile>>> ParseMigProfiles(
    absl::string_view lgip, absl::string_view lgipp);

// A row of `nvidia-smi mig -lgi`.
struct MigGpuInstanceRow {
  int gpu = 0;          // nvidia-smi's GPU index.
  std::string profile;  // "3g.71gb", without "MIG ".
  int profile_id = -1;
  int id = -1;  // The GPU instance ID.
  int start = 0;
  int size = 0;
  friend bool operator==(const MigGpuInstanceRow&, const MigGpuInstanceRow&) = default;
};
// "No GPU instances found" is no rows.
absl::StatusOr<std::vector<MigGpuInstanceRow>> ParseMigGpuInstances(absl::string_view text);

// A row of `nvidia-smi mig -lci` (the Placement column, which older drivers
// do not print, is not needed).
struct MigComputeInstanceRow {
  int gpu = 0;
  int gpu_instance = -1;
  std::string profile;  // "3g.71gb" when it spans its GPU instance, "1c.3g.71gb" when not.
  int profile_id = -1;
  int id = -1;  // The compute instance ID.
  friend bool operator==(const MigComputeInstanceRow&, const MigComputeInstanceRow&) = default;
};
// "No compute instances found" is no rows.
absl::StatusOr<std::vector<MigComputeInstanceRow>> ParseMigComputeInstances(absl::string_view text);

// Per GPU index, its GPU instances ordered by ID, each with the compute
// instance that spans it. A GPU instance with no compute instance, with
// several, or with one that takes only part of it (a "1c.3g.71gb" profile)
// is listed, so that its placement shows as taken, with compute_instance -1:
// no one process can use all of it, so wsched cannot hand it out. Fails on
// output that contradicts itself: a GPU instance ID twice, placements that
// overlap or leave the kMigMemorySlots slots, a compute instance of a GPU
// instance that is not listed, or a compute instance ID twice in one.
absl::StatusOr<std::map<int, std::vector<core::MigInstance>>> PairMigInstances(
    const std::vector<MigGpuInstanceRow>& gpu_instances,
    const std::vector<MigComputeInstanceRow>& compute_instances);

// A MIG line of `nvidia-smi -L`, "  MIG 1g.18gb     Device  0: (UUID: MIG-...)",
// under its GPU's line "GPU 0: NVIDIA H200 (UUID: GPU-...)".
struct MigDeviceUuid {
  int gpu = 0;     // nvidia-smi's GPU index, from the GPU line above.
  int device = 0;  // The MIG device index: an enumeration order, not a GI or CI ID.
  std::string profile;
  std::string uuid;  // "MIG-..."
  friend bool operator==(const MigDeviceUuid&, const MigDeviceUuid&) = default;
};
absl::StatusOr<std::vector<MigDeviceUuid>> ParseMigDeviceList(absl::string_view text);

// A "MIG Device" block of `nvidia-smi -q`: under the GPU's
// "GPU 00000000:3B:00.0" line, its Index (the MIG device index -L numbers
// devices by), GPU Instance ID and Compute Instance ID.
struct MigDeviceIds {
  std::string pci_address;  // Normalised.
  int device = 0;
  int gpu_instance = -1;
  int compute_instance = -1;
  friend bool operator==(const MigDeviceIds&, const MigDeviceIds&) = default;
};
// A MIG Device block without all three numbers fails, naming its line.
absl::StatusOr<std::vector<MigDeviceIds>> ParseMigDeviceQuery(absl::string_view text);

// /proc/driver/nvidia/capabilities/gpu<device minor>/mig/gi<G>/access, or
// .../gi<G>/ci<C>/access with a compute instance. The driver numbers these
// by the GPU's device minor (the N of /dev/nvidiaN), not nvidia-smi's index.
std::string MigCapabilityPath(int device_minor, int gpu_instance,
                              std::optional<int> compute_instance = std::nullopt);

// The DeviceFileMinor of a capability file ("DeviceFileMinor: 12\n
// DeviceFileMode: 292\nDeviceFileModify: 1\n").
absl::StatusOr<int64_t> ParseCapabilityMinor(absl::string_view text);

// /dev/nvidia-caps/nvidia-cap<minor>, char <major of nvidia-caps>:<minor>.
core::DeviceNode CapabilityDeviceNode(int64_t caps_major, int64_t minor);

// Whether a workspace can be given the slice: one compute instance spans
// the GPU instance, and both have their capability device node.
bool IsUsableSlice(const core::MigInstance& instance);

}  // namespace wsched::agent

#endif  // WSCHED_SERVER_AGENT_NVIDIA_MIG_H_
