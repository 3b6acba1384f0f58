// A class's idle-GPU policy: read, checked at its paths, written back, diffed.
#include "server/catalog/idle.h"

#include <string>

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

// A catalog whose classes[1] (gpu-1x) has `idle` as given (YAML flow text)
// and whose classes[0] (small) is a CPU class with `cpu_idle`, if any.
std::string WithIdle(const std::string& idle, const std::string& cpu_idle = "") {
  std::string text = R"(
classes:
  - id: small
    display_name: Small
    resources: {cpu: 2, memory: 8Gi}
    default: true
)";
  if (!cpu_idle.empty()) text += "    idle: " + cpu_idle + "\n";
  text += R"(  - id: gpu-1x
    display_name: One GPU
    resources: {cpu: 8, memory: 64Gi}
    gpu: {count: 1}
)";
  if (!idle.empty()) text += "    idle: " + idle + "\n";
  text += R"(pools:
  - id: cpu
    node: {cpu: 16, memory: 64Gi}
    max_size: 4
  - id: gpu
    node: {cpu: 64, memory: 512Gi, gpus: 8, gpu_model: H100}
    max_size: 2
driver_policy:
  - {kernel: "5.15.0-*-generic", os_id: ubuntu, driver_version: 550.54.15, driver_branch: "550",
     installer_repo: registry.example.com/nvidia/driver}
)";
  return text;
}

TEST(IdlePolicyCatalog, ReadsEveryField) {
  const CatalogCheck check =
      CheckCatalogText(WithIdle("{gpu_utilization_below: 5%, for: 30m, action: stop, warn_before: 5m}"));
  ASSERT_THAT(check.errors, IsEmpty());
  const core::WorkspaceClass* cls = check.catalog.FindClass("gpu-1x");
  ASSERT_NE(cls, nullptr);
  ASSERT_TRUE(cls->idle.has_value());
  EXPECT_EQ(cls->idle->utilization_below_percent, 5);
  EXPECT_EQ(cls->idle->idle_for, absl::Minutes(30));
  EXPECT_EQ(cls->idle->action, core::IdleAction::kStop);
  EXPECT_EQ(cls->idle->warn_before, absl::Minutes(5));
  EXPECT_EQ(check.catalog.FindClass("small")->idle, std::nullopt);
}

TEST(IdlePolicyCatalog, ActionDefaultsToNotify) {
  const CatalogCheck check = CheckCatalogText(WithIdle("{gpu_utilization_below: 10%, for: 1h}"));
  ASSERT_THAT(check.errors, IsEmpty());
  EXPECT_EQ(check.catalog.FindClass("gpu-1x")->idle->action, core::IdleAction::kNotify);
}

TEST(IdlePolicyCatalog, ReportsEachBrokenRuleAtItsField) {
  EXPECT_THAT(CheckCatalogText(WithIdle("{gpu_utilization_below: 0%, for: 30s}")).errors,
              ElementsAre("classes[1] (gpu-1x).idle.gpu_utilization_below: must be > 0% and < 100%",
                          "classes[1] (gpu-1x).idle.for: must be >= 1m"));
  EXPECT_THAT(CheckCatalogText(WithIdle("{gpu_utilization_below: 100%, for: 1m}")).errors,
              ElementsAre("classes[1] (gpu-1x).idle.gpu_utilization_below: must be > 0% and < 100%"));
  EXPECT_THAT(
      CheckCatalogText(WithIdle("{gpu_utilization_below: 5%, for: 10m, action: stop, warn_before: 10m}"))
          .errors,
      ElementsAre("classes[1] (gpu-1x).idle.warn_before: must be < for (10m): the warning comes "
                  "within the idle time"));
  EXPECT_THAT(
      CheckCatalogText(WithIdle("{gpu_utilization_below: 5%, for: 10m, action: notify, warn_before: 1m}"))
          .errors,
      ElementsAre("classes[1] (gpu-1x).idle.warn_before: set with action notify; only a stop is "
                  "warned of"));
  EXPECT_THAT(
      CheckCatalogText(WithIdle("", "{gpu_utilization_below: 5%, for: 10m}")).errors,
      ElementsAre("classes[0] (small).idle: set on a class without GPUs (gpu.count is 0); only "
                  "GPUs sit idle"));
}

TEST(IdlePolicyCatalog, ReportsWhatCannotBeRead) {
  EXPECT_THAT(CheckCatalogText(WithIdle("{gpu_utilization_below: 0.05, for: soon, action: kill, "
                                        "after: 1m}"))
                  .errors,
              ElementsAre("classes[1] (gpu-1x).idle.after: unknown field",
                          "classes[1] (gpu-1x).idle.gpu_utilization_below: \"0.05\" is not a "
                          "whole percent like \"5%\"",
                          "classes[1] (gpu-1x).idle.for: \"soon\" is not a duration; use a "
                          "number with a unit, e.g. \"10m\", \"30s\", \"1h30m\"",
                          "classes[1] (gpu-1x).idle.action: must be notify or stop, got \"kill\""));
  EXPECT_THAT(CheckCatalogText(WithIdle("{action: stop}")).errors,
              ElementsAre("classes[1] (gpu-1x).idle.gpu_utilization_below: is required",
                          "classes[1] (gpu-1x).idle.for: is required"));
  EXPECT_THAT(CheckCatalogText(WithIdle("5%")).errors,
              ElementsAre(HasSubstr("classes[1] (gpu-1x).idle: must be a map")));
}

TEST(IdlePolicyCatalog, TheShortestForIsTheInstallationsToSet) {
  const std::string text = WithIdle("{gpu_utilization_below: 5%, for: 2s, action: stop, warn_before: 1s}");
  EXPECT_THAT(CheckCatalogText(text).errors,
              ElementsAre("classes[1] (gpu-1x).idle.for: must be >= 1m"));
  ValidationOptions short_ok;
  short_ok.min_idle_for = absl::Seconds(1);
  EXPECT_THAT(CheckCatalogText(text, short_ok).errors, IsEmpty());
  ValidationOptions strict;
  strict.min_idle_for = absl::Hours(1);
  EXPECT_THAT(CheckCatalogText(WithIdle("{gpu_utilization_below: 5%, for: 30m}"), strict).errors,
              ElementsAre("classes[1] (gpu-1x).idle.for: must be >= 1h"));
}

TEST(IdlePolicyCatalog, RendersBackAndDiffs) {
  absl::StatusOr<core::Catalog> before = ParseCatalog(WithIdle(""));
  absl::StatusOr<core::Catalog> after =
      ParseCatalog(WithIdle("{gpu_utilization_below: 5%, for: 30m, action: stop, warn_before: 5m}"));
  ASSERT_TRUE(before.ok()) << before.status();
  ASSERT_TRUE(after.ok()) << after.status();
  const std::string text = RenderCatalogYaml(*after);
  EXPECT_THAT(text, HasSubstr("idle: {gpu_utilization_below: 5%, for: 30m, action: stop, "
                              "warn_before: 5m}"));
  absl::StatusOr<core::Catalog> back = ParseCatalog(text);
  ASSERT_TRUE(back.ok()) << back.status() << "\n" << text;
  EXPECT_EQ(back->classes, after->classes);
  std::vector<CatalogChange> changes = DiffCatalogs(*before, *after);
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].detail, "idle none -> below 5% for 30m, stop (warn 5m before)");
}

}  // namespace
}  // namespace wsched::catalog
