#include "loadtest/fake_cluster.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace wsched::loadtest {
namespace {

void AddDevice(v1::NodeInfo& node, const std::string& path, int major, int minor) {
  auto* device = node.add_control_devices();
  device->set_path(path);
  device->set_type("c");
  device->set_major(major);
  device->set_minor(minor);
  device->set_permissions("rwm");
}

v1::NodeInfo BaseNode(const std::string& name, const std::string& pool, int64_t cpu_cores,
                      int64_t memory_gib) {
  v1::NodeInfo node;
  node.set_name(name);
  node.set_pool(pool);
  node.set_provider_id("loadtest:///" + name);
  node.mutable_allocatable()->set_cpu_millis(cpu_cores * 1000);
  node.mutable_allocatable()->set_memory_bytes(memory_gib << 30);
  node.set_kernel_version("5.15.0-91-generic");
  node.set_os_id("ubuntu");
  node.set_os_version("22.04");
  return node;
}

}  // namespace

v1::NodeInfo CpuNode(const std::string& name, const std::string& pool, const CpuNodeShape& shape) {
  return BaseNode(name, pool, shape.cpu_cores, shape.memory_gib);
}

v1::NodeInfo GpuNode(const std::string& name, const std::string& pool, const GpuNodeShape& shape) {
  v1::NodeInfo node = BaseNode(name, pool, shape.cpu_cores, shape.memory_gib);
  node.set_kernel_version(shape.kernel);
  node.set_driver_version(shape.driver);
  for (int i = 0; i < shape.gpus; ++i) {
    auto* gpu = node.add_gpus();
    gpu->set_index(i);
    gpu->set_uuid(absl::StrCat("GPU-", name, "-", i));
    gpu->set_pci_address(absl::StrFormat("0000:%02x:00.0", 0x10 + i));
    gpu->set_model(shape.model);
    gpu->set_memory_bytes(int64_t{80} << 30);
    gpu->set_numa_node(i < shape.gpus / 2 ? 0 : 1);
    gpu->set_health(v1::GPU_HEALTH_HEALTHY);
    gpu->set_iommu_group(20 + i);
    auto* bridge = gpu->add_iommu_group_members();
    bridge->set_pci_address(absl::StrFormat("0000:%02x:00.0", 0x80 + i));
    bridge->set_pci_class("0x060400");
    bridge->set_vendor("0x8086");
  }
  AddDevice(node, "/dev/nvidiactl", 195, 255);
  AddDevice(node, "/dev/nvidia-modeset", 195, 254);
  AddDevice(node, "/dev/nvidia-uvm", 510, 0);
  AddDevice(node, "/dev/nvidia-uvm-tools", 510, 1);
  return node;
}

std::string FakeNodeName(const std::string& run_id, int i, int gpu_nodes) {
  if (i < gpu_nodes) return absl::StrCat(run_id, "-gpu-", i);
  return absl::StrCat(run_id, "-cpu-", i - gpu_nodes);
}

}  // namespace wsched::loadtest
