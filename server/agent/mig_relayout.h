// Re-laying out the MIG slices of one GPU that holds nothing: the plan (pure:
// which nvidia-smi commands, in which order) and the runner that carries it
// out and checks the result (docs/agent.md "Re-laying out MIG GPUs").
//
// The agent's loop runs it for the MigWork the server hands out in
// by_demand pools (agent_loop.h).
#ifndef WSCHED_SERVER_AGENT_MIG_RELAYOUT_H_
#define WSCHED_SERVER_AGENT_MIG_RELAYOUT_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "server/core/mig.h"

namespace wsched::agent {

// One GPU instance of the wanted layout: a profile of the GPU's own table
// ("3g.71gb"; an "MIG " prefix is ignored) at one of its legal starts.
struct WantedSlice {
  std::string profile;
  int start = 0;
  friend bool operator==(const WantedSlice&, const WantedSlice&) = default;
};

// nvidia-smi's arguments (without the program), one command each.
using NvidiaSmiCommands = std::vector<std::vector<std::string>>;

// The commands that turn `current`, the MIG state of the GPU nvidia-smi
// numbers `gpu`, into `wanted`:
//   mig -i <gpu> -dci                    every compute instance
//   mig -i <gpu> -dgi                    every GPU instance
//   mig -i <gpu> -cgi <id>:<start> -C    per wanted slice, by start, with the
//                                        compute instance that spans it
// The destroy commands are left out on a GPU without GPU instances. No
// commands when the GPU already has exactly the wanted slices (profiles and
// starts), each with a compute instance that spans it; a layout that matches
// but has a slice nobody can use (no or several compute instances) is laid
// out again, which is what makes it usable.
//
// InvalidArgument naming the field and the rule for: a negative `gpu`; a
// wanted profile the GPU's table (current.profiles) lacks, or no table; a
// start that is not one of the profile's; two slices whose slots overlap; a
// layout over the kMigMemorySlots slots or the kMigComputeSlices slices.
// FailedPrecondition when MIG mode is off or a mode change is pending (the
// GPU instances would go with the next reset).
absl::StatusOr<NvidiaSmiCommands> PlanRelayout(int gpu, const core::GpuMig& current,
                                               const std::vector<WantedSlice>& wanted);

// Which GPU to lay out: discovery's names for it; nvidia-smi's index is
// looked up by the PCI address (the two number GPUs differently).
struct RelayoutTarget {
  std::string nvidia_smi;   // The program; a name is searched in PATH.
  std::string pci_address;  // Sysfs form, "0000:19:00.0".
  std::string uuid;         // "GPU-...", as the compute process query names GPUs.
};

// Lays out the target GPU as `wanted`, each nvidia-smi call bounded by
// `timeout`:
//  1. finds the GPU's nvidia-smi index (the MIG mode query);
//  2. refuses (FailedPrecondition) when `nvidia-smi --query-compute-apps=
//     gpu_uuid,pid` lists a process on the GPU: only a GPU that holds
//     nothing is laid out, since destroying its slices kills what runs there;
//  3. reads the GPU's MIG state with NvidiaLayoutReader and plans;
//  4. runs the commands in order and stops at the first that fails
//     (Unavailable, with the command, its exit and its output on one line,
//     and how many commands had run: the GPU is then left part way);
//  5. reads the MIG state again and fails (Internal) naming the slices that
//     are missing or unexpected when it is not the wanted layout.
// A GPU that already has the wanted layout runs no commands.
absl::Status RelayoutGpu(const RelayoutTarget& target, const std::vector<WantedSlice>& wanted,
                         absl::Duration timeout = absl::Seconds(30));

}  // namespace wsched::agent

#endif  // WSCHED_SERVER_AGENT_MIG_RELAYOUT_H_
