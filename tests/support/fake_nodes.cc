#include "tests/support/fake_nodes.h"

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "loadtest/fake_cluster.h"
#include "server/convert/mig_convert.h"
#include "server/core/mig_layout.h"
#include "server/core/mig_profiles.h"
#include "tests/support/server_process.h"

namespace wsched::testing {

// The node builders are the load generator's (loadtest/fake_cluster.h);
// tests add what only they need (an unsafe IOMMU group).
v1::NodeInfo FakeGpuNode(const std::string& name, const std::string& pool,
                         const FakeNodeOptions& options) {
  loadtest::GpuNodeShape shape;
  shape.model = options.model;
  shape.gpus = options.gpus;
  shape.cpu_cores = options.cpu_cores;
  shape.memory_gib = options.memory_gib;
  shape.kernel = options.kernel;
  shape.driver = options.driver;
  v1::NodeInfo node = loadtest::GpuNode(name, pool, shape);
  if (options.unsafe_iommu) {
    for (auto& gpu : *node.mutable_gpus()) {
      auto* usb = gpu.add_iommu_group_members();
      usb->set_pci_address("0000:00:14.0");
      usb->set_pci_class("0x0c0330");
      usb->set_vendor("0x8086");
    }
  }
  return node;
}

void CutGpu(v1::NodeInfo& node, int gpu_index, const std::vector<core::MigLayoutSlice>& layout,
            const std::string& tag) {
  v1::Gpu& gpu = *node.mutable_gpus(gpu_index);
  const std::vector<core::MigProfile>* table = core::KnownMigProfiles(gpu.model());
  ASSERT_NE(table, nullptr) << gpu.model() << " has no built-in MIG table";
  core::GpuMig mig;
  mig.enabled = mig.pending_enabled = true;
  mig.profiles = *table;
  // Two capability minors per slice, unique on the node.
  int minor = 100 + gpu.index() * 16;
  for (size_t k = 0; k < layout.size(); ++k) {
    const core::MigProfile* profile = core::FindProfile(*table, layout[k].profile);
    ASSERT_NE(profile, nullptr) << layout[k].profile;
    core::MigInstance slice;
    slice.profile = profile->name;
    slice.gpu_instance = static_cast<int>(k) + 1;
    slice.compute_instance = 0;
    slice.start = layout[k].start;
    slice.size = profile->size;
    slice.uuid = absl::StrCat("MIG-", node.name(), "-", gpu.index(), "-", tag, k);
    slice.gi_access = core::DeviceNode{absl::StrCat("/dev/nvidia-caps/nvidia-cap", minor), 'c',
                                       235, minor, "r"};
    slice.ci_access = core::DeviceNode{absl::StrCat("/dev/nvidia-caps/nvidia-cap", minor + 1),
                                       'c', 235, minor + 1, "r"};
    minor += 2;
    mig.instances.push_back(std::move(slice));
  }
  *gpu.mutable_mig() = convert::ToProto(mig);
}

void LayOutSlices(v1::NodeInfo& node, const std::vector<std::string>& profiles) {
  const std::vector<core::MigProfile>* table = core::KnownMigProfiles(node.gpus(0).model());
  ASSERT_NE(table, nullptr) << node.gpus(0).model() << " has no built-in MIG table";
  const core::MigLayoutPlan plan = core::LayOutMig(*table, profiles);
  ASSERT_TRUE(plan.legal()) << plan.misfit->reason;
  for (int i = 0; i < node.gpus_size(); ++i) CutGpu(node, i, plan.slices, "");
}

v1::NodeInfo FakeCpuNode(const std::string& name, const std::string& pool, int64_t cpu_cores,
                         int64_t memory_gib) {
  return loadtest::CpuNode(name, pool, {cpu_cores, memory_gib});
}

void RegisterNode(const std::shared_ptr<grpc::Channel>& channel, const v1::NodeInfo& node) {
  auto stub = v1::InventoryService::NewStub(channel);
  grpc::ClientContext context;
  Authorize(context, kAgentToken);
  v1::RegisterNodeRequest request;
  *request.mutable_node() = node;
  v1::RegisterNodeResponse response;
  grpc::Status status = stub->RegisterNode(&context, request, &response);
  ASSERT_TRUE(status.ok()) << "register " << node.name() << ": " << status.error_message();
}

}  // namespace wsched::testing
