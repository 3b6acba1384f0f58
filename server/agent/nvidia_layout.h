// The MIG layout and links of a node's GPUs, read with nvidia-smi: runs the
// commands nvidia_mig.h and nvidia_topology.h parse and puts their answers
// together by PCI address, for discovery to attach to the GPUs it found in
// sysfs (docs/agent.md "MIG slices and GPU links").
#ifndef WSCHED_SERVER_AGENT_NVIDIA_LAYOUT_H_
#define WSCHED_SERVER_AGENT_NVIDIA_LAYOUT_H_

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "server/core/mig.h"

namespace wsched::agent {

// A link to another GPU, named by its PCI address: discovery turns it into
// a core::GpuLink with the peer's index.
struct PeerLink {
  std::string peer_address;
  core::GpuLinkKind kind = core::GpuLinkKind::kSys;
  int nvlinks = 0;
  friend bool operator==(const PeerLink&, const PeerLink&) = default;
};

struct NvidiaLayout {
  // Whether nvidia-smi answered the MIG mode query. Without it nothing else
  // is read: it is what ties nvidia-smi's GPU indices to PCI addresses.
  bool modes_read = false;
  // By PCI address: the GPUs nvidia-smi gave a MIG mode for. Profiles and
  // instances stay empty when their commands failed; the GPU instances'
  // device nodes are discovery's (they come from files).
  std::map<std::string, core::GpuMig> mig;
  // By PCI address, peers in nvidia-smi's order; empty when topo -m failed.
  std::map<std::string, std::vector<PeerLink>> links;
  // What could not be read, one line each, for the log.
  std::vector<std::string> problems;
  friend bool operator==(const NvidiaLayout&, const NvidiaLayout&) = default;
};

// Runs, each within the timeout and without a shell:
//   nvidia-smi --query-gpu=index,pci.bus_id,mig.mode.current,mig.mode.pending --format=csv,noheader
// then, when a GPU is in MIG mode, `mig -lgip`, `mig -lgipp`, `mig -lgi`,
// `mig -lci`, and, when a slice can be used, `-L` and `-q` for the slices'
// UUIDs; and `topo -m`, again only when the set of GPUs changed since its
// last answer (links change with the hardware only). A command that times
// out ends the round: the rest are skipped, reported as problems.
class NvidiaLayoutReader {
 public:
  explicit NvidiaLayoutReader(std::string nvidia_smi, absl::Duration timeout = absl::Seconds(5))
      : path_(std::move(nvidia_smi)), timeout_(timeout) {}

  NvidiaLayout Read();

 private:
  // The command's output when it exited 0, or exited non-zero saying there
  // was nothing to list ("No GPU instances found").
  absl::StatusOr<std::string> Output(const std::vector<std::string>& args);
  // Per nvidia-smi index: -lgi and -lci together, then -lgip and -lgipp.
  absl::StatusOr<std::map<int, std::vector<core::MigInstance>>> ReadInstances();
  absl::StatusOr<std::map<int, std::vector<core::MigProfile>>> ReadProfiles();
  // -L and -q: sets the UUID of each slice both name.
  absl::Status ReadSliceUuids(const std::map<int, std::string>& addresses,
                              std::map<std::string, core::GpuMig>& mig);
  void ReadMig(const std::map<int, std::string>& addresses, NvidiaLayout& layout);
  void ReadLinks(const std::map<int, std::string>& addresses, NvidiaLayout& layout);

  const std::string path_;
  const absl::Duration timeout_;
  bool timed_out_ = false;  // This round; later commands are skipped.
  // The last topo -m answer and the GPUs (by nvidia-smi index) it was for.
  std::map<int, std::string> links_for_;
  std::map<std::string, std::vector<PeerLink>> links_;
};

// `fresh`, plus the MIG mode `last` knew for each GPU `fresh` has none for
// (the mode query failed, or its line for the GPU was an error), with no
// profiles or instances: a GPU in MIG mode reported without MIG would look
// like a whole GPU that can be handed out, and CUDA cannot use it whole.
NvidiaLayout KeepKnownMigModes(const NvidiaLayout& last, NvidiaLayout fresh);

}  // namespace wsched::agent

#endif  // WSCHED_SERVER_AGENT_NVIDIA_LAYOUT_H_
