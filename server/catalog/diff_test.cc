// Diffs for --dry-run and apply, and deprecation instead of removal.
#include "server/catalog/diff.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/catalog/load.h"
#include "server/catalog/test_catalogs.h"
#include "server/catalog/validate.h"

namespace wsched::catalog {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

core::Catalog Parse(const char* text) {
  absl::StatusOr<core::Catalog> catalog = ParseCatalog(text);
  EXPECT_TRUE(catalog.ok()) << catalog.status();
  return catalog.value_or(core::Catalog{});
}

TEST(DiffCatalogs, SameCatalogHasNoChanges) {
  const core::Catalog catalog = Parse(testing::kGpuCatalog);
  EXPECT_THAT(DiffCatalogs(catalog, catalog), IsEmpty());
}

TEST(DiffCatalogs, IgnoresClassVersions) {
  const core::Catalog from = Parse(testing::kGpuCatalog);
  core::Catalog to = from;
  to.classes[0].version = 7;
  EXPECT_THAT(DiffCatalogs(from, to), IsEmpty());
}

TEST(DiffCatalogs, ListsAddsUpdatesAndRemovalsWithChangedFields) {
  const core::Catalog from = Parse(testing::kGpuCatalog);
  core::Catalog to = from;
  // Update the GPU class: memory, models and price.
  to.classes[1].resources.memory_bytes = int64_t{128} << 30;
  to.classes[1].gpu.models = {"H100"};
  to.classes[1].credits_per_minute_milli = 3000;
  // Remove the CPU pool; add an H100 pool.
  to.pools.erase(to.pools.begin());
  core::NodePool h100 = from.pools[1];
  h100.id = "gpu-h100";
  h100.shape.gpu_model = "H100";
  to.pools.push_back(h100);
  to.pools[0].max_size = 16;
  to.pools[0].scale_down.unneeded = absl::Minutes(20);
  // New driver for the same kernel pattern.
  to.driver_policy[0].driver_version = "550.90.07";

  const std::vector<CatalogChange> changes = DiffCatalogs(from, to);
  std::vector<std::string> lines;
  for (const CatalogChange& change : changes) lines.push_back(DescribeChange(change));
  EXPECT_THAT(
      lines,
      ElementsAre(
          "update class gpu-1x: resources.memory 64Gi -> 128Gi; gpu.models [H100, A100] -> "
          "[H100]; credits_per_minute 2.5 -> 3",
          "update pool gpu-a100: max_size 8 -> 16; scale_down.unneeded 10m -> 20m",
          "add pool gpu-h100: node cpu 94, memory 650Gi, 8x H100, size 0..8", "remove pool cpu",
          "update driver_policy ubuntu-22.04/5.15.0-*-generic: driver_version \"550.54.15\" -> "
          "\"550.90.07\""));
  EXPECT_EQ(changes[0].kind, ChangeKind::kUpdate);
  EXPECT_EQ(changes[0].object, ObjectKind::kClass);
  EXPECT_EQ(changes[0].id, "gpu-1x");
  EXPECT_EQ(changes[3].kind, ChangeKind::kRemove);
  EXPECT_EQ(changes[3].object, ObjectKind::kPool);
}

TEST(DiffCatalogs, AddAndRemoveClasses) {
  const core::Catalog from = Parse(testing::kGpuCatalog);
  core::Catalog to = from;
  to.classes.erase(to.classes.begin() + 1);
  core::WorkspaceClass large = from.classes[0];
  large.id = "large";
  large.is_default = false;
  large.resources.cpu_request_millis = large.resources.cpu_limit_millis = 8000;
  to.classes.push_back(large);
  EXPECT_THAT(DiffCatalogs(from, to),
              ElementsAre(CatalogChange{ChangeKind::kAdd, ObjectKind::kClass, "large",
                                        "cpu 8, memory 16Gi, container"},
                          CatalogChange{ChangeKind::kRemove, ObjectKind::kClass, "gpu-1x", ""}));
}

TEST(DeprecateInsteadOfRemoving, KeepsClassesRunningWorkspacesUse) {
  const core::Catalog from = Parse(testing::kGpuCatalog);
  core::Catalog to = from;
  to.classes.erase(to.classes.begin() + 1);  // Drop gpu-1x; keep its pool.

  const std::set<std::string> in_use = {"gpu-1x"};
  EXPECT_THAT(
      DeprecateInsteadOfRemoving(DiffCatalogs(from, to), in_use),
      ElementsAre(CatalogChange{ChangeKind::kDeprecate, ObjectKind::kClass, "gpu-1x",
                                "still used by running workspaces; kept as deprecated instead of "
                                "removed"}));
  EXPECT_THAT(DeprecateInsteadOfRemoving(DiffCatalogs(from, to), {"standard"}),
              ElementsAre(CatalogChange{ChangeKind::kRemove, ObjectKind::kClass, "gpu-1x", ""}));

  const core::Catalog stored = KeepInUseClasses(from, to, in_use);
  ASSERT_EQ(stored.classes.size(), 2u);
  EXPECT_EQ(stored.classes[1].id, "gpu-1x");
  EXPECT_TRUE(stored.classes[1].deprecated);
  EXPECT_FALSE(stored.classes[1].is_default);
  EXPECT_TRUE(CheckCatalog(stored).ok()) << CheckCatalog(stored).errors[0];
  // The stored catalog differs from the old one by exactly that flag.
  EXPECT_THAT(DiffCatalogs(from, stored),
              ElementsAre(CatalogChange{ChangeKind::kUpdate, ObjectKind::kClass, "gpu-1x",
                                        "deprecated false -> true"}));
}

TEST(KeepInUseClasses, DefaultClassKeptIsNoLongerDefault) {
  const core::Catalog from = Parse(testing::kGpuCatalog);
  core::Catalog to = from;
  to.classes.erase(to.classes.begin());  // Drop "standard", the default...
  to.classes[0].is_default = true;       // ...and make gpu-1x the default.
  const core::Catalog stored = KeepInUseClasses(from, to, {"standard"});
  ASSERT_EQ(stored.classes.size(), 2u);
  EXPECT_EQ(stored.classes[1].id, "standard");
  EXPECT_FALSE(stored.classes[1].is_default);
  EXPECT_TRUE(stored.classes[1].deprecated);
}

}  // namespace
}  // namespace wsched::catalog
