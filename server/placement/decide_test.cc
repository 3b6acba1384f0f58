#include "server/placement/decide.h"

#include <set>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/placement/filters.h"
#include "server/placement/test_nodes.h"

namespace wsched::placement {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::CpuClass;
using testing::CpuPool;
using testing::FakeCpuNode;
using testing::FakeGpuNode;
using testing::GpuClass;
using testing::GpuPool;
using testing::kGi;

constexpr auto kReady = core::NodeState::kReady;
constexpr auto kDriverReady = core::DriverState::kReady;

class DecideTest : public ::testing::Test {
 protected:
  void AddGpuNode(const std::string& name, const std::string& pool = "gpu-h100",
                  const std::string& model = "h100") {
    ASSERT_TRUE(snapshot_.UpsertNode(FakeGpuNode(name, pool, model), kReady, kDriverReady).ok());
  }
  void AddNode(const core::NodeInfo& node, core::NodeState state = kReady,
               core::DriverState driver = kDriverReady) {
    ASSERT_TRUE(snapshot_.UpsertNode(node, state, driver).ok());
  }

  Decision Run(const core::WorkspaceClass& cls) { return Decide(cls, pools_, snapshot_); }

  // Decides and holds; the Placed answer, or a failure.
  Placed PlaceAndHold(const core::WorkspaceClass& cls) {
    Decision decision = Run(cls);
    const Placed* placed = std::get_if<Placed>(&decision);
    if (placed == nullptr) {
      ADD_FAILURE() << "not placed: " << DecisionKind(decision);
      return {};
    }
    absl::Status held = snapshot_.Hold(absl::StrCat("w", ++workspaces_), placed->node,
                                       placed->gpu_indices, placed->resources);
    EXPECT_TRUE(held.ok()) << held;
    return *placed;
  }

  // Places workspaces of the class until one does not fit; how many did.
  int Fill(const core::WorkspaceClass& cls) {
    int placed = 0;
    while (placed < 1000) {
      Decision decision = Run(cls);
      if (!std::holds_alternative<Placed>(decision)) {
        EXPECT_TRUE(std::holds_alternative<NotNow>(decision));
        return placed;
      }
      PlaceAndHold(cls);
      ++placed;
    }
    return placed;
  }

  std::vector<core::NodePool> pools_ = {CpuPool("cpu"), GpuPool("gpu-h100", "h100"),
                                        GpuPool("gpu-a100", "a100")};
  Snapshot snapshot_;
  int workspaces_ = 0;
};

// Node a has GPUs 0 and 2 free (their NVLink peers taken), node b a free
// pair; a packs first (fewer free GPUs) unless the class asks for links.
TEST_F(DecideTest, NvlinkClassesLookForALinkedSetOnEveryNode) {
  core::NodeInfo a = FakeGpuNode("a", "gpu-h100", "h100", 4);
  core::NodeInfo b = FakeGpuNode("b", "gpu-h100", "h100", 4);
  for (core::NodeInfo* node : {&a, &b}) {
    testing::LinkPair(*node, 0, 1);
    testing::LinkPair(*node, 2, 3);
    AddNode(*node);
  }
  ASSERT_TRUE(snapshot_.Hold("x1", "a", {1}, {}).ok());
  ASSERT_TRUE(snapshot_.Hold("x3", "a", {3}, {}).ok());
  ASSERT_TRUE(snapshot_.Hold("y", "b", {0}, {}).ok());

  core::WorkspaceClass cls = GpuClass("pair", 2);
  EXPECT_EQ(std::get<Placed>(Run(cls)).node, "a");
  cls.gpu.links = core::GpuLinks::kNvlinkPreferred;
  EXPECT_EQ(std::get<Placed>(Run(cls)), (Placed{"b", "gpu-h100", {2, 3}, RequestOf(cls)}));
  cls.gpu.links = core::GpuLinks::kNvlinkRequired;
  EXPECT_EQ(std::get<Placed>(Run(cls)).gpu_indices, (std::vector<int>{2, 3}));
  ASSERT_TRUE(snapshot_.Hold("z", "b", {3}, {}).ok());
  EXPECT_TRUE(std::holds_alternative<NotNow>(Run(cls))) << "no node has a free pair";
  cls.gpu.links = core::GpuLinks::kNvlinkPreferred;
  EXPECT_EQ(std::get<Placed>(Run(cls)).node, "a") << "preferred settles for any set";
}

TEST_F(DecideTest, DensityEqualsGpusPerNodeOverGpusPerWorkspace) {
  AddGpuNode("g1");
  EXPECT_EQ(Fill(GpuClass("gpu-1", 1)), 8);
  for (int i = 1; i <= workspaces_; ++i) snapshot_.Release(absl::StrCat("w", i));
  EXPECT_EQ(Fill(GpuClass("gpu-2", 2)), 4);
  for (int i = 1; i <= workspaces_; ++i) snapshot_.Release(absl::StrCat("w", i));
  EXPECT_EQ(Fill(GpuClass("gpu-8", 8)), 1);
}

TEST_F(DecideTest, CpuAndMemoryAlsoLimitDensity) {
  AddGpuNode("g1");  // 128 CPU, 1Ti memory.
  core::WorkspaceClass cpu_heavy = GpuClass("gpu-1-cpu", 1);
  cpu_heavy.resources.cpu_request_millis = 40000;
  EXPECT_EQ(Fill(cpu_heavy), 3);
  for (int i = 1; i <= workspaces_; ++i) snapshot_.Release(absl::StrCat("w", i));

  core::WorkspaceClass memory_heavy = GpuClass("gpu-1-mem", 1);
  memory_heavy.resources.memory_bytes = 300 * kGi;
  EXPECT_EQ(Fill(memory_heavy), 3);
  Decision next = Run(memory_heavy);
  ASSERT_TRUE(std::holds_alternative<NotNow>(next));
  // Why (memory) is pending_reason's to say: pending_reason_test.cc.
}

TEST_F(DecideTest, PacksOntoTheFullestNodeThatFits) {
  AddGpuNode("g1");
  AddGpuNode("g2");
  ASSERT_TRUE(snapshot_.Hold("busy", "g2", {0, 1, 2, 3, 4, 5}, {}).ok());
  EXPECT_EQ(PlaceAndHold(GpuClass("gpu-1", 1)).node, "g2");
  // g2 now has 1 free GPU: a 2-GPU class goes to the emptier g1.
  EXPECT_EQ(PlaceAndHold(GpuClass("gpu-2", 2)).node, "g1");
  // And the next 1-GPU workspace fills g2 up, leaving g1 as it is.
  Placed last = PlaceAndHold(GpuClass("gpu-1", 1));
  EXPECT_EQ(last.node, "g2");
  EXPECT_THAT(last.gpu_indices, ElementsAre(7));
}

TEST_F(DecideTest, FallsBackToTheNextModelOnlyWhenTheFirstIsFull) {
  AddGpuNode("h1", "gpu-h100", "h100");
  AddGpuNode("a1", "gpu-a100", "a100");
  ASSERT_TRUE(snapshot_.Hold("busy-a", "a1", {0, 1, 2, 3, 4, 5, 6}, {}).ok());
  core::WorkspaceClass cls = GpuClass("gpu-any", 1, {"h100", "a100"});
  // a1 is fuller, but h100 is preferred.
  EXPECT_EQ(PlaceAndHold(cls).pool, "gpu-h100");
  ASSERT_TRUE(snapshot_.Hold("busy-h", "h1", {1, 2, 3, 4, 5, 6, 7}, {}).ok());
  Placed fallback = PlaceAndHold(cls);
  EXPECT_EQ(fallback.pool, "gpu-a100");
  EXPECT_EQ(fallback.node, "a1");

  Decision full = Run(cls);
  ASSERT_TRUE(std::holds_alternative<NotNow>(full));
  EXPECT_THAT(std::get<NotNow>(full).pools, ElementsAre("gpu-h100", "gpu-a100"));
}

TEST_F(DecideTest, CpuClassStaysOffGpuPools) {
  AddGpuNode("g1");
  core::WorkspaceClass cpu = CpuClass("standard");
  Decision decision = Run(cpu);  // The CPU pool has no nodes yet.
  ASSERT_TRUE(std::holds_alternative<NotNow>(decision)) << DecisionKind(decision);
  EXPECT_THAT(std::get<NotNow>(decision).pools, ElementsAre("cpu"));

  AddNode(FakeCpuNode("c1", "cpu"), kReady, core::DriverState::kNotNeeded);
  EXPECT_EQ(PlaceAndHold(cpu).node, "c1");

  // Only GPU pools and no selector: never.
  std::vector<core::NodePool> gpu_only = {GpuPool("gpu-h100", "h100")};
  Decision never = Decide(cpu, gpu_only, snapshot_);
  ASSERT_TRUE(std::holds_alternative<Never>(never));
  EXPECT_THAT(std::get<Never>(never).reason,
              HasSubstr("is a GPU pool and the class has no pool_selector asking for it"));

  // A selector naming the GPU pool opts in.
  core::WorkspaceClass on_gpu = CpuClass("cpu-on-gpu");
  on_gpu.pool_selector = {{"kind", "gpu"}};
  EXPECT_EQ(PlaceAndHold(on_gpu).node, "g1");
}

TEST_F(DecideTest, SelectorMatchingBothKindsKeepsCpuClassOnCpuPools) {
  for (auto& pool : pools_) pool.labels["region"] = "eu";
  AddGpuNode("g1");
  core::WorkspaceClass cpu = CpuClass("eu-standard");
  cpu.pool_selector = {{"region", "eu"}};
  Decision decision = Run(cpu);
  ASSERT_TRUE(std::holds_alternative<NotNow>(decision)) << DecisionKind(decision);
  EXPECT_THAT(std::get<NotNow>(decision).pools, ElementsAre("cpu"));
}

TEST_F(DecideTest, CpuClassesPackToo) {
  AddNode(FakeCpuNode("c1", "cpu"), kReady, core::DriverState::kNotNeeded);
  AddNode(FakeCpuNode("c2", "cpu"), kReady, core::DriverState::kNotNeeded);
  ASSERT_TRUE(snapshot_.Hold("busy", "c2", {}, {60000, 0, 0, 0}).ok());
  core::WorkspaceClass cpu = CpuClass("standard");  // 4 CPU: exactly fits c2.
  EXPECT_EQ(PlaceAndHold(cpu).node, "c2");
  EXPECT_EQ(PlaceAndHold(cpu).node, "c1");  // c2 is full now.
  EXPECT_EQ(Fill(cpu), 15);                 // 64 CPU / 4 on c1, one already there.
}

TEST_F(DecideTest, MultiGpuClassPrefersOneNumaNode) {
  AddGpuNode("g1");
  ASSERT_TRUE(snapshot_.Hold("busy", "g1", {0}, {}).ok());
  EXPECT_THAT(PlaceAndHold(GpuClass("gpu-4", 4)).gpu_indices, ElementsAre(4, 5, 6, 7));
}

TEST_F(DecideTest, SkipsNodesThatAreNotReadyOrLackTheDriver) {
  AddNode(FakeGpuNode("provisioning", "gpu-h100"), core::NodeState::kProvisioning);
  AddNode(FakeGpuNode("cordoned", "gpu-h100"), core::NodeState::kCordoned);
  AddNode(FakeGpuNode("draining", "gpu-h100"), core::NodeState::kDraining);
  AddNode(FakeGpuNode("lost", "gpu-h100"), core::NodeState::kLost);
  AddNode(FakeGpuNode("no-driver", "gpu-h100"), kReady, core::DriverState::kNeedsDriver);
  AddNode(FakeGpuNode("failed", "gpu-h100"), kReady, core::DriverState::kInstallFailed);
  AddNode(FakeGpuNode("no-policy", "gpu-h100"), kReady, core::DriverState::kNoPolicy);
  core::WorkspaceClass cls = GpuClass("gpu-1", 1);
  Decision none = Run(cls);
  ASSERT_TRUE(std::holds_alternative<NotNow>(none));

  AddGpuNode("good");
  EXPECT_EQ(Fill(cls), 8);
  EXPECT_EQ(snapshot_.FindNode("good")->free_gpus[0], 0);
}

// GPUs 0-3 share their IOMMU groups with a USB controller; 4-7 are clean.
core::NodeInfo HalfUnsafeNode(const std::string& name, const std::string& pool) {
  core::NodeInfo node = FakeGpuNode(name, pool);
  for (int i = 0; i < 4; ++i) {
    node.gpus[i].iommu_group_members.push_back({"0000:00:14.0", "0x0c0330", "0x8086"});
  }
  return node;
}

TEST_F(DecideTest, VmClassGetsOnlyPassthroughSafeGroups) {
  AddNode(HalfUnsafeNode("g1", "gpu-h100"));
  EXPECT_FALSE(snapshot_.FindNode("g1")->gpus[0].passthrough_safe);
  EXPECT_THAT(snapshot_.FindNode("g1")->gpus[0].passthrough_reason, HasSubstr("USB controller"));

  core::WorkspaceClass vm = GpuClass("vm-1", 1, {"h100"}, core::Isolation::kVm);
  EXPECT_EQ(Fill(vm), 4);
  for (const auto& gpu : snapshot_.FindNode("g1")->gpus) {
    EXPECT_EQ(gpu.holder.empty(), !gpu.passthrough_safe);
  }
  Decision full = Run(vm);
  ASSERT_TRUE(std::holds_alternative<NotNow>(full));

  // Containers do not care: the unsafe GPUs still serve them.
  EXPECT_EQ(Fill(GpuClass("gpu-1", 1)), 4);
}

TEST_F(DecideTest, AllowUnsafeIommuPoolLetsVmTakeUnsafeGroups) {
  pools_[1].allow_unsafe_iommu = true;
  AddNode(HalfUnsafeNode("g1", "gpu-h100"));
  EXPECT_EQ(Fill(GpuClass("vm-1", 1, {"h100"}, core::Isolation::kVm)), 8);
}

// A VM is answered only for groups whose endpoints are all on vfio-pci (as
// the agent reports them); a container never gets a GPU on vfio-pci.
TEST_F(DecideTest, VmClassGetsOnlyGroupsBoundToVfioPci) {
  pools_[1].gpu_binding = core::GpuBinding::kVfio;
  core::NodeInfo node = FakeGpuNode("g1", "gpu-h100");
  testing::ReportDrivers(node, "vfio-pci");
  node.gpus[0].driver = "nvidia";                                 // The GPU itself.
  node.gpus[1].iommu_group_members[0].driver = "snd_hda_intel";   // Its audio function.
  node.gpus[2].iommu_group_members[0].driver = "";                // Unbound.
  node.gpus[3].iommu_group_members[1].driver = "";                // A bridge: left alone.
  AddNode(node);
  EXPECT_THAT(snapshot_.FindNode("g1")->gpus[1].vm_binding_problem,
              HasSubstr("member 0000:19:00.1 is bound to snd_hda_intel, not vfio-pci"));

  core::WorkspaceClass vm = GpuClass("vm-1", 1, {"h100"}, core::Isolation::kVm);
  EXPECT_EQ(Fill(vm), 5);
  for (int i : {0, 1, 2}) EXPECT_TRUE(snapshot_.FindNode("g1")->gpus[i].holder.empty()) << i;
}

TEST_F(DecideTest, ContainerClassNeverGetsAGpuOnVfioPci) {
  core::NodeInfo node = FakeGpuNode("g1", "gpu-h100");
  testing::ReportDrivers(node, "nvidia");
  node.gpus[6].driver = "vfio-pci";
  AddNode(node);
  EXPECT_EQ(Fill(GpuClass("gpu-1", 1)), 7);
  EXPECT_TRUE(snapshot_.FindNode("g1")->gpus[6].holder.empty());
}

TEST_F(DecideTest, VmClassTakesSharedGroupsWhole) {
  // GPUs 0 and 1 share IOMMU group 40 (with their audio functions).
  core::NodeInfo node = FakeGpuNode("g1", "gpu-h100");
  node.gpus[1].iommu_group = 40;
  node.gpus[0].iommu_group_members.push_back({"0000:19:00.0", "0x030200", "0x10de"});
  node.gpus[0].iommu_group_members.push_back({"0000:19:00.1", "0x040300", "0x10de"});
  node.gpus[1].iommu_group_members.push_back({"0000:18:00.0", "0x030200", "0x10de"});
  node.gpus[1].iommu_group_members.push_back({"0000:18:00.1", "0x040300", "0x10de"});
  AddNode(node);
  // The neighbour is the other GPU, which goes along: not a foreign device.
  EXPECT_TRUE(snapshot_.FindNode("g1")->gpus[0].passthrough_safe)
      << snapshot_.FindNode("g1")->gpus[0].passthrough_reason;

  core::WorkspaceClass vm1 = GpuClass("vm-1", 1, {"h100"}, core::Isolation::kVm);
  core::WorkspaceClass vm2 = GpuClass("vm-2", 2, {"h100"}, core::Isolation::kVm);
  // One GPU never comes out of the pair.
  Placed single = PlaceAndHold(vm1);
  EXPECT_THAT(single.gpu_indices, ElementsAre(2));
  EXPECT_THAT(PlaceAndHold(vm2).gpu_indices, ElementsAre(0, 1));
  snapshot_.Release("w2");

  // Once a container holds GPU 0, GPU 1 is not given to a VM at all.
  ASSERT_TRUE(snapshot_.Hold("container", "g1", {0}, {}).ok());
  EXPECT_THAT(PlaceAndHold(vm2).gpu_indices, ElementsAre(4, 5));
  EXPECT_EQ(Fill(vm1), 3);  // 3, 6, 7 — never 1.
  EXPECT_TRUE(snapshot_.FindNode("g1")->gpus[1].holder.empty());
}

TEST_F(DecideTest, NeverVersusNotNow) {
  core::WorkspaceClass selector = GpuClass("gpu-1", 1);
  selector.pool_selector = {{"zone", "mars"}};
  Decision never = Run(selector);
  ASSERT_TRUE(std::holds_alternative<Never>(never));
  EXPECT_THAT(std::get<Never>(never).reason, HasSubstr("no pool can ever hold class gpu-1"));
  EXPECT_THAT(std::get<Never>(never).reason,
              HasSubstr("pool gpu-h100: has no label zone (pool_selector wants mars)"));

  Decision too_many = Run(GpuClass("gpu-16", 16));
  ASSERT_TRUE(std::holds_alternative<Never>(too_many));
  EXPECT_THAT(std::get<Never>(too_many).reason,
              HasSubstr("pool gpu-h100: node has 8 GPUs, class needs 16"));

  Decision wrong_model = Run(GpuClass("gpu-l4", 1, {"l4"}));
  ASSERT_TRUE(std::holds_alternative<Never>(wrong_model));
  EXPECT_THAT(std::get<Never>(wrong_model).reason,
              HasSubstr("pool gpu-a100: gpu_model \"a100\" is not in models [l4]"));

  core::WorkspaceClass huge = CpuClass("huge");
  huge.resources.memory_bytes = 512 * kGi;
  Decision too_big = Run(huge);
  ASSERT_TRUE(std::holds_alternative<Never>(too_big));
  EXPECT_THAT(std::get<Never>(too_big).reason,
              HasSubstr("pool cpu: node memory 256Gi < class memory 512Gi"));
  EXPECT_FALSE(CanEverFit(huge, pools_).ok());

  // Pool scaled to zero: not now, and the pool is named for the autoscaler.
  core::WorkspaceClass cls = GpuClass("gpu-1", 1);
  Decision pending = Run(cls);
  ASSERT_TRUE(std::holds_alternative<NotNow>(pending));
  EXPECT_THAT(std::get<NotNow>(pending).pools, ElementsAre("gpu-h100"));
  Feasibility feasible = CanEverFit(cls, pools_);
  EXPECT_TRUE(feasible.ok());
  EXPECT_THAT(feasible.pools, ElementsAre("gpu-h100"));

  // Enough GPUs in the pool, but not on one node.
  AddGpuNode("g1");
  AddGpuNode("g2");
  ASSERT_TRUE(snapshot_.Hold("a", "g1", {0, 1, 2, 3, 4}, {}).ok());
  ASSERT_TRUE(snapshot_.Hold("b", "g2", {0, 1, 2, 3, 4}, {}).ok());
  Decision split = Run(GpuClass("gpu-4", 4));
  ASSERT_TRUE(std::holds_alternative<NotNow>(split));

  // VM isolation with no safe GPU anywhere is "not now": future nodes may be clean.
  EXPECT_TRUE(CanEverFit(GpuClass("vm", 1, {"h100"}, core::Isolation::kVm), pools_).ok());
}

TEST_F(DecideTest, DecideDoesNotChangeTheSnapshot) {
  AddGpuNode("g1");
  Decision first = Run(GpuClass("gpu-1", 1));
  Decision second = Run(GpuClass("gpu-1", 1));
  EXPECT_EQ(first, second);
  EXPECT_EQ(snapshot_.FindNode("g1")->free_gpus[0], 8);
  EXPECT_STREQ(DecisionKind(first), "placed");
}

}  // namespace
}  // namespace wsched::placement

namespace wsched::placement {
namespace {

TEST(DecideAvoidingTest, KeepsOffAvoidedNodesWhileOthersFitThenFallsBack) {
  Snapshot snapshot;
  std::vector<core::NodePool> pools = {testing::GpuPool("gpu-h100", "h100")};
  ASSERT_TRUE(snapshot.UpsertNode(testing::FakeGpuNode("g1", "gpu-h100"), core::NodeState::kReady,
                                  core::DriverState::kReady).ok());
  ASSERT_TRUE(snapshot.UpsertNode(testing::FakeGpuNode("g2", "gpu-h100"), core::NodeState::kReady,
                                  core::DriverState::kReady).ok());
  core::WorkspaceClass cls = testing::GpuClass("gpu-1", 1);
  // Packing makes g1 the fullest: plain decisions all go there.
  ASSERT_TRUE(snapshot.Hold("w0", "g1", {0}, RequestOf(cls)).ok());
  EXPECT_EQ(std::get<Placed>(Decide(cls, pools, snapshot)).node, "g1");
  // Avoiding g1: g2, though it packs worse.
  auto avoiding = [](std::set<std::string> names) {
    return [names](const std::string& node) { return names.count(node) > 0; };
  };
  EXPECT_EQ(std::get<Placed>(DecideAvoiding(cls, pools, snapshot, avoiding({"g1"}))).node, "g2");
  // Avoiding both: still placed (avoidance never turns a fit into a wait).
  EXPECT_EQ(std::get<Placed>(DecideAvoiding(cls, pools, snapshot, avoiding({"g1", "g2"}))).node, "g1");
}

}  // namespace
}  // namespace wsched::placement
