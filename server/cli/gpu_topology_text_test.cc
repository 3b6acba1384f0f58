#include "server/cli/gpu_topology_text.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace wsched::cli {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

v1::GpuLink Link(int peer, v1::GpuLinkKind kind, int nvlinks = 0) {
  v1::GpuLink link;
  link.set_peer(peer);
  link.set_kind(kind);
  link.set_nvlinks(nvlinks);
  return link;
}

TEST(GpuTopologyText, LinksReadLikeTopoM) {
  v1::NodeInfo node;
  v1::Gpu* gpu = node.add_gpus();
  gpu->set_index(0);
  *gpu->add_links() = Link(2, v1::GPU_LINK_KIND_SYS);
  *gpu->add_links() = Link(1, v1::GPU_LINK_KIND_NVLINK, 4);
  *gpu->add_links() = Link(3, v1::GPU_LINK_KIND_SYS);
  node.add_gpus()->set_index(1);  // Reports no links: no line.
  EXPECT_THAT(GpuLinkLines(node), ElementsAre("gpu 0 links: NV4 to 1; SYS to 2, 3"));
  EXPECT_THAT(GpuMigLines(node), IsEmpty());
}

TEST(GpuTopologyText, SlicesAndFreeSlots) {
  v1::NodeInfo node;
  v1::Gpu* on = node.add_gpus();
  on->set_index(2);
  on->mutable_mig()->set_enabled(true);
  on->mutable_mig()->set_pending_enabled(true);
  v1::MigInstance* big = on->mutable_mig()->add_instances();
  big->set_profile("3g.71gb");
  big->set_start(0);
  big->set_size(4);
  big->set_uuid("MIG-aa11");
  big->set_cdi_device("wsched.io/gpu=MIG-aa11");
  v1::MigInstance* small = on->mutable_mig()->add_instances();
  small->set_profile("1g.18gb");
  small->set_start(6);
  small->set_size(1);
  v1::MigInstance* unnamed = on->mutable_mig()->add_instances();
  unnamed->set_profile("1g.18gb");
  unnamed->set_start(5);
  unnamed->set_size(1);
  unnamed->set_cdi_device("nvidia.com/gpu=2:1");  // Found in NVIDIA's spec by its nodes.
  v1::Gpu* pending = node.add_gpus();
  pending->set_index(3);
  pending->mutable_mig()->set_pending_enabled(true);
  EXPECT_THAT(GpuMigLines(node),
              ElementsAre("gpu 2 mig on: 3g.71gb 0:4 (MIG-aa11, cdi wsched.io/gpu=MIG-aa11), "
                          "1g.18gb 6:1, 1g.18gb 5:1 (cdi nvidia.com/gpu=2:1); slots 4, 7 free",
                          "gpu 3 mig off (on after reset)"));
}

}  // namespace
}  // namespace wsched::cli
