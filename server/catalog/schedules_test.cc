// Warm-buffer and scale-down schedules in catalog files: read, checked at
// exact paths, written back and diffed.
#include "server/catalog/schedules.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/catalog/diff.h"
#include "server/catalog/load.h"
#include "server/catalog/render.h"

namespace wsched::catalog {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

constexpr absl::Weekday kWeekdays[] = {absl::Weekday::monday, absl::Weekday::tuesday,
                                       absl::Weekday::wednesday, absl::Weekday::thursday,
                                       absl::Weekday::friday};

// One CPU class and a GPU pool whose `extra` lines follow max_size.
std::string WithGpuPool(absl::string_view extra) {
  return absl::StrCat(R"(
classes:
  - {id: small, display_name: Small, resources: {cpu: 2, memory: 8Gi}, default: true}
pools:
  - id: cpu
    node: {cpu: 16, memory: 64Gi}
    max_size: 4
  - id: gpu-h100
    node: {cpu: 96, memory: 1Ti, gpus: 8, gpu_model: H100}
    max_size: 4
)",
                      extra, R"(
driver_policy:
  - {kernel: "5.15.0-*-generic", os_id: ubuntu, driver_version: 550.54.15, driver_branch: "550",
     installer_repo: registry.example.com/nvidia/driver}
)");
}

constexpr const char* kSchedules = R"(    warm_buffer:
      default: 0
      time_zone: Europe/Berlin
      windows:
        - {days: [mon-fri], from: "08:00", to: "18:00", nodes: 2}
        - {days: [sat, sun], nodes: 1}
    scale_down:
      unneeded: 20m
      schedule:
        time_zone: "+01:00"
        windows:
          - {days: [mon-fri], from: "08:00", to: "18:00", allow: false}
          - {from: "22:00", to: "06:00", allow: true})";

TEST(CatalogSchedules, ReadsWarmBufferAndScaleDownSchedules) {
  absl::StatusOr<core::Catalog> catalog = ParseCatalog(WithGpuPool(kSchedules));
  ASSERT_TRUE(catalog.ok()) << catalog.status();
  const core::NodePool& pool = catalog->pools[1];
  EXPECT_EQ(pool.warm_buffer,
            (core::WarmBuffer{
                .default_nodes = 0,
                .time_zone = "Europe/Berlin",
                .windows = {{.when = {.days = {std::begin(kWeekdays), std::end(kWeekdays)},
                                      .start_minute = 8 * 60,
                                      .end_minute = 18 * 60},
                             .nodes = 2},
                            {.when = {.days = {absl::Weekday::saturday, absl::Weekday::sunday}},
                             .nodes = 1}}}));
  EXPECT_EQ(pool.scale_down.unneeded, absl::Minutes(20));
  const core::ScaleDownSchedule& schedule = pool.scale_down.schedule;
  EXPECT_TRUE(schedule.default_allow);
  EXPECT_EQ(schedule.time_zone, "+01:00");
  ASSERT_EQ(schedule.windows.size(), 2u);
  EXPECT_FALSE(schedule.windows[0].allow);
  EXPECT_EQ(schedule.windows[1].when,
            (core::TimeWindow{.start_minute = 22 * 60, .end_minute = 6 * 60}));
  EXPECT_TRUE(schedule.windows[1].allow);
  // The plain integer stays a constant.
  EXPECT_EQ(catalog->pools[0].warm_buffer, core::WarmBuffer{});
  catalog = ParseCatalog(WithGpuPool("    warm_buffer: 2"));
  ASSERT_TRUE(catalog.ok()) << catalog.status();
  EXPECT_EQ(catalog->pools[1].warm_buffer, core::WarmBuffer::Constant(2));
}

TEST(CatalogSchedules, RoundTripsThroughTheCanonicalYaml) {
  absl::StatusOr<core::Catalog> catalog = ParseCatalog(WithGpuPool(kSchedules));
  ASSERT_TRUE(catalog.ok()) << catalog.status();
  const std::string text = RenderCatalogYaml(*catalog);
  EXPECT_THAT(text, HasSubstr(R"(    warm_buffer:
      default: 0
      time_zone: "Europe/Berlin"
      windows:
        - {days: [mon-fri], from: "08:00", to: "18:00", nodes: 2}
        - {days: [sat-sun], from: "00:00", to: "24:00", nodes: 1})"));
  EXPECT_THAT(text, HasSubstr(R"(      schedule:
        default: true
        time_zone: "+01:00"
        windows:
          - {days: [mon-fri], from: "08:00", to: "18:00", allow: false}
          - {from: "22:00", to: "06:00", allow: true})"));
  absl::StatusOr<core::Catalog> back = ParseCatalog(text);
  ASSERT_TRUE(back.ok()) << back.status() << "\n" << text;
  EXPECT_EQ(back->pools, catalog->pools);
  EXPECT_EQ(RenderCatalogYaml(*back), text);
}

TEST(CatalogSchedules, DiffShowsTheScheduleOnOneLine) {
  absl::StatusOr<core::Catalog> before = ParseCatalog(WithGpuPool("    warm_buffer: 1"));
  absl::StatusOr<core::Catalog> after = ParseCatalog(WithGpuPool(kSchedules));
  ASSERT_TRUE(before.ok() && after.ok());
  std::vector<CatalogChange> changes = DiffCatalogs(*before, *after);
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_THAT(changes[0].detail,
              HasSubstr("warm_buffer 1 -> {default: 0, time_zone: \"Europe/Berlin\", windows: "
                        "[{days: [mon-fri], from: \"08:00\", to: \"18:00\", nodes: 2}, {days: "
                        "[sat-sun], from: \"00:00\", to: \"24:00\", nodes: 1}]}"));
  EXPECT_THAT(changes[0].detail, HasSubstr("scale_down.schedule {default: true} -> {default: "
                                           "true, time_zone: \"+01:00\", windows: ["));
}

TEST(CatalogSchedules, ReadingErrorsNameTheirPath) {
  CatalogCheck check = CheckCatalogText(WithGpuPool(R"(    warm_buffer:
      default: 0
      time_zne: UTC
      windows:
        - {days: [mon-fr], from: "8:00", to: "18:00", nodes: 2}
        - {days: [mon, tue-thu, wed], from: "08:00", to: "25:00"}
        - {days: [], nodes: two}
        - nights
    scale_down:
      schedule:
        default: sometimes
        windows:
          - {days: monday, allow: false}
          - {from: "08:00"}
          - {from: "8", to: "00:00", allow: true})"));
  const std::string pool = "pools[1] (gpu-h100)";
  EXPECT_THAT(
      check.errors,
      ElementsAre(
          // The pool's fields are read in the order of the reference table.
          pool + ".scale_down.schedule.default: must be true or false, got \"sometimes\"",
          pool + ".scale_down.schedule.windows[0].days: must be a list, got \"monday\"",
          pool + ".scale_down.schedule.windows[1].allow: is required",
          // Not also "to: must differ from from": from was unreadable.
          pool + ".scale_down.schedule.windows[2].from: \"8\": want HH:MM",
          pool + ".warm_buffer.time_zne: unknown field; did you mean time_zone?",
          pool +
              ".warm_buffer.windows[0].days[0]: \"fr\": not a day of the week (mon, tue, ... sun)",
          pool + ".warm_buffer.windows[0].from: \"8:00\": want HH:MM",
          pool + ".warm_buffer.windows[1].days[2]: wed is already in the list",
          pool + ".warm_buffer.windows[1].to: \"25:00\": not a time of day",
          pool + ".warm_buffer.windows[1].nodes: is required",
          pool + ".warm_buffer.windows[2].days: must name at least one day (leave days out for "
                 "every day)",
          pool + ".warm_buffer.windows[2].nodes: \"two\" is not a whole number",
          pool + ".warm_buffer.windows[3]: must be a map, got \"nights\""));
  check = CheckCatalogText(WithGpuPool("    warm_buffer: [1]"));
  EXPECT_THAT(check.errors,
              ElementsAre(pool + ".warm_buffer: must be a node count or a map with default, "
                                 "time_zone and windows, got a list"));
}

TEST(CatalogSchedules, ValueRulesNameTheirPath) {
  CatalogCheck check = CheckCatalogText(WithGpuPool(R"(    warm_buffer:
      default: -1
      time_zone: Europe/Berlln
      windows:
        - {days: [mon-fri], from: "08:00", to: "18:00", nodes: 2}
        - {from: "24:00", to: "06:00", nodes: 1}
        - {from: "09:00", to: "09:00", nodes: 5}
    scale_down:
      schedule:
        time_zone: localtime
        windows:
          - {from: "10:00", to: "10:00", allow: false})"));
  const std::string pool = "pools[1] (gpu-h100)";
  EXPECT_THAT(
      check.errors,
      ElementsAre(
          pool + ".warm_buffer.default: must be >= 0",
          pool + ".warm_buffer.time_zone: unknown time zone \"Europe/Berlln\" (is tzdata "
                 "installed?)",
          pool + ".warm_buffer.windows[1].from: must be from 00:00 to 23:59",
          pool + ".warm_buffer.windows[2].to: must differ from from (09:00); leave out from and "
                 "to for the whole day",
          pool + ".warm_buffer.windows[2].nodes: must be <= max_size (4)",
          pool + ".scale_down.schedule.time_zone: \"localtime\" is not a time zone (want an IANA "
                 "name like Europe/Berlin, or +HH:MM)",
          pool + ".scale_down.schedule.windows[0].to: must differ from from (10:00); leave out "
                 "from and to for the whole day"));
}

TEST(CatalogSchedules, FixedOffsetsAndUtcAreAccepted) {
  for (const char* zone : {"UTC", "+05:30", "UTC-03:00", "America/New_York"}) {
    SCOPED_TRACE(zone);
    CatalogCheck check = CheckCatalogText(WithGpuPool(absl::StrCat(
        "    warm_buffer: {time_zone: \"", zone, "\", windows: [{from: \"08:00\", nodes: 1}]}")));
    EXPECT_THAT(check.errors, IsEmpty());
  }
}

TEST(CatalogSchedules, WarnsWhenScaleDownIsNeverAllowed) {
  CatalogCheck check = CheckCatalogText(WithGpuPool(R"(    scale_down:
      schedule: {default: false, windows: [{days: [sat], allow: false}]})"));
  EXPECT_THAT(check.errors, IsEmpty());
  EXPECT_THAT(check.warnings,
              ::testing::Contains("pools[1] (gpu-h100).scale_down.schedule: never allows "
                                  "scale-down: idle nodes are never removed"));
}

}  // namespace
}  // namespace wsched::catalog
