// The feasibility rule, and every caller that judges with it: catalog
// validation, placement (Decide, CanEverFit, the NO_POOL pending reason) and
// scaling's count of workspaces per node. Each case that two copies of the
// rule once answered differently is checked against all of them.
#include "server/core/feasibility.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/catalog/validate.h"
#include "server/core/catalog.h"
#include "server/placement/decide.h"
#include "server/placement/filters.h"
#include "server/placement/pending_reason.h"
#include "server/placement/snapshot.h"
#include "server/placement/test_nodes.h"
#include "server/scaling/capacity.h"

namespace wsched::core {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Optional;

constexpr int64_t kGi = int64_t{1} << 30;

NodePool CpuPool(const std::string& id, std::map<std::string, std::string> labels = {}) {
  NodePool pool;
  pool.id = id;
  pool.labels = std::move(labels);
  pool.shape = {.cpu_millis = 16000, .memory_bytes = 64 * kGi};
  pool.max_size = 4;
  return pool;
}

NodePool GpuPool(const std::string& id, std::map<std::string, std::string> labels = {},
                 int gpus = 8, const std::string& model = "H100") {
  NodePool pool;
  pool.id = id;
  pool.labels = std::move(labels);
  pool.shape = {.cpu_millis = 128000,
                .memory_bytes = 1024 * kGi,
                .gpus_per_node = gpus,
                .gpu_model = model};
  pool.max_size = 4;
  return pool;
}

WorkspaceClass CpuClass(const std::string& id, std::map<std::string, std::string> selector = {}) {
  WorkspaceClass cls;
  cls.id = id;
  cls.display_name = id;
  cls.resources = {.cpu_request_millis = 4000, .cpu_limit_millis = 4000, .memory_bytes = 16 * kGi};
  cls.pool_selector = std::move(selector);
  cls.is_default = true;
  return cls;
}

WorkspaceClass GpuClass(const std::string& id, int gpus) {
  WorkspaceClass cls = CpuClass(id);
  cls.gpu = {.count = gpus, .models = {"H100"}};
  return cls;
}

// Catalog validation's "no pool can ever hold this class" error for a
// catalog of just this class and these pools, if it gives one.
std::optional<std::string> CatalogRefusal(const WorkspaceClass& cls,
                                          const std::vector<NodePool>& pools) {
  Catalog catalog;
  catalog.classes = {cls};
  catalog.pools = pools;
  for (const std::string& error : catalog::CheckCatalog(catalog).errors) {
    if (absl::StrContains(error, "no pool can ever hold this class")) return error;
  }
  return std::nullopt;
}

std::vector<std::string> CatalogErrors(const WorkspaceClass& cls,
                                       const std::vector<NodePool>& pools) {
  Catalog catalog;
  catalog.classes = {cls};
  catalog.pools = pools;
  return catalog::CheckCatalog(catalog).errors;
}

placement::PendingCode PendingCodeFor(const WorkspaceClass& cls,
                                      const std::vector<NodePool>& pools,
                                      const placement::Snapshot& snapshot) {
  const std::vector<DriverPolicyEntry> no_policy;
  placement::PendingContext ctx;
  ctx.cls = &cls;
  ctx.pools = &pools;
  ctx.snapshot = &snapshot;
  ctx.driver_policy = &no_policy;
  ctx.now = absl::FromUnixSeconds(1800000000);
  return placement::ExplainPending(ctx).code;
}

// Every caller agrees with the rule: catalog validation refuses the class
// exactly when placement calls it Never and a queued workspace of it gets
// NO_POOL. An infeasible answer carries the rule's message.
void ExpectEveryCallerAgrees(const WorkspaceClass& cls, const std::vector<NodePool>& pools,
                             const PoolVerdict& verdict,
                             const placement::Snapshot& snapshot = placement::Snapshot()) {
  const std::optional<std::string> refusal = CatalogRefusal(cls, pools);
  const placement::Decision decision = placement::Decide(cls, pools, snapshot);
  const placement::Feasibility can_ever = placement::CanEverFit(cls, pools);
  const placement::PendingCode pending = PendingCodeFor(cls, pools, snapshot);
  if (verdict.feasible()) {
    EXPECT_EQ(refusal, std::nullopt);
    EXPECT_STRNE(placement::DecisionKind(decision), "never");
    EXPECT_TRUE(can_ever.ok()) << can_ever.reason;
    EXPECT_NE(pending, placement::PendingCode::kNoPool);
    return;
  }
  EXPECT_THAT(refusal, Optional(HasSubstr(verdict.message)));
  ASSERT_STREQ(placement::DecisionKind(decision), "never");
  EXPECT_THAT(std::get<placement::Never>(decision).reason, HasSubstr(verdict.message));
  EXPECT_FALSE(can_ever.ok());
  EXPECT_EQ(pending, placement::PendingCode::kNoPool);
}

PoolVerdict Infeasible(InfeasibleReason reason, std::string message) {
  return {reason, std::move(message)};
}

// Disagreement 1: max_size 0. Validation refused such a pool, placement
// used its nodes. Now a pool that may not grow holds nothing new, even when
// a node of it is registered (it is being retired).
TEST(Feasibility, PoolThatCannotGrowHoldsNothing) {
  std::vector<NodePool> pools = {CpuPool("retired")};
  pools[0].max_size = 0;
  const WorkspaceClass cls = CpuClass("standard");
  const PoolVerdict verdict = CanEverHold(cls, pools[0], pools);
  EXPECT_EQ(verdict, Infeasible(InfeasibleReason::kPoolCannotGrow,
                                "max_size is 0, so it never has a node"));

  placement::Snapshot snapshot;
  ASSERT_TRUE(snapshot
                  .UpsertNode(placement::testing::FakeCpuNode("c1", "retired"), NodeState::kReady,
                              DriverState::kNotNeeded)
                  .ok());
  ExpectEveryCallerAgrees(cls, pools, verdict, snapshot);

  pools.push_back(CpuPool("general"));
  EXPECT_TRUE(CanEverHold(cls, pools[1], pools).feasible());
  ExpectEveryCallerAgrees(cls, pools, {}, snapshot);
  EXPECT_THAT(placement::CanEverFit(cls, pools).pools, ElementsAre("general"));
}

// Disagreement 2: a CPU class whose selector matches a CPU pool and a GPU
// pool. Validation let it use the GPU pool, placement kept it on the CPU
// pools. Now both keep it there: the selector did not name GPU pools on
// purpose, so a CPU pool too small for the class leaves nothing.
TEST(Feasibility, CpuClassKeepsOffGpuPoolsItsSelectorMatchesByAccident) {
  const std::vector<NodePool> pools = {CpuPool("small-cpu", {{"region", "eu"}}),
                                       GpuPool("gpu", {{"region", "eu"}})};
  WorkspaceClass big = CpuClass("big", {{"region", "eu"}});
  big.resources.cpu_request_millis = big.resources.cpu_limit_millis = 32000;
  EXPECT_EQ(CanEverHold(big, pools[0], pools),
            Infeasible(InfeasibleReason::kCpu, "node cpu 16 < class cpu 32"));
  const PoolVerdict on_gpu = CanEverHold(big, pools[1], pools);
  EXPECT_EQ(on_gpu,
            Infeasible(InfeasibleReason::kCpuClassOnGpuPool,
                       "is a GPU pool and the class's pool_selector also matches CPU pool "
                       "small-cpu (a CPU class uses GPU pools only when its pool_selector "
                       "matches no CPU pool)"));
  ExpectEveryCallerAgrees(big, pools, on_gpu);
}

TEST(Feasibility, CpuClassUsesGpuPoolsOnlyWhenItsSelectorNamesThem) {
  const std::vector<NodePool> pools = {CpuPool("cpu", {{"kind", "cpu"}}),
                                       GpuPool("gpu", {{"kind", "gpu"}})};
  const WorkspaceClass plain = CpuClass("plain");
  const PoolVerdict guarded = CanEverHold(plain, pools[1], pools);
  EXPECT_EQ(guarded,
            Infeasible(InfeasibleReason::kCpuClassOnGpuPool,
                       "is a GPU pool and the class has no pool_selector asking for it"));
  const std::vector<NodePool> gpu_only = {pools[1]};
  ExpectEveryCallerAgrees(plain, gpu_only, guarded);

  const WorkspaceClass on_purpose = CpuClass("cpu-on-gpu", {{"kind", "gpu"}});
  EXPECT_TRUE(CanEverHold(on_purpose, pools[1], pools).feasible());
  ExpectEveryCallerAgrees(on_purpose, pools, {});
  EXPECT_THAT(placement::CanEverFit(on_purpose, pools).pools, ElementsAre("gpu"));
}

// Disagreement 3: a zero CPU or memory in the pool's shape. Validation read
// it as zero ("node cpu 0 < class cpu 4", on top of "is required"),
// placement and scaling as "not stated". Now it is "not stated" everywhere:
// the catalog reports the missing field once, and nothing else.
TEST(Feasibility, ZeroInTheShapeMeansNotStated) {
  std::vector<NodePool> pools = {CpuPool("cpu")};
  pools[0].shape.cpu_millis = 0;
  pools[0].shape.memory_bytes = 0;
  const WorkspaceClass cls = CpuClass("standard");
  EXPECT_TRUE(CanEverHold(cls, pools[0], pools).feasible());
  EXPECT_THAT(CatalogErrors(cls, pools),
              ElementsAre("pools[0] (cpu).node.cpu: is required",
                                     "pools[0] (cpu).node.memory: is required"));
  EXPECT_STRNE(placement::DecisionKind(placement::Decide(cls, pools, placement::Snapshot())),
               "never");
  EXPECT_GT(scaling::WorkspacesPerNode(pools[0].shape, cls), 0);
}

TEST(Feasibility, StatedShapeTooSmallIsNeverEverywhere) {
  std::vector<NodePool> pools = {CpuPool("cpu")};
  pools[0].shape.disk_bytes = 1'000'000'000;  // Decimal: formatted as an operator writes it.
  WorkspaceClass cls = CpuClass("standard");
  cls.resources.disk_bytes = 2 * kGi;
  const PoolVerdict verdict = CanEverHold(cls, pools[0], pools);
  EXPECT_EQ(verdict, Infeasible(InfeasibleReason::kDisk, "node disk 1G < class disk 2Gi"));
  ExpectEveryCallerAgrees(cls, pools, verdict);
  EXPECT_EQ(scaling::WorkspacesPerNode(pools[0].shape, cls), 0);

  pools[0].shape.disk_bytes = 0;  // Not stated: no limit.
  ExpectEveryCallerAgrees(cls, pools, {});
  EXPECT_GT(scaling::WorkspacesPerNode(pools[0].shape, cls), 0);
}

// Disagreement 4: the per-workspace GPU limit. A workspace's GPUs share one
// node, and the allocator handles at most kMaxGpusPerWorkspace; validation
// checked only the first. Both are now the same reason everywhere.
TEST(Feasibility, WorkspaceGpusMustFitOneNode) {
  std::vector<NodePool> pools = {GpuPool("gpu-h100", {}, 4)};
  const WorkspaceClass eight = GpuClass("gpu-8x", 8);
  const PoolVerdict verdict = CanEverHold(eight, pools[0], pools);
  EXPECT_EQ(verdict,
            Infeasible(InfeasibleReason::kTooManyGpus, "node has 4 GPUs, class needs 8"));
  ExpectEveryCallerAgrees(eight, pools, verdict);
  EXPECT_EQ(scaling::WorkspacesPerNode(pools[0].shape, eight), 0);

  ExpectEveryCallerAgrees(GpuClass("gpu-4x", 4), pools, {});
}

TEST(Feasibility, NoWorkspaceHasMoreGpusThanTheAllocatorHandles) {
  // Neither the pool nor the class is a valid catalog entry (16 GPUs at
  // most); a catalog that skipped validation still gets one answer.
  std::vector<NodePool> pools = {GpuPool("huge", {}, 2 * kMaxGpusPerWorkspace)};
  const WorkspaceClass cls = GpuClass("too-many", kMaxGpusPerWorkspace + 1);
  const PoolVerdict verdict = CanEverHold(cls, pools[0], pools);
  EXPECT_EQ(verdict, Infeasible(InfeasibleReason::kTooManyGpus,
                                "class needs 129 GPUs, more than the 128 one workspace can have"));
  ExpectEveryCallerAgrees(cls, pools, verdict);
}

// The other reasons, each from the rule and from every caller.
TEST(Feasibility, SelectorModelAndGpuReasons) {
  const std::vector<NodePool> pools = {CpuPool("cpu", {{"tier", "basic"}}),
                                       GpuPool("gpu-a100", {{"tier", "basic"}}, 8, "A100")};
  const WorkspaceClass premium = CpuClass("premium", {{"tier", "premium"}});
  EXPECT_EQ(CanEverHold(premium, pools[0], pools),
            Infeasible(InfeasibleReason::kSelectorMismatch,
                       "label tier is basic, pool_selector wants premium"));
  const WorkspaceClass zoned = CpuClass("zoned", {{"zone", "mars"}});
  const PoolVerdict no_label = CanEverHold(zoned, pools[0], pools);
  EXPECT_EQ(no_label, Infeasible(InfeasibleReason::kSelectorMismatch,
                                 "has no label zone (pool_selector wants mars)"));
  ExpectEveryCallerAgrees(zoned, pools, no_label);

  const WorkspaceClass h100 = GpuClass("gpu-1x", 1);
  const PoolVerdict no_gpus = CanEverHold(h100, pools[0], pools);
  EXPECT_EQ(no_gpus, Infeasible(InfeasibleReason::kNoGpus, "has no GPUs"));
  const PoolVerdict model = CanEverHold(h100, pools[1], pools);
  EXPECT_EQ(model, Infeasible(InfeasibleReason::kGpuModel,
                              "gpu_model \"A100\" is not in models [H100]"));
  ExpectEveryCallerAgrees(h100, pools, model);
}

TEST(Feasibility, MemoryAndEphemeralStorageNameTheirQuantities) {
  NodePool pool = CpuPool("cpu");
  pool.shape.ephemeral_storage_bytes = 10 * kGi;
  WorkspaceClass cls = CpuClass("standard");
  cls.resources.ephemeral_storage_bytes = 20 * kGi;
  EXPECT_EQ(CanEverHold(cls, pool, {pool}),
            Infeasible(InfeasibleReason::kEphemeralStorage,
                       "node ephemeral_storage 10Gi < class ephemeral_storage 20Gi"));
  cls.resources.memory_bytes = 128 * kGi;
  EXPECT_EQ(CanEverHold(cls, pool, {pool}),
            Infeasible(InfeasibleReason::kMemory, "node memory 64Gi < class memory 128Gi"));
}

TEST(Feasibility, ReasonNamesAreStable) {
  EXPECT_STREQ(InfeasibleReasonName(InfeasibleReason::kPoolCannotGrow), "pool_cannot_grow");
  EXPECT_STREQ(InfeasibleReasonName(InfeasibleReason::kCpuClassOnGpuPool),
               "cpu_class_on_gpu_pool");
  EXPECT_STREQ(InfeasibleReasonName(InfeasibleReason::kEphemeralStorage), "ephemeral_storage");
}

TEST(Feasibility, FeasibleHasNoMessage) {
  const std::vector<NodePool> pools = {CpuPool("cpu")};
  const PoolVerdict verdict = CanEverHold(CpuClass("standard"), pools[0], pools);
  EXPECT_TRUE(verdict.feasible());
  EXPECT_THAT(verdict.message, IsEmpty());
  EXPECT_EQ(FirstInfeasibility(CpuClass("standard"), pools[0], pools), std::nullopt);
}

}  // namespace
}  // namespace wsched::core

namespace wsched::core {
namespace {

// A pool whose GPUs are bound to vfio-pci serves VMs only: a container
// class would get a GPU without an NVIDIA device node.
TEST(Feasibility, ContainerClassNeverUsesAVfioPool) {
  std::vector<NodePool> pools = {GpuPool("gpu-vm", {}, 8)};
  pools[0].gpu_binding = GpuBinding::kVfio;
  const WorkspaceClass container = GpuClass("gpu-1x", 1);
  const PoolVerdict verdict = CanEverHold(container, pools[0], pools);
  EXPECT_EQ(verdict, Infeasible(InfeasibleReason::kGpuBinding,
                                "has gpu_binding vfio: its GPUs are bound to vfio-pci and go to "
                                "vm classes only"));
  ExpectEveryCallerAgrees(container, pools, verdict);

  WorkspaceClass vm = GpuClass("gpu-1x-vm", 1);
  vm.gpu.isolation = Isolation::kVm;
  ExpectEveryCallerAgrees(vm, pools, {});
}

}  // namespace
}  // namespace wsched::core

namespace wsched::core {
namespace {

// A pool laid out in MIG slices serves slice classes only: a GPU in MIG
// mode is never handed out whole, so a whole-GPU class would wait forever.
TEST(Feasibility, WholeGpuClassNeverUsesASlicedPool) {
  std::vector<NodePool> pools = {GpuPool("gpu-h200", {}, 8, "H200")};
  pools[0].mig = {MigLayoutKind::kFixed, {"3g.71gb", "3g.71gb"}};
  WorkspaceClass whole = GpuClass("gpu-1x", 1);
  whole.gpu.models = {"H200"};
  const PoolVerdict verdict = CanEverHold(whole, pools[0], pools);
  EXPECT_EQ(verdict, Infeasible(InfeasibleReason::kMigLayout,
                                "has mig.layout fixed: its GPUs are cut into MIG slices and go to "
                                "slice classes only"));
  ExpectEveryCallerAgrees(whole, pools, verdict);

  WorkspaceClass slice = CpuClass("slice");
  slice.gpu.models = {"H200"};
  slice.gpu.mig_profiles = {"3g.71gb"};
  ExpectEveryCallerAgrees(slice, pools, {});

  pools[0].mig = {MigLayoutKind::kByDemand, {}};
  EXPECT_EQ(FirstInfeasibility(whole, pools[0], pools), InfeasibleReason::kMigLayout);
  pools[0].mig = {};
  EXPECT_EQ(FirstInfeasibility(whole, pools[0], pools), std::nullopt);
  EXPECT_STREQ(InfeasibleReasonName(InfeasibleReason::kMigLayout), "mig_layout");
}

}  // namespace
}  // namespace wsched::core
