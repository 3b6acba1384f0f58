#include "server/scheduler/signal_rows.h"

#include "gtest/gtest.h"

namespace wsched::scheduler {
namespace {

using scaling::ScalingReason;

TEST(SignalRowsTest, ASignalComesBackAsItWasPublishedWithTheRowsGeneration) {
  scaling::PoolSignal signal;
  signal.pool = "gpu-a100";
  signal.generation = 3;  // The scaler's own count; the row's replaces it.
  signal.current_size = 2;
  signal.target_size = 1;
  signal.nodes_to_remove = {"node-a"};
  signal.lost_nodes = {"node-b"};
  signal.reasons = {ScalingReason::kPendingWorkspaces, ScalingReason::kWarmBuffer,
                    ScalingReason::kIdleTimeout,       ScalingReason::kMinSize,
                    ScalingReason::kMaxSize,           ScalingReason::kProvisioningFailed,
                    ScalingReason::kSteady};
  signal.detail = "why";
  signal.backoff_until = absl::FromUnixSeconds(1'800'000'000);

  store::SignalRow row = SignalRowOf(signal, 42, "replica-1");
  EXPECT_EQ(row.pool, "gpu-a100");
  EXPECT_EQ(row.generation, 42);
  EXPECT_EQ(row.leader, "replica-1");
  EXPECT_EQ(row.reasons.size(), signal.reasons.size());

  scaling::PoolSignal want = signal;
  want.generation = 42;
  EXPECT_EQ(PoolSignalOf(row), want);
}

TEST(SignalRowsTest, EveryReasonKeepsItsMeaning) {
  store::SignalRow row;
  row.reasons = {store::SignalReason::kIdleTimeout, store::SignalReason::kProvisioningFailed};
  EXPECT_EQ(PoolSignalOf(row).reasons,
            (std::vector<ScalingReason>{ScalingReason::kIdleTimeout,
                                        ScalingReason::kProvisioningFailed}));
}

TEST(SignalRowsTest, AReLayoutComesBackAsItWasPublished) {
  const placement::RelayoutOrder order{.node = "node-a",
                                       .pool = "gpu-h200",
                                       .gpu_index = 3,
                                       .layout = {{"1g.18gb", 0}, {"3g.71gb", 4}},
                                       .for_profile = "3g.71gb",
                                       .ordered_at = absl::FromUnixMicros(1'800'000'000'123'456)};
  store::RelayoutRow row = RelayoutRowOf(order, "replica-1");
  EXPECT_EQ(row.leader, "replica-1");
  EXPECT_EQ(row.layout, (std::vector<std::pair<std::string, int>>{{"1g.18gb", 0}, {"3g.71gb", 4}}));
  EXPECT_EQ(RelayoutOrderOf(row), order);
}

}  // namespace
}  // namespace wsched::scheduler
