#include "server/agent/nvidia_layout.h"

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "server/agent/nvidia_mig.h"
#include "server/agent/nvidia_smi.h"
#include "server/agent/nvidia_topology.h"

namespace wsched::agent {
namespace {

// What nvidia-smi says, with a non-zero exit, when there is nothing to list.
constexpr const char* kNothingFound[] = {"No GPU instances found", "No compute instances found",
                                         "No MIG-enabled devices found"};

bool SaysNothingFound(absl::string_view output) {
  for (const char* message : kNothingFound) {
    if (absl::StrContains(output, message)) return true;
  }
  return false;
}

// The slices' UUIDs from -L (by nvidia-smi index and MIG device index) and
// -q (by PCI address and MIG device index, with the GI and CI IDs): the MIG
// device index is what the two have in common.
void NameSlices(const std::map<int, std::string>& addresses,
                const std::vector<MigDeviceUuid>& names, const std::vector<MigDeviceIds>& ids,
                std::map<std::string, core::GpuMig>& mig) {
  std::map<std::pair<std::string, int>, std::string> uuid_by_device;
  for (const MigDeviceUuid& name : names) {
    auto address = addresses.find(name.gpu);
    if (address != addresses.end()) uuid_by_device[{address->second, name.device}] = name.uuid;
  }
  for (const MigDeviceIds& device : ids) {
    auto uuid = uuid_by_device.find({device.pci_address, device.device});
    auto gpu = mig.find(device.pci_address);
    if (uuid == uuid_by_device.end() || gpu == mig.end()) continue;
    for (core::MigInstance& instance : gpu->second.instances) {
      // A GPU instance with several compute instances has a UUID per
      // compute instance and none that is the slice's.
      if (instance.gpu_instance == device.gpu_instance &&
          instance.compute_instance == device.compute_instance) {
        instance.uuid = uuid->second;
      }
    }
  }
}

bool HasUsableSlice(const std::map<std::string, core::GpuMig>& mig) {
  for (const auto& [address, gpu] : mig) {
    for (const core::MigInstance& instance : gpu.instances) {
      if (instance.compute_instance >= 0) return true;
    }
  }
  return false;
}

}  // namespace

absl::StatusOr<std::string> NvidiaLayoutReader::Output(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {path_};
  argv.insert(argv.end(), args.begin(), args.end());
  const std::string command = absl::StrJoin(argv, " ");
  if (timed_out_) {
    return absl::DeadlineExceededError(
        absl::StrCat(command, ": skipped, an earlier nvidia-smi timed out"));
  }
  absl::StatusOr<process::Result> result = RunNvidiaSmi(argv, timeout_, /*merge_stderr=*/false);
  if (absl::IsDeadlineExceeded(result.status())) timed_out_ = true;
  if (!result.ok()) {
    return absl::Status(result.status().code(),
                        absl::StrCat(command, ": ", result.status().message()));
  }
  if (result->exit_code == 0 || SaysNothingFound(result->out.text) ||
      SaysNothingFound(result->err.text)) {
    return std::move(result->out.text);
  }
  std::string hint = FoldedOutput(result->err.text.empty() ? result->out.text : result->err.text);
  return absl::UnavailableError(absl::StrCat(
      command, " failed with ", process::DescribeExit(*result), hint.empty() ? "" : ": ", hint));
}

absl::StatusOr<std::map<int, std::vector<core::MigInstance>>> NvidiaLayoutReader::ReadInstances() {
  absl::StatusOr<std::string> lgi = Output({"mig", "-lgi"});
  if (!lgi.ok()) return lgi.status();
  absl::StatusOr<std::vector<MigGpuInstanceRow>> gpu_instances = ParseMigGpuInstances(*lgi);
  if (!gpu_instances.ok()) return gpu_instances.status();
  absl::StatusOr<std::string> lci = Output({"mig", "-lci"});
  if (!lci.ok()) return lci.status();
  absl::StatusOr<std::vector<MigComputeInstanceRow>> compute_instances =
      ParseMigComputeInstances(*lci);
  if (!compute_instances.ok()) return compute_instances.status();
  return PairMigInstances(*gpu_instances, *compute_instances);
}

absl::StatusOr<std::map<int, std::vector<core::MigProfile>>> NvidiaLayoutReader::ReadProfiles() {
  absl::StatusOr<std::string> lgip = Output({"mig", "-lgip"});
  if (!lgip.ok()) return lgip.status();
  absl::StatusOr<std::string> lgipp = Output({"mig", "-lgipp"});
  if (!lgipp.ok()) return lgipp.status();
  return ParseMigProfiles(*lgip, *lgipp);
}

absl::Status NvidiaLayoutReader::ReadSliceUuids(const std::map<int, std::string>& addresses,
                                                std::map<std::string, core::GpuMig>& mig) {
  absl::StatusOr<std::string> list = Output({"-L"});
  if (!list.ok()) return list.status();
  absl::StatusOr<std::vector<MigDeviceUuid>> names = ParseMigDeviceList(*list);
  if (!names.ok()) return names.status();
  absl::StatusOr<std::string> query = Output({"-q"});
  if (!query.ok()) return query.status();
  absl::StatusOr<std::vector<MigDeviceIds>> ids = ParseMigDeviceQuery(*query);
  if (!ids.ok()) return ids.status();
  NameSlices(addresses, *names, *ids, mig);
  return absl::OkStatus();
}

void NvidiaLayoutReader::ReadMig(const std::map<int, std::string>& addresses,
                                 NvidiaLayout& layout) {
  // By nvidia-smi index, for the GPUs that have a mode.
  auto gpu_mig = [&](int index) -> core::GpuMig* {
    auto address = addresses.find(index);
    if (address == addresses.end()) return nullptr;
    auto mig = layout.mig.find(address->second);
    return mig == layout.mig.end() ? nullptr : &mig->second;
  };
  // Slices first: the profiles of a GPU whose slices are unknown are not
  // reported either, so that no one plans a slice into a placement that
  // may be taken.
  absl::StatusOr<std::map<int, std::vector<core::MigInstance>>> instances = ReadInstances();
  if (!instances.ok()) {
    layout.problems.push_back(absl::StrCat("MIG slices: ", instances.status().message()));
    return;
  }
  for (auto& [index, on_gpu] : *instances) {
    if (core::GpuMig* mig = gpu_mig(index)) mig->instances = std::move(on_gpu);
  }
  absl::StatusOr<std::map<int, std::vector<core::MigProfile>>> profiles = ReadProfiles();
  if (!profiles.ok()) {
    layout.problems.push_back(absl::StrCat("MIG profiles: ", profiles.status().message()));
  } else {
    for (auto& [index, on_gpu] : *profiles) {
      if (core::GpuMig* mig = gpu_mig(index)) mig->profiles = std::move(on_gpu);
    }
  }
  if (!HasUsableSlice(layout.mig)) return;
  if (absl::Status named = ReadSliceUuids(addresses, layout.mig); !named.ok()) {
    layout.problems.push_back(absl::StrCat("MIG slice UUIDs: ", named.message()));
  }
}

void NvidiaLayoutReader::ReadLinks(const std::map<int, std::string>& addresses,
                                   NvidiaLayout& layout) {
  if (addresses == links_for_ && !links_.empty()) {
    layout.links = links_;
    return;
  }
  absl::StatusOr<std::string> topo = Output({"topo", "-m"});
  absl::StatusOr<std::map<int, std::vector<core::GpuLink>>> matrix =
      topo.ok() ? ParseNvidiaSmiTopology(*topo) : topo.status();
  if (matrix.ok() && matrix->size() != addresses.size()) {
    matrix =
        absl::InvalidArgumentError(absl::StrCat("nvidia-smi topo -m shows ", matrix->size(),
                                                " GPUs, the MIG mode query ", addresses.size()));
  }
  if (!matrix.ok()) {
    layout.problems.push_back(absl::StrCat("GPU links: ", matrix.status().message()));
    links_for_.clear();
    links_.clear();
    return;
  }
  std::map<std::string, std::vector<PeerLink>> links;
  for (const auto& [index, peers] : *matrix) {
    auto address = addresses.find(index);
    if (address == addresses.end()) continue;
    std::vector<PeerLink>& out = links[address->second];
    for (const core::GpuLink& link : peers) {
      auto peer = addresses.find(link.peer);
      if (peer == addresses.end()) continue;
      out.push_back({.peer_address = peer->second, .kind = link.kind, .nvlinks = link.nvlinks});
    }
  }
  links_for_ = addresses;
  links_ = links;
  layout.links = std::move(links);
}

NvidiaLayout NvidiaLayoutReader::Read() {
  timed_out_ = false;
  NvidiaLayout layout;
  absl::StatusOr<std::string> csv =
      Output({absl::StrCat("--query-gpu=", kMigModeQuery), "--format=csv,noheader"});
  absl::StatusOr<std::vector<MigModeLine>> modes = csv.ok() ? ParseMigModeCsv(*csv) : csv.status();
  if (!modes.ok()) {
    layout.problems.push_back(absl::StrCat("MIG mode: ", modes.status().message()));
    return layout;
  }
  layout.modes_read = true;
  std::map<int, std::string> addresses;  // By nvidia-smi index.
  bool any_enabled = false;
  for (const MigModeLine& mode : *modes) {
    addresses[mode.index] = mode.pci_address;
    if (!mode.reported) continue;
    layout.mig[mode.pci_address] =
        core::GpuMig{.enabled = mode.enabled, .pending_enabled = mode.pending_enabled};
    any_enabled = any_enabled || mode.enabled;
  }
  if (any_enabled) ReadMig(addresses, layout);
  if (!addresses.empty()) ReadLinks(addresses, layout);
  return layout;
}

NvidiaLayout KeepKnownMigModes(const NvidiaLayout& last, NvidiaLayout fresh) {
  for (const auto& [address, known] : last.mig) {
    if (fresh.mig.count(address) > 0) continue;
    fresh.mig[address] =
        core::GpuMig{.enabled = known.enabled, .pending_enabled = known.pending_enabled};
  }
  return fresh;
}

}  // namespace wsched::agent
