#include "server/simulate/scenario.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/placement/test_nodes.h"

namespace wsched::simulate {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

Scenario Base() {
  Scenario base;
  base.name = "baseline";
  core::NodePool pool = placement::testing::GpuPool("gpu-h100", "h100");
  pool.warm_buffer = {.default_nodes = 0,
                      .windows = {{.when = {.start_minute = 480, .end_minute = 1080}, .nodes = 2}}};
  pool.scale_down.schedule = {.windows = {{.when = {}, .allow = false}}};
  base.input.catalog.pools = {pool, placement::testing::CpuPool("general")};
  return base;
}

TEST(ParseVariant, NameAndSettings) {
  auto spec = ParseVariant("wb-2:pool.gpu-h100.warm_buffer=2, pool.gpu-h100.scale_down.unneeded=20m");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->name, "wb-2");
  EXPECT_THAT(spec->settings,
              ElementsAre("pool.gpu-h100.warm_buffer=2", "pool.gpu-h100.scale_down.unneeded=20m"));
  ASSERT_TRUE(ParseVariant("same:").ok()) << "no settings: the base again";
}

TEST(ParseVariant, RefusesMissingColonAndBadNames) {
  EXPECT_THAT(ParseVariant("wb2").status().message(), HasSubstr("want NAME:SETTING"));
  EXPECT_THAT(ParseVariant(":pool.a.warm_buffer=1").status().message(),
              HasSubstr("the name \"\" must be 1-40 of a-z"));
  EXPECT_THAT(ParseVariant("Big:x=1").status().message(), HasSubstr("the name \"Big\""));
}

TEST(ApplySetting, EveryPoolSetting) {
  Scenario s = Base();
  for (const char* setting :
       {"pool.gpu-h100.warm_buffer=3", "pool.gpu-h100.min_size=1", "pool.gpu-h100.max_size=20",
        "pool.gpu-h100.scale_down.unneeded=20m", "pool.gpu-h100.scale_down.delay_after_add=90s",
        "pool.gpu-h100.scale_down.schedule=none", "pool.gpu-h100.max_node_provision_time=30m",
        "pool.gpu-h100.node_start=4m", "pool.gpu-h100.driver_install=7m", "batching_window=5s"}) {
    ASSERT_TRUE(ApplySetting("--set", setting, s).ok()) << setting;
  }
  const core::NodePool& pool = s.input.catalog.pools[0];
  EXPECT_EQ(pool.warm_buffer, core::WarmBuffer::Constant(3)) << "the windows go";
  EXPECT_EQ(pool.min_size, 1);
  EXPECT_EQ(pool.max_size, 20);
  EXPECT_EQ(pool.scale_down.unneeded, absl::Minutes(20));
  EXPECT_EQ(pool.scale_down.delay_after_add, absl::Seconds(90));
  EXPECT_TRUE(pool.scale_down.schedule.empty());
  EXPECT_EQ(pool.max_node_provision_time, absl::Minutes(30));
  const PoolTimings& t = s.input.timings.at("gpu-h100");
  EXPECT_EQ(t.node_start, absl::Minutes(4));
  EXPECT_EQ(t.node_start_source, "--set pool.gpu-h100.node_start=4m");
  EXPECT_EQ(t.driver_install, absl::Minutes(7));
  EXPECT_EQ(s.input.options.batching_window, absl::Seconds(5));
  EXPECT_EQ(s.input.catalog.pools[1], Base().input.catalog.pools[1]) << "other pools untouched";
}

void ExpectRefused(const std::string& setting, const std::string& message) {
  Scenario s = Base();
  absl::Status status = ApplySetting("--variant x", setting, s);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << setting;
  EXPECT_THAT(status.message(), HasSubstr(message)) << setting;
  EXPECT_EQ(s.input.catalog.pools, Base().input.catalog.pools) << "unchanged: " << setting;
  EXPECT_TRUE(s.input.timings.empty()) << setting;
}

TEST(ApplySetting, RefusalsNameTheFlagTheSettingAndTheRule) {
  ExpectRefused("pool.gpu-x.warm_buffer=1",
                "--variant x pool.gpu-x.warm_buffer=1: no pool \"gpu-x\" in the catalog (pools: "
                "gpu-h100, general)");
  ExpectRefused("pool.gpu-h100.warmbuffer=1", "unknown setting \"warmbuffer\" (settable: "
                                              "pool.<id>.warm_buffer, pool.<id>.min_size");
  ExpectRefused("warm_buffer=1", "unknown setting \"warm_buffer\"");
  ExpectRefused("pool.gpu-h100.warm_buffer", "want KEY=VALUE");
  ExpectRefused("pool.gpu-h100.warm_buffer=-1",
                "warm_buffer: want a whole number from 0 to 10000, not \"-1\"");
  ExpectRefused("pool.gpu-h100.scale_down.unneeded=soon",
                "scale_down.unneeded: want a duration from 0 such as 90s");
  ExpectRefused("pool.gpu-h100.min_size=500", "min_size 500 is above max_size 100");
  ExpectRefused("pool.gpu-h100.scale_down.schedule=always", "the only value is \"none\"");
  ExpectRefused("pool.gpu-h100.node_start=-1m", "node_start: want a duration from 0");
}

TEST(ApplySetting, AnOrgsSpendingLimit) {
  Scenario s = Base();
  for (const char* setting :
       {"org.acme.gpu_hours_limit=12.5", "org.acme.limit_period=month:Europe/Berlin",
        "org.acme.limit_action=block_and_stop", "org.acme.stop_warning=5m",
        "budget_interval=30s"}) {
    ASSERT_TRUE(ApplySetting("--set", setting, s).ok()) << setting;
  }
  const core::SpendingLimit& limit = s.input.org_limits.at("acme");
  EXPECT_EQ(limit.gpu_hours, 12.5);
  EXPECT_EQ(limit.period.kind, core::SpendingPeriod::Kind::kCalendarMonth);
  EXPECT_EQ(limit.period.time_zone, "Europe/Berlin");
  EXPECT_EQ(limit.action, core::SpendingAction::kBlockAndStop);
  EXPECT_EQ(limit.stop_warning, absl::Minutes(5));
  EXPECT_EQ(s.input.options.budget_interval, absl::Seconds(30));
  ASSERT_TRUE(ApplySetting("--set", "org.acme.limit_period=168h", s).ok());
  EXPECT_EQ(s.input.org_limits.at("acme").period.rolling, absl::Hours(24 * 7));
}

TEST(ApplySetting, AnOrgsLimitIsJudgedByTheServersRulesAndChangesNothingWhenRefused) {
  Scenario s = Base();
  EXPECT_THAT(ApplySetting("--set", "org.acme.limit_action=block_new", s).message(),
              HasSubstr("org acme has no limit yet: set org.acme.gpu_hours_limit first"));
  EXPECT_THAT(ApplySetting("--set", "org.acme.gpu_hours_limit=-1", s).message(),
              HasSubstr("org.acme.gpu_hours"));
  EXPECT_TRUE(s.input.org_limits.empty());
  ASSERT_TRUE(ApplySetting("--set", "org.acme.gpu_hours_limit=1", s).ok());
  EXPECT_THAT(ApplySetting("--set", "org.acme.limit_period=month:Mars/Olympus", s).message(),
              HasSubstr("Mars/Olympus"));
  EXPECT_THAT(ApplySetting("--variant v", "org.acme.stop_warning=5m", s).message(),
              HasSubstr("--variant v org.acme.stop_warning=5m: org.acme.stop_warning"));
  EXPECT_THAT(ApplySetting("--set", "org.acme.limit_action=stop", s).message(),
              HasSubstr("want block_new or block_and_stop"));
  EXPECT_THAT(ApplySetting("--set", "org.acme.color=red", s).message(),
              HasSubstr("unknown setting \"color\""));
  EXPECT_EQ(s.input.org_limits.at("acme"), core::SpendingLimit{.gpu_hours = 1});
}

TEST(WithSettings, NamesTheScenarioAndKeepsTheBase) {
  Scenario base = Base();
  auto variant = WithSettings(base, "wb0", {"pool.gpu-h100.warm_buffer=0"}, "--variant wb0");
  ASSERT_TRUE(variant.ok()) << variant.status();
  EXPECT_EQ(variant->name, "wb0");
  EXPECT_THAT(variant->settings, ElementsAre("pool.gpu-h100.warm_buffer=0"));
  EXPECT_FALSE(base.input.catalog.pools[0].warm_buffer.is_constant());
  EXPECT_FALSE(WithSettings(base, "bad", {"pool.gpu-h100.warm_buffer=x"}, "--variant bad").ok());
}

TEST(ApplySetting, MigLayoutsForComparingThem) {
  Scenario s = Base();
  s.input.catalog.pools[0] = placement::testing::GpuPool("gpu-h200", "h200");
  ASSERT_TRUE(ApplySetting("--set", "pool.gpu-h200.mig.layout=by_demand", s).ok());
  ASSERT_TRUE(
      ApplySetting("--set", "pool.gpu-h200.mig.profiles=3g.71gb/2g.35gb/1g.18gb/1g.18gb", s).ok());
  ASSERT_TRUE(ApplySetting("--set", "pool.gpu-h200.mig.layout=fixed", s).ok());
  ASSERT_TRUE(ApplySetting("--set", "pool.gpu-h200.mig_relayout=40s", s).ok());
  const core::NodePool& pool = s.input.catalog.pools[0];
  EXPECT_EQ(pool.mig.kind, core::MigLayoutKind::kFixed);
  EXPECT_THAT(pool.mig.profiles, ElementsAre("3g.71gb", "2g.35gb", "1g.18gb", "1g.18gb"));
  EXPECT_EQ(s.input.timings["gpu-h200"].mig_relayout, absl::Seconds(40));
}

TEST(ApplySetting, RefusesAMigLayoutTheCatalogWouldRefuseAndChangesNothing) {
  Scenario s = Base();
  s.input.catalog.pools[0] = placement::testing::GpuPool("gpu-h200", "h200");
  EXPECT_THAT(ApplySetting("--set", "pool.gpu-h200.mig.layout=sliced", s).message(),
              HasSubstr("--set pool.gpu-h200.mig.layout=sliced: mig.layout: want whole, fixed or "
                        "by_demand, not \"sliced\""));
  EXPECT_THAT(ApplySetting("--set", "pool.gpu-h200.mig.layout=fixed", s).message(),
              HasSubstr("mig.profiles"));
  ASSERT_TRUE(ApplySetting("--set", "pool.gpu-h200.mig.layout=by_demand", s).ok());
  EXPECT_THAT(ApplySetting("--set", "pool.gpu-h200.mig.profiles=3g.71gb/3g.71gb/1g.18gb/1g.18gb",
                           s)
                  .message(),
              HasSubstr("pool gpu-h200.mig.profiles"));
  EXPECT_EQ(s.input.catalog.pools[0].mig.kind, core::MigLayoutKind::kByDemand);
  EXPECT_TRUE(s.input.catalog.pools[0].mig.profiles.empty());
  // A CPU pool has no GPU to cut.
  EXPECT_THAT(ApplySetting("--set", "pool.general.mig.layout=by_demand", s).message(),
              HasSubstr("needs a GPU pool"));
}

}  // namespace
}  // namespace wsched::simulate
