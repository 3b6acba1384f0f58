#include "server/convert/convert.h"

#include "gtest/gtest.h"

namespace wsched::convert {
namespace {

TEST(Convert, ClassRoundTripsThroughProtoAndJson) {
  core::WorkspaceClass cls;
  cls.id = "gpu-h100-2";
  cls.display_name = "2x H100";
  cls.resources = {16000, 32000, int64_t{256} << 30, int64_t{100} << 30, int64_t{200} << 30};
  cls.gpu = {2, {"H100", "A100"}, core::Isolation::kVm};
  cls.devices = {{"/dev/fuse", 'c', 10, 229, "rwm"}};
  cls.pool_selector = {{"gpu", "true"}};
  cls.credits_per_minute_milli = 1500;
  cls.version = 3;
  v1::WorkspaceClass parsed;
  ASSERT_TRUE(FromJson(ToJson(ToProto(cls)), &parsed).ok());
  EXPECT_EQ(FromProto(parsed), cls);
}

TEST(Convert, PoolKeepsScalingSettings) {
  core::NodePool pool;
  pool.id = "gpu-h100";
  pool.labels = {{"gpu", "h100"}};
  pool.shape = {192000, int64_t{2} << 40, 0, 0, 8, "H100"};
  pool.max_size = 4;
  pool.scale_down.unneeded = absl::Minutes(3);
  pool.warm_buffer = core::WarmBuffer::Constant(1);
  auto back = PoolFromJson(PoolToJson(pool));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, pool);
}

TEST(Convert, PoolKeepsSchedules) {
  core::NodePool pool;
  pool.id = "gpu-h100";
  pool.max_size = 4;
  pool.warm_buffer = {
      .default_nodes = 1,
      .time_zone = "Europe/Berlin",
      .windows = {{.when = {.days = {absl::Weekday::monday, absl::Weekday::friday},
                            .start_minute = 480,
                            .end_minute = 1080},
                   .nodes = 2},
                  {.when = {.start_minute = 1320, .end_minute = 360}, .nodes = 0}}};
  pool.scale_down.schedule = {
      .default_allow = false,
      .time_zone = "+01:00",
      .windows = {{.when = {.days = {absl::Weekday::sunday}}, .allow = true}}};
  auto back = PoolFromJson(PoolToJson(pool));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, pool);
}

TEST(Convert, PoolRowsFromBeforeSchedulesStillRead) {
  auto back = PoolFromJson(R"({"id": "cpu", "max_size": 4, "warm_buffer": 3})");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->warm_buffer, core::WarmBuffer::Constant(3));
  EXPECT_EQ(back->scale_down.schedule, core::ScaleDownSchedule{});
}

TEST(Convert, NodeInfoRoundTrips) {
  core::NodeInfo node;
  node.name = "n1";
  node.pool = "gpu-h100";
  node.cpu_millis = 8000;
  node.gpus.push_back({0, "GPU-1", "0000:3b:00.0", "H100", 80, 0, false, 12,
                       {{"0000:3b:00.1", "0x040300", "0x10de"}}});
  node.control_devices = {{"/dev/nvidiactl", 'c', 195, 255, "rwm"}};
  EXPECT_EQ(FromProto(ToProto(node)), node);
  EXPECT_FALSE(ToProto(node).has_cdi()) << "an inline node stores no CDI message";

  node.gpus[0].cdi_device = "wsched.io/gpu=GPU-1";
  node.cdi = {core::CdiMode::kWsched, "/var/run/cdi", {{"/dev/fuse", "wsched.io/device=fuse"}},
              {"libnvidia-ml.so.550.54.15 not found"}};
  EXPECT_EQ(ToProto(node).cdi().mode(), v1::CDI_MODE_WSCHED);
  EXPECT_EQ(FromProto(ToProto(node)), node);
}

}  // namespace
}  // namespace wsched::convert
