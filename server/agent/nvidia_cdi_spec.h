// NVIDIA's own CDI spec on a node (written by `nvidia-ctk cdi generate`,
// kind nvidia.com/gpu). Where it exists wsched answers with its names and
// writes nothing of that kind: two definitions of one device name make a
// runtime refuse the device.
#ifndef WSCHED_SERVER_AGENT_NVIDIA_CDI_SPEC_H_
#define WSCHED_SERVER_AGENT_NVIDIA_CDI_SPEC_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "server/core/node.h"

namespace wsched::agent {

struct NvidiaSpecDevice {
  std::string name;                       // "0", "GPU-1f0b...", "all".
  std::vector<std::string> device_nodes;  // Container paths: "/dev/nvidia0".
};

struct NvidiaSpec {
  std::string file;  // Where it was found.
  std::vector<NvidiaSpecDevice> devices;
};

// The first file of kind nvidia.com/gpu (JSON or YAML) in `dirs`, read in
// order and by file name within each; nullopt when there is none. Files of
// other kinds, unreadable or malformed files are skipped (they are not ours
// to judge; the runtime reports them), but a malformed file of that kind is
// an error: the node clearly meant to use it.
absl::StatusOr<std::optional<NvidiaSpec>> FindNvidiaSpec(const std::vector<std::string>& dirs);

struct NvidiaNames {
  std::map<std::string, std::string> by_uuid;   // GPU UUID -> "nvidia.com/gpu=<name>".
  std::map<std::string, std::string> problems;  // GPU UUID -> why it has no name.
};

// Each GPU's name in `spec`: a device named by its UUID, else one whose
// device nodes hold its /dev/nvidia<index> alone (index names; "all"
// grants every GPU and is never used).
NvidiaNames MatchNvidiaNames(const NvidiaSpec& spec, const std::vector<core::Gpu>& gpus);

// A MIG slice's name in `spec` ("nvidia.com/gpu=<name>"), the same way: a
// device named by its MIG UUID (`nvidia-ctk cdi generate
// --device-name-strategy=uuid`), else one that holds the GPU's
// /dev/nvidia<index> and, of /dev/nvidia-caps, exactly the slice's two
// capability nodes (index names such as "0:1", whose second number is
// NVML's MIG device index, which wsched does not know). nullopt when there
// is none, or its name is not a CDI name.
std::optional<std::string> MatchNvidiaSliceName(const NvidiaSpec& spec, const core::Gpu& gpu,
                                                const core::MigInstance& slice);

}  // namespace wsched::agent

#endif  // WSCHED_SERVER_AGENT_NVIDIA_CDI_SPEC_H_
