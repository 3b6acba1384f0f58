#include "server/placement/pending_reason.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/placement/test_nodes.h"

namespace wsched::placement {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using testing::FakeGpuNode;
using testing::GpuClass;
using testing::GpuPool;
using testing::LayOutSlices;
using testing::ReportDrivers;
using testing::SliceClass;

const absl::Time kNow = absl::FromUnixSeconds(1800000000);

class PendingReasonTest : public ::testing::Test {
 protected:
  PendingReasonTest() {
    pools_ = {GpuPool("gpu-h100", "h100")};
    pools_[0].max_size = 2;
    policy_ = {{"6.1.0-18-amd64", "debian", "12", "550.54.15", "550", "registry.example/driver"}};
    cls_ = GpuClass("gpu-8x", 8);
  }

  void AddNode(core::NodeInfo info, core::NodeState state = core::NodeState::kReady,
               core::DriverState driver = core::DriverState::kReady,
               const std::string& install_failure = "") {
    ASSERT_TRUE(snapshot_.UpsertNode(info, state, driver, /*state_since=*/kNow - absl::Minutes(3),
                                     install_failure)
                    .ok());
  }

  // Holds GPU 0 of `node` (so 7 of 8 are free).
  void HoldOne(const std::string& node) {
    ASSERT_TRUE(snapshot_.Hold("other-on-" + node, node, {0}, {}).ok());
  }

  // gpu-h100 at max_size 1, its one node without 8 free GPUs. (A max_size
  // of 0 would not do: such a pool can never hold the class at all.)
  void FillPreferredPoolToMaxSize() {
    pools_[0].max_size = 1;
    AddNode(FakeGpuNode("h1", "gpu-h100"));
    HoldOne("h1");
  }

  PendingReason Explain() {
    PendingContext ctx;
    ctx.cls = &cls_;
    ctx.pools = &pools_;
    ctx.snapshot = &snapshot_;
    ctx.driver_policy = &policy_;
    ctx.scaling = scaling_;
    ctx.queue_position = position_;
    ctx.ahead = ahead_;
    ctx.budgets = budgets_;
    ctx.quota = quota_;
    ctx.policy_denial = denial_;
    ctx.now = kNow;
    return ExplainPending(ctx);
  }

  std::vector<core::NodePool> pools_;
  std::vector<core::DriverPolicyEntry> policy_;
  core::WorkspaceClass cls_;
  Snapshot snapshot_;
  std::map<std::string, PoolScalingView> scaling_;
  int position_ = 1;
  std::vector<const core::WorkspaceClass*> ahead_;
  std::vector<core::BudgetStanding> budgets_;
  std::optional<QuotaFigures> quota_;
  std::optional<std::string> denial_;
};

// A limit of `limit_seconds` GPU-seconds with `spent_seconds` spent; a
// placement commits to its GPUs for a minute.
core::BudgetStanding Budget(const std::string& scope, const std::string& id, int64_t limit_seconds,
                            int64_t spent_seconds) {
  return {scope,
          id,
          limit_seconds * core::kGpuMicrosPerGpuSecond,
          spent_seconds * core::kGpuMicrosPerGpuSecond,
          absl::Minutes(1),
          absl::FromUnixSeconds(1801000000)};
}

TEST_F(PendingReasonTest, AnExhaustedSpendingLimitComesFirstAndSaysWhenItResets) {
  budgets_ = {Budget("org", "o-1", 600, 590)};
  quota_ = QuotaFigures{4 * core::kMigComputeSlices, 8};  // The quota holds it back too.
  AddNode(FakeGpuNode("g1", "gpu-h100"));
  PendingReason reason = Explain();
  EXPECT_EQ(reason.code, PendingCode::kBudgetExhausted);
  EXPECT_EQ(reason.until, absl::FromUnixSeconds(1801000000));
  EXPECT_EQ(reason.detail,
            "the spending limit of org o-1 is reached: 590.000000 of 600.000000 GPU-seconds spent "
            "this period; class gpu-8x commits to 480.000000 more; the period resets at "
            "2027-01-26T21:46:40Z");
  EXPECT_EQ(PendingCodeName(reason.code), std::string("budget_exhausted"));
}

TEST_F(PendingReasonTest, ALimitWithRoomForTheFirstIntervalHoldsNothing) {
  budgets_ = {Budget("org", "o-1", 600, 120)};  // 120 + 8 GPUs x 60 s = 600: exactly fits.
  AddNode(FakeGpuNode("g1", "gpu-h100"));
  EXPECT_EQ(Explain().code, PendingCode::kQueued);
  budgets_[0].spent += 1;  // One GPU-microsecond more and it does not.
  EXPECT_EQ(Explain().code, PendingCode::kBudgetExhausted);
}

TEST_F(PendingReasonTest, TheProjectsLimitIsNamedWhenTheOrgsHasRoom) {
  budgets_ = {Budget("org", "o-1", 6000, 100), Budget("project", "p-1", 500, 100)};
  AddNode(FakeGpuNode("g1", "gpu-h100"));
  PendingReason reason = Explain();
  EXPECT_EQ(reason.code, PendingCode::kBudgetExhausted);
  EXPECT_THAT(reason.detail, HasSubstr("the spending limit of project p-1 is reached"));
}

TEST_F(PendingReasonTest, AClassWithoutGpusIsNotHeldByASpendingLimit) {
  budgets_ = {Budget("org", "o-1", 600, 600)};
  cls_ = GpuClass("cpu", 0);
  EXPECT_NE(Explain().code, PendingCode::kBudgetExhausted);
}

TEST_F(PendingReasonTest, OrgQuotaComesFirst) {
  quota_ = QuotaFigures{4 * core::kMigComputeSlices, 8};
  AddNode(FakeGpuNode("g1", "gpu-h100"));  // Room exists: the quota still holds it back.
  PendingReason reason = Explain();
  EXPECT_EQ(reason.code, PendingCode::kOrgGpuQuota);
  EXPECT_EQ(reason.quota.held_sevenths, 28);
  EXPECT_EQ(reason.quota.quota, 8);
  EXPECT_EQ(reason.detail, "the org holds 4 of its GPU quota of 8; class gpu-8x needs 8 GPUs more");
}

TEST_F(PendingReasonTest, ClassPolicyComesNext) {
  denial_ = "org o-1 no longer allows class gpu-8x";
  EXPECT_EQ(Explain().code, PendingCode::kClassPolicy);
  EXPECT_EQ(Explain().detail, "org o-1 no longer allows class gpu-8x");
}

TEST_F(PendingReasonTest, NoPoolWhenTheCatalogLostItsPools) {
  pools_.clear();
  PendingReason reason = Explain();
  EXPECT_EQ(reason.code, PendingCode::kNoPool);
}

// Slice classes: a free slice of one of the class's profiles is room; the
// workspaces ahead take slices, not GPUs; a node not ready yet counts.
class SlicePendingReasonTest : public PendingReasonTest {
 protected:
  SlicePendingReasonTest() {
    pools_ = {GpuPool("gpu-h200", "h200")};
    pools_[0].max_size = 1;
    cls_ = SliceClass("mid", {"3g.71gb", "1g.18gb"});
    small_ = SliceClass("small", {"1g.18gb"});
  }
  void AddSlicedNode(core::NodeState state = core::NodeState::kReady) {
    core::NodeInfo node = FakeGpuNode("s1", "gpu-h200", "h200", 1);
    LayOutSlices(node, {"3g.71gb", "2g.35gb", "1g.18gb"});
    AddNode(node, state);
  }
  core::WorkspaceClass small_;
};

TEST_F(SlicePendingReasonTest, AFreeSliceOfAnyOfItsProfilesIsRoom) {
  AddSlicedNode();
  ahead_ = {&small_};
  position_ = 2;
  PendingReason reason = Explain();
  EXPECT_EQ(reason.code, PendingCode::kQueued) << reason.detail;
  EXPECT_EQ(reason.node, "s1");
  EXPECT_EQ(reason.gpus_needed, 0);
}

TEST_F(SlicePendingReasonTest, TheWorkspacesAheadTakeTheSlices) {
  AddSlicedNode();
  // The first takes the 3g, the second the one 1g: none of [3g, 1g] left
  // for the third, and the pool is at max_size.
  ahead_ = {&cls_, &small_};
  position_ = 3;
  PendingReason reason = Explain();
  EXPECT_EQ(reason.code, PendingCode::kPoolAtMaxSize) << reason.detail;
  EXPECT_THAT(reason.detail, HasSubstr("no node has a free slice of [3g.71gb, 1g.18gb]"));
  EXPECT_THAT(reason.detail, HasSubstr("for it after the workspaces ahead"));
}

TEST_F(SlicePendingReasonTest, ANodeBootingHoldsItAndWithoutOneANewNodeCanBeAskedFor) {
  // What a booting node will have free is not known yet, for slices as for
  // GPUs: it is the answer as long as its CPU and memory last.
  AddSlicedNode(core::NodeState::kProvisioning);
  ahead_ = {&small_};
  position_ = 2;
  EXPECT_EQ(Explain().code, PendingCode::kNodeProvisioning);
  snapshot_ = Snapshot();
  EXPECT_EQ(Explain().code, PendingCode::kScaleUpNotYetRequested);
}

// A GPU of a by_demand pool being laid out anew: its slices are coming,
// handed out in queue order like free ones; what it has now is out of play.
class RelayoutPendingReasonTest : public SlicePendingReasonTest {
 protected:
  RelayoutPendingReasonTest() {
    pools_[0].mig.kind = core::MigLayoutKind::kByDemand;
    cls_ = SliceClass("mid", {"3g.71gb"});
    core::NodeInfo node = FakeGpuNode("node-a", "gpu-h200", "h200", 4);
    LayOutSlices(node, std::vector<std::string>(7, "1g.18gb"));
    AddNode(node);
    order_ = {.node = "node-a",
              .pool = "gpu-h200",
              .gpu_index = 3,
              .layout = {{"1g.18gb", 0}, {"3g.71gb", 4}},
              .for_profile = "3g.71gb",
              .ordered_at = kNow - absl::Seconds(4)};
    snapshot_.SetRelayouts({{"node-a", 3}});
  }
  PendingReason ExplainWithOrder() {
    PendingContext ctx;
    ctx.cls = &cls_;
    ctx.pools = &pools_;
    ctx.snapshot = &snapshot_;
    ctx.driver_policy = &policy_;
    ctx.queue_position = position_;
    ctx.ahead = ahead_;
    ctx.relayouts = {order_};
    ctx.now = kNow;
    return ExplainPending(ctx);
  }
  RelayoutOrder order_;
};

TEST_F(RelayoutPendingReasonTest, SaysWhichGpuIsLaidOutForWhichProfile) {
  PendingReason reason = ExplainWithOrder();
  EXPECT_EQ(reason.code, PendingCode::kMigRelayout) << reason.detail;
  EXPECT_EQ(reason.detail, "re-laying out GPU 3 on node-a for 3g.71gb");
  EXPECT_EQ(reason.node, "node-a");
  EXPECT_EQ(reason.since, kNow - absl::Seconds(4));
  EXPECT_STREQ(PendingCodeName(reason.code), "mig_relayout");
}

TEST_F(RelayoutPendingReasonTest, TheWorkspacesAheadTakeTheComingSlicesFirst) {
  // The one 3g the order makes goes to the workspace ahead; this one is
  // told the pool is at max_size.
  ahead_ = {&cls_};
  position_ = 2;
  PendingReason reason = ExplainWithOrder();
  EXPECT_EQ(reason.code, PendingCode::kPoolAtMaxSize) << reason.detail;
}

TEST_F(RelayoutPendingReasonTest, AFreeSliceIsNearer) {
  // A 1g class: the other GPUs' free 1g slices are room now.
  cls_ = small_;
  EXPECT_EQ(ExplainWithOrder().code, PendingCode::kQueued);
  // The marked GPU's own slices are not: with the others held, the 1g of
  // the order is what is coming.
  for (int gpu = 0; gpu < 3; ++gpu) {
    for (int gi = 1; gi <= 7; ++gi) {
      ASSERT_TRUE(
          snapshot_.HoldSlice(absl::StrCat("w", gpu, "-", gi), "node-a", {gpu, gi}, {}).ok());
    }
  }
  PendingReason reason = ExplainWithOrder();
  EXPECT_EQ(reason.code, PendingCode::kMigRelayout) << reason.detail;
  EXPECT_EQ(reason.detail, "re-laying out GPU 3 on node-a for 1g.18gb");
}

TEST_F(PendingReasonTest, QueuedBehindOthersWhenRoomExists) {
  AddNode(FakeGpuNode("g1", "gpu-h100"));
  position_ = 3;
  PendingReason reason = Explain();
  EXPECT_EQ(reason.code, PendingCode::kQueued);
  EXPECT_EQ(reason.queue_position, 3);
  EXPECT_THAT(reason.detail, HasSubstr("queued at position 3"));
}

TEST_F(PendingReasonTest, IommuUnsafeForVmClass) {
  cls_ = GpuClass("vm-8x", 8, {"h100"}, core::Isolation::kVm);
  core::NodeInfo node = FakeGpuNode("g1", "gpu-h100");
  for (auto& gpu : node.gpus) gpu.iommu_group_members.push_back({"0000:00:14.0", "0x0c0330", "0x8086"});
  AddNode(node);
  PendingReason reason = Explain();
  EXPECT_EQ(reason.code, PendingCode::kIommuUnsafe);
  EXPECT_EQ(reason.node, "g1");
  EXPECT_THAT(reason.detail, HasSubstr("allow_unsafe_iommu"));
}

// Four GPUs free, but the two NVLink pairs are each half taken.
TEST_F(PendingReasonTest, GpusNotLinkedNamesTheNodeAndTheSetItLacks) {
  cls_ = GpuClass("pair", 2);
  cls_.gpu.links = core::GpuLinks::kNvlinkRequired;
  pools_[0].max_size = 1;
  core::NodeInfo node = FakeGpuNode("b1", "gpu-h100", "h100", 4);
  testing::LinkPair(node, 0, 1);
  testing::LinkPair(node, 2, 3);
  node.cpu_millis = 64000;
  AddNode(node);
  ASSERT_TRUE(snapshot_.Hold("w0", "b1", {0}, {}).ok());
  ASSERT_TRUE(snapshot_.Hold("w2", "b1", {2}, {}).ok());
  // Free: 1 and 3 (not linked to each other).
  PendingReason reason = Explain();
  EXPECT_EQ(reason.code, PendingCode::kGpusNotLinked);
  EXPECT_EQ(reason.node, "b1");
  EXPECT_EQ(reason.detail, "2 GPUs free on node b1 but no NVLink-connected set of 2 (the class "
                           "has gpu.links: nvlink_required)");
  ASSERT_TRUE(snapshot_.Release("w2").has_value());
  EXPECT_EQ(Explain().code, PendingCode::kQueued) << "2-3 is a free pair again";
}

// A VM needs the whole group on vfio-pci: the reason names the member that
// is not and its driver.
TEST_F(PendingReasonTest, GpusNotBoundForVmClassNameTheMemberAndItsDriver) {
  cls_ = GpuClass("vm-1x", 1, {"h100"}, core::Isolation::kVm);
  pools_[0].gpu_binding = core::GpuBinding::kVfio;
  core::NodeInfo node = FakeGpuNode("g1", "gpu-h100");
  ReportDrivers(node, "vfio-pci");
  for (auto& gpu : node.gpus) gpu.iommu_group_members[0].driver = "snd_hda_intel";
  AddNode(node);
  PendingReason reason = Explain();
  EXPECT_EQ(reason.code, PendingCode::kGpusNotBound);
  EXPECT_EQ(reason.node, "g1");
  EXPECT_EQ(reason.detail,
            "node g1 has 1 GPU free, but not bound as a VM needs (pool gpu-h100 has gpu_binding "
            "vfio): GPU 0000:18:00.0: group 40 member 0000:18:00.1 is bound to snd_hda_intel, "
            "not vfio-pci");
  EXPECT_STREQ(PendingCodeName(reason.code), "gpus_not_bound");
}

TEST_F(PendingReasonTest, GpusOnVfioPciAreNotForContainers) {
  core::NodeInfo node = FakeGpuNode("g1", "gpu-h100");
  ReportDrivers(node, "vfio-pci");
  AddNode(node);
  PendingReason reason = Explain();
  EXPECT_EQ(reason.code, PendingCode::kGpusNotBound);
  EXPECT_THAT(reason.detail, HasSubstr("GPU 0000:18:00.0 is bound to vfio-pci, which a container "
                                       "cannot use"));
}

TEST_F(PendingReasonTest, UnhealthyGpus) {
  core::NodeInfo node = FakeGpuNode("g1", "gpu-h100");
  node.gpus[5].healthy = false;
  AddNode(node);
  PendingReason reason = Explain();
  EXPECT_EQ(reason.code, PendingCode::kGpusUnhealthy);
  EXPECT_EQ(reason.node, "g1");
  EXPECT_EQ(reason.detail, "node g1 would hold it, but 1 GPU of its free GPUs is unhealthy and "
                           "not handed out");
}

// The operator's next step is in the GPU's health reason (an XID, a CDI
// spec that could not describe it): the pending reason passes it on.
TEST_F(PendingReasonTest, UnhealthyGpusNameTheCause) {
  core::NodeInfo node = FakeGpuNode("g1", "gpu-h100");
  node.gpus[5].healthy = false;
  node.gpus[5].health_reason = "CDI: libcuda.so is 535.104.05 but the loaded driver is 550.54.15";
  AddNode(node);
  EXPECT_EQ(Explain().detail,
            "node g1 would hold it, but 1 GPU of its free GPUs is unhealthy and not handed out "
            "(GPU 5: CDI: libcuda.so is 535.104.05 but the loaded driver is 550.54.15)");
}

TEST_F(PendingReasonTest, DriverInstallingNamesKernelImageAndSince) {
  AddNode(FakeGpuNode("g1", "gpu-h100"), core::NodeState::kReady, core::DriverState::kNeedsDriver);
  // The pool is also at max_size: the install, not the size, is what it waits for.
  pools_[0].max_size = 1;
  PendingReason reason = Explain();
  EXPECT_EQ(reason.code, PendingCode::kDriverInstalling);
  EXPECT_EQ(reason.node, "g1");
  EXPECT_EQ(reason.kernel, "6.1.0-18-amd64");
  EXPECT_EQ(reason.image, "registry.example/driver:550-6.1.0-18-amd64-debian12");
  EXPECT_EQ(reason.since, kNow - absl::Minutes(3));
  EXPECT_THAT(reason.detail, HasSubstr("waiting for the driver install on node g1"));
  EXPECT_THAT(reason.detail, HasSubstr("since 3m ago"));
}

TEST_F(PendingReasonTest, DriverInstallFailed) {
  AddNode(FakeGpuNode("g1", "gpu-h100"), core::NodeState::kReady,
          core::DriverState::kInstallFailed);
  PendingReason reason = Explain();
  EXPECT_EQ(reason.code, PendingCode::kDriverInstallFailed);
  EXPECT_THAT(reason.detail, HasSubstr("the driver install failed on node g1"));
}

TEST_F(PendingReasonTest, AFailedInstallQuotesItsLogTail) {
  AddNode(FakeGpuNode("g1", "gpu-h100"), core::NodeState::kReady,
          core::DriverState::kInstallFailed,
          "exit status 3; log tail: building nvidia.ko | cc: not found");
  EXPECT_THAT(Explain().detail,
              HasSubstr("; see ListDriverWork: exit status 3; log tail: building nvidia.ko | cc: "
                        "not found"));
}

TEST_F(PendingReasonTest, AnAgentsRunningInstallIsWaitedFor) {
  AddNode(FakeGpuNode("g1", "gpu-h100"), core::NodeState::kReady, core::DriverState::kInstalling);
  PendingReason reason = Explain();
  EXPECT_EQ(reason.code, PendingCode::kDriverInstalling);
  EXPECT_THAT(reason.detail, HasSubstr("waiting for the driver install on node g1"));
}

TEST_F(PendingReasonTest, NodeProvisioningAgainstTheMedianStartTime) {
  AddNode(FakeGpuNode("g1", "gpu-h100"), core::NodeState::kProvisioning,
          core::DriverState::kReady);
  scaling_["gpu-h100"] = {.has_signal = true, .current_size = 1, .target_size = 1,
                          .median_start = absl::Minutes(4), .start_samples = 5};
  PendingReason reason = Explain();
  EXPECT_EQ(reason.code, PendingCode::kNodeProvisioning);
  EXPECT_EQ(reason.since, kNow - absl::Minutes(3));
  EXPECT_THAT(reason.detail, HasSubstr("registered 3m ago"));
  EXPECT_THAT(reason.detail, HasSubstr("start in 4m (median of 5)"));
}

TEST_F(PendingReasonTest, PoolBackingOffUntil) {
  scaling_["gpu-h100"] = {.has_signal = true,
                          .backoff_until = kNow + absl::Minutes(2),
                          .backoff_detail = "out of resources in us-east-1a"};
  PendingReason reason = Explain();
  EXPECT_EQ(reason.code, PendingCode::kPoolBackingOff);
  EXPECT_EQ(reason.until, kNow + absl::Minutes(2));
  EXPECT_THAT(reason.detail, HasSubstr("out of resources in us-east-1a"));
}

TEST_F(PendingReasonTest, PoolAtMaxSizeNeverClaimsAScaleUp) {
  AddNode(FakeGpuNode("g1", "gpu-h100"));
  AddNode(FakeGpuNode("g2", "gpu-h100"));
  HoldOne("g1");
  HoldOne("g2");
  scaling_["gpu-h100"] = {.has_signal = true, .current_size = 2, .target_size = 2};
  PendingReason reason = Explain();
  EXPECT_EQ(reason.code, PendingCode::kPoolAtMaxSize);
  EXPECT_EQ(reason.detail, "pool gpu-h100 is at max_size 2 (2 nodes) and no node has 8 GPUs "
                           "free; no scale-up can be requested");
  EXPECT_THAT(reason.detail, Not(HasSubstr("scale-up requested")));
}

TEST_F(PendingReasonTest, ScaleUpRequestedOnlyWhenTheSignalAsks) {
  scaling_["gpu-h100"] = {.has_signal = true, .current_size = 0, .target_size = 1,
                          .scale_up_since = kNow - absl::Seconds(30)};
  PendingReason reason = Explain();
  EXPECT_EQ(reason.code, PendingCode::kScaleUpRequested);
  EXPECT_THAT(reason.detail, HasSubstr("from 0 to 1 nodes requested 30s ago"));
  EXPECT_THAT(reason.detail, HasSubstr("no measured start time yet"));

  scaling_["gpu-h100"].target_size = 0;  // Not asked (yet).
  reason = Explain();
  EXPECT_EQ(reason.code, PendingCode::kScaleUpNotYetRequested);
  EXPECT_THAT(reason.detail, Not(HasSubstr("requested")));
}

TEST_F(PendingReasonTest, TheNearestPoolWins) {
  // Preferred h100 pool at max_size; the a100 fallback has a node installing
  // its driver: that install is what the workspace waits for.
  cls_ = GpuClass("gpu-8x", 8, {"h100", "a100"});
  pools_.push_back(GpuPool("gpu-a100", "a100"));
  FillPreferredPoolToMaxSize();
  AddNode(FakeGpuNode("a1", "gpu-a100", "a100"), core::NodeState::kReady,
          core::DriverState::kNeedsDriver);
  PendingReason reason = Explain();
  EXPECT_EQ(reason.code, PendingCode::kDriverInstalling);
  EXPECT_EQ(reason.pool, "gpu-a100");
}

TEST_F(PendingReasonTest, AFallbackPoolScalingUpBeatsAFullPreferredPool) {
  cls_ = GpuClass("gpu-8x", 8, {"h100", "a100"});
  pools_.push_back(GpuPool("gpu-a100", "a100"));
  FillPreferredPoolToMaxSize();
  scaling_["gpu-a100"] = {.has_signal = true, .current_size = 0, .target_size = 1};
  PendingReason reason = Explain();
  EXPECT_EQ(reason.code, PendingCode::kScaleUpRequested);
  EXPECT_EQ(reason.pool, "gpu-a100");

  scaling_.erase("gpu-a100");  // The fallback's scale-up not asked yet: still on its way.
  EXPECT_EQ(Explain().pool, "gpu-a100");
}

// The queue, explained in service order over the same snapshot.
class QueueReasonTest : public PendingReasonTest {
 protected:
  std::vector<PendingReason> ExplainAll(int workspaces) {
    PendingContext ctx;
    ctx.pools = &pools_;
    ctx.snapshot = &snapshot_;
    ctx.driver_policy = &policy_;
    ctx.scaling = scaling_;
    ctx.now = kNow;
    return ExplainQueue(ctx, std::vector<const core::WorkspaceClass*>(workspaces, &cls_));
  }
};

TEST_F(QueueReasonTest, UnhealthyGpusHoldOnlyAsManyAsTheyWouldServe) {
  // One node at max_size: 1 GPU held, the other 7 free but unhealthy.
  pools_[0].max_size = 1;
  core::NodeInfo node = FakeGpuNode("h-new", "gpu-h100");
  for (int i = 1; i < 8; ++i) node.gpus[i].healthy = false;
  AddNode(node);
  HoldOne("h-new");
  cls_ = GpuClass("gpu-2x", 2);
  std::vector<PendingReason> reasons = ExplainAll(37);
  ASSERT_EQ(reasons.size(), 37u);
  for (int i = 0; i < 3; ++i) {  // 7 healthy GPUs would hold three 2-GPU workspaces.
    EXPECT_EQ(reasons[i].code, PendingCode::kGpusUnhealthy) << "position " << i + 1;
    EXPECT_EQ(reasons[i].node, "h-new");
    EXPECT_THAT(reasons[i].detail, HasSubstr("7 GPUs of its free GPUs are unhealthy"));
  }
  for (int i = 3; i < 37; ++i) {
    EXPECT_EQ(reasons[i].code, PendingCode::kPoolAtMaxSize) << "position " << i + 1;
  }
  EXPECT_EQ(reasons[36].queue_position, 37);
  EXPECT_EQ(reasons[36].detail, "pool gpu-h100 is at max_size 1 (1 node) and no node has 2 GPUs "
                                "free for it after the workspaces ahead; no scale-up can be "
                                "requested");

  // ExplainPending says the same of the 37th alone, given who is ahead.
  position_ = 37;
  ahead_.assign(36, &cls_);
  EXPECT_EQ(Explain(), reasons[36]);
}

TEST_F(QueueReasonTest, InstallingCapacityGoesToTheWorkspacesAhead) {
  // An 8-GPU node installing its driver holds two 4-GPU workspaces; the
  // third waits for a node the scaler has not asked for yet.
  AddNode(FakeGpuNode("g1", "gpu-h100"), core::NodeState::kReady, core::DriverState::kNeedsDriver);
  cls_ = GpuClass("gpu-4x", 4);
  std::vector<PendingReason> reasons = ExplainAll(3);
  EXPECT_EQ(reasons[0].code, PendingCode::kDriverInstalling);
  EXPECT_EQ(reasons[1].code, PendingCode::kDriverInstalling);
  EXPECT_EQ(reasons[1].node, "g1");
  EXPECT_EQ(reasons[2].code, PendingCode::kScaleUpNotYetRequested);
}

TEST_F(QueueReasonTest, AScaleUpCoversOnlyTheFirstWorkspaces) {
  // Asked: 1 node of 8 GPUs, 4 two-GPU workspaces. max_size 2 leaves room
  // for one more node (4 more), then the pool is full.
  cls_ = GpuClass("gpu-2x", 2);
  scaling_["gpu-h100"] = {.has_signal = true, .current_size = 0, .target_size = 1};
  std::vector<PendingReason> reasons = ExplainAll(10);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(reasons[i].code, PendingCode::kScaleUpRequested) << i;
  for (int i = 4; i < 8; ++i) EXPECT_EQ(reasons[i].code, PendingCode::kScaleUpNotYetRequested) << i;
  for (int i = 8; i < 10; ++i) EXPECT_EQ(reasons[i].code, PendingCode::kPoolAtMaxSize) << i;
}

TEST_F(QueueReasonTest, RoomIsQueuedOnlyWhileItLasts) {
  AddNode(FakeGpuNode("g1", "gpu-h100"));
  pools_[0].max_size = 1;
  std::vector<PendingReason> reasons = ExplainAll(2);
  EXPECT_EQ(reasons[0].code, PendingCode::kQueued);
  EXPECT_EQ(reasons[1].code, PendingCode::kPoolAtMaxSize);
}

TEST_F(QueueReasonTest, AShortDimensionIsNotRoom) {
  AddNode(FakeGpuNode("g1", "gpu-h100"));  // 1Ti memory.
  cls_ = GpuClass("gpu-1-mem", 1);
  cls_.resources.memory_bytes = 300 * testing::kGi;
  std::vector<PendingReason> reasons = ExplainAll(4);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(reasons[i].code, PendingCode::kQueued) << i;
  EXPECT_EQ(reasons[3].code, PendingCode::kScaleUpNotYetRequested);
}

TEST_F(PendingReasonTest, CodeNamesAreStable) {
  EXPECT_STREQ(PendingCodeName(PendingCode::kPoolAtMaxSize), "pool_at_max_size");
  EXPECT_STREQ(PendingCodeName(PendingCode::kGpusNotLinked), "gpus_not_linked");
  EXPECT_STREQ(PendingCodeName(PendingCode::kScaleUpNotYetRequested),
               "scale_up_not_yet_requested");
}

}  // namespace
}  // namespace wsched::placement
