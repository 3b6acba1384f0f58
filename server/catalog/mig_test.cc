// MIG slices in the catalog: a class's gpu.mig (names, a list, a size) and
// a pool's mig layout, read, checked at their paths, written back, diffed.
#include "server/catalog/mig.h"

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

constexpr int64_t kGi = int64_t{1} << 30;
constexpr int64_t kMi = int64_t{1} << 20;

// A catalog of a CPU class, a class `slice` with `gpu` (YAML flow text) and
// `extra` lines, a CPU pool, and a pool `gpu` of `gpus` x `model` whose
// own lines `pool` are added (a mig layout, a binding).
struct Slices {
  std::string gpu = "{mig: 1g.18gb, models: [H200]}";
  std::string extra;
  std::string model = "H200";
  int gpus = 8;
  std::string pool = "    mig: {layout: by_demand}\n";

  std::string Text() const {
    return R"(
classes:
  - id: small
    display_name: Small
    resources: {cpu: 2, memory: 8Gi}
    default: true
  - id: slice
    display_name: A slice
    resources: {cpu: 4, memory: 32Gi}
    gpu: )" +
           gpu + "\n" + extra + R"(pools:
  - id: cpu
    node: {cpu: 16, memory: 64Gi}
    max_size: 4
  - id: gpu
    node: {cpu: 64, memory: 512Gi, gpus: )" +
           std::to_string(gpus) + (model.empty() ? "" : ", gpu_model: " + model) + R"(}
    max_size: 2
)" + pool + R"(driver_policy:
  - {kernel: "5.15.0-*-generic", os_id: ubuntu, driver_version: 550.54.15, driver_branch: "550",
     installer_repo: registry.example.com/nvidia/driver}
)";
  }
  CatalogCheck Check() const { return CheckCatalogText(Text()); }
};

std::vector<std::string> Sized(std::vector<std::string> models, std::optional<int64_t> memory,
                               std::optional<int> compute = std::nullopt) {
  absl::StatusOr<std::vector<std::string>> names = ProfilesOfSize(models, MigSize{memory, compute});
  EXPECT_TRUE(names.ok()) << names.status();
  return names.value_or(std::vector<std::string>{});
}

std::string SizeError(std::vector<std::string> models, std::optional<int64_t> memory,
                      std::optional<int> compute = std::nullopt) {
  absl::StatusOr<std::vector<std::string>> names = ProfilesOfSize(models, MigSize{memory, compute});
  EXPECT_FALSE(names.ok());
  return std::string(names.status().message());
}

TEST(ProfilesOfSize, EveryProfileLargeEnoughSmallestFirst) {
  EXPECT_THAT(Sized({"H200"}, 16 * kGi),
              ElementsAre("1g.18gb", "1g.35gb", "2g.35gb", "3g.71gb", "4g.71gb", "7g.141gb"));
  // H100's 1g.20gb and 2g.20gb have 20096 MiB: under 20Gi (20480 MiB).
  EXPECT_THAT(Sized({"H100"}, 20 * kGi), ElementsAre("3g.40gb", "4g.40gb", "7g.80gb"));
  EXPECT_THAT(Sized({"H100"}, 19 * kGi),
              ElementsAre("1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb"));
  EXPECT_THAT(Sized({"H200"}, 20 * kGi),
              ElementsAre("1g.35gb", "2g.35gb", "3g.71gb", "4g.71gb", "7g.141gb"));
  EXPECT_THAT(Sized({"H100"}, std::nullopt, 2),
              ElementsAre("2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb"));
  EXPECT_THAT(Sized({"H200"}, std::nullopt, 2),
              ElementsAre("2g.35gb", "3g.71gb", "4g.71gb", "7g.141gb"));
  EXPECT_THAT(Sized({"H200"}, 30 * kGi, 3), ElementsAre("3g.71gb", "4g.71gb", "7g.141gb"));
  EXPECT_THAT(Sized({"H100"}, 30 * kGi, 3), ElementsAre("3g.40gb", "4g.40gb", "7g.80gb"));
  EXPECT_THAT(Sized({"H100"}, 16 * kGi),
              ElementsAre("1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb"));
  EXPECT_THAT(Sized({"H200"}, 19 * kGi),
              ElementsAre("1g.35gb", "2g.35gb", "3g.71gb", "4g.71gb", "7g.141gb"));
}

TEST(ProfilesOfSize, SeveralModelsMergeBySize) {
  EXPECT_THAT(Sized({"H100", "H200"}, 20 * kGi),
              ElementsAre("1g.35gb", "2g.35gb", "3g.40gb", "3g.71gb", "4g.40gb", "4g.71gb",
                          "7g.80gb", "7g.141gb"));
  EXPECT_THAT(
      Sized({"H100", "H200"}, 30 * kGi, 2),
      ElementsAre("2g.35gb", "3g.40gb", "3g.71gb", "4g.40gb", "4g.71gb", "7g.80gb", "7g.141gb"));
}

TEST(ProfilesOfSize, ANameTooSmallOnOneModelIsLeftOut) {
  // 1g.10gb: 9984 MiB on an H100, 9728 MiB on an A100 80GB.
  EXPECT_THAT(Sized({"H100"}, 9800 * kMi),
              ElementsAre("1g.10gb", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb"));
  EXPECT_THAT(Sized({"A100-80GB", "H100"}, 9800 * kMi),
              ElementsAre("1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb"));
}

TEST(ProfilesOfSize, NoMediaEngineProfiles) {
  for (const std::string& name : Sized({"H200", "A100-40GB"}, std::nullopt, 1)) {
    EXPECT_THAT(name, ::testing::Not(HasSubstr("+me")));
  }
}

TEST(ProfilesOfSize, SaysWhyThereIsNone) {
  EXPECT_EQ(SizeError({}, 20 * kGi),
            "a size needs gpu.models to say whose profiles it means (built-in tables: "
            "A100-40GB, A100-80GB, H100, H200); or name the profiles");
  EXPECT_EQ(SizeError({"H200", "L4"}, 20 * kGi),
            "gpu.models[1] \"L4\" has no built-in MIG table (A100-40GB, A100-80GB, H100, H200), "
            "so a size says nothing about its profiles; name the profiles");
  EXPECT_EQ(SizeError({"H200", "H100"}, 100 * kGi, 2),
            "no MIG profile of H100 has at least 100Gi of memory and 2 compute slices; its "
            "largest is 7g.80gb (81152Mi)");
}

TEST(ClassMig, ReadsANameAListOrASize) {
  Slices catalog;
  CatalogCheck check = catalog.Check();
  ASSERT_THAT(check.errors, IsEmpty());
  const core::WorkspaceClass& one = check.catalog.classes[1];
  EXPECT_TRUE(one.is_slice());
  EXPECT_FALSE(one.is_gpu());
  EXPECT_THAT(one.gpu.mig_profiles, ElementsAre("1g.18gb"));
  EXPECT_EQ(one.gpu.count, 0);

  catalog.gpu = "{mig: [2g.35gb, 1g.18gb], models: [H200]}";
  check = catalog.Check();
  ASSERT_THAT(check.errors, IsEmpty());
  EXPECT_THAT(check.catalog.classes[1].gpu.mig_profiles, ElementsAre("2g.35gb", "1g.18gb"));

  catalog.gpu = "{count: 0, mig: {memory: 20Gi, compute: 2}, models: [H200]}";
  check = catalog.Check();
  ASSERT_THAT(check.errors, IsEmpty());
  EXPECT_THAT(check.catalog.classes[1].gpu.mig_profiles,
              ElementsAre("2g.35gb", "3g.71gb", "4g.71gb", "7g.141gb"));
}

TEST(ClassMig, ShapeErrorsNameTheField) {
  Slices catalog;
  catalog.gpu = "{mig: [], models: [H200]}";
  EXPECT_THAT(catalog.Check().errors,
              ElementsAre("classes[1] (slice).gpu.mig: must name at least one profile"));

  catalog.gpu = "{mig: {memory: 20Gi, slices: 2}, models: [H200]}";
  EXPECT_THAT(catalog.Check().errors,
              ElementsAre("classes[1] (slice).gpu.mig.slices: unknown field"));

  catalog.gpu = "{mig: {}, models: [H200]}";
  EXPECT_THAT(catalog.Check().errors,
              ElementsAre("classes[1] (slice).gpu.mig: a size needs memory, compute or both"));

  catalog.gpu = "{mig: {memory: 20, compute: 9}, models: [H200]}";
  EXPECT_THAT(catalog.Check().errors,
              ElementsAre(HasSubstr("classes[1] (slice).gpu.mig.memory: "),
                          "classes[1] (slice).gpu.mig.compute: must be 1..7 (compute slices of "
                          "the 7 a GPU has), got 9"));

  catalog.gpu = "{mig: {memory: 20Gi}}";
  EXPECT_THAT(catalog.Check().errors,
              ElementsAre(HasSubstr("classes[1] (slice).gpu.mig: a size needs gpu.models")));

  catalog.gpu = "{mig: {memory: 200Gi}, models: [H200]}";
  EXPECT_THAT(catalog.Check().errors,
              ElementsAre("classes[1] (slice).gpu.mig: no MIG profile of H200 has at least "
                          "200Gi of memory; its largest is 7g.141gb (143104Mi)"));

  // Unreadable models: their error alone, not a second one about the size.
  catalog.gpu = "{mig: {memory: 20Gi}, models: {a: b}}";
  EXPECT_THAT(catalog.Check().errors,
              ElementsAre(HasSubstr("classes[1] (slice).gpu.models: must be a list")));
}

TEST(ClassMig, ASliceClassTakesNoWholeGpusNoVmAndNoLinks) {
  Slices catalog;
  catalog.gpu = "{count: 1, mig: 1g.18gb, models: [H200], isolation: vm, links: nvlink_required}";
  EXPECT_THAT(
      catalog.Check().errors,
      ElementsAre(
          "classes[1] (slice).gpu.count: must be 0 or absent with gpu.mig, got 1: a slice class "
          "takes one MIG slice, not whole GPUs",
          "classes[1] (slice).gpu.isolation: vm cannot take a MIG slice: a VM is given whole "
          "GPUs through VFIO; MIG slices go to containers only",
          "classes[1] (slice).gpu.links: nvlink_required set with gpu.mig: a slice class holds "
          "one slice, so there is nothing to link"));
}

TEST(ClassMig, ProfilesMustBeKnownToTheModelsAndListedOnce) {
  Slices catalog;
  catalog.gpu = "{mig: [1g.18gb, 1g.20gb, 1G.18GB, \"1g 18gb\", \"MIG 2g.35gb\"], models: [H200]}";
  EXPECT_THAT(
      catalog.Check().errors,
      ElementsAre("classes[1] (slice).gpu.mig[1]: unknown MIG profile \"1g.20gb\" for H200; did "
                  "you mean 1g.18gb? (H200: 1g.18gb, 1g.18gb+me, 1g.35gb, 2g.35gb, 3g.71gb, "
                  "4g.71gb, 7g.141gb)",
                  "classes[1] (slice).gpu.mig[2]: \"1G.18GB\" is listed twice",
                  "classes[1] (slice).gpu.mig[3]: must be a MIG profile name like 1g.18gb (at "
                  "most 64 printable characters, no spaces)",
                  "classes[1] (slice).gpu.mig[4]: \"MIG 2g.35gb\": write it without "
                  "nvidia-smi's \"MIG \" prefix, like 1g.18gb"));

  // Known to one of the models is enough: each pool's GPUs use their own.
  catalog.gpu = "{mig: [1g.20gb, 1g.18gb], models: [H100, H200]}";
  catalog.pool += R"(  - id: gpu-h100
    node: {cpu: 64, memory: 512Gi, gpus: 8, gpu_model: H100}
    max_size: 2
    mig: {layout: by_demand}
)";
  EXPECT_THAT(catalog.Check().errors, IsEmpty());

  // Placement's own rule then finds no pool for it either.
  catalog.gpu = "{mig: [3g.47gb], models: [H100, H200]}";
  EXPECT_THAT(catalog.Check().errors,
              ElementsAre("classes[1] (slice).gpu.mig[0]: unknown MIG profile \"3g.47gb\" for "
                          "H100 and H200; did you mean 3g.40gb? (H100: 1g.10gb, 1g.10gb+me, "
                          "1g.20gb, 2g.20gb, 3g.40gb, 4g.40gb, 7g.80gb; H200: 1g.18gb, 1g.18gb+me, "
                          "1g.35gb, 2g.35gb, 3g.71gb, 4g.71gb, 7g.141gb)",
                          "classes[1] (slice): no pool can ever hold this class (cpu: has no "
                          "GPUs; gpu: gpu_model \"H200\" has no MIG profile of [3g.47gb]; "
                          "gpu-h100: gpu_model \"H100\" has no MIG profile of [3g.47gb])"));
}

TEST(ClassMig, AModelWithoutATableMayHaveAnyProfile) {
  // H100 NVL's profiles (1g.12gb, ...) are not built in: its GPUs report them.
  Slices catalog;
  catalog.gpu = "{mig: 1g.12gb, models: [H100 NVL]}";
  catalog.model = "H100 NVL";
  catalog.pool = "";
  CatalogCheck check = catalog.Check();
  EXPECT_THAT(check.errors, IsEmpty());
  EXPECT_THAT(check.warnings,
              ElementsAre(HasSubstr("classes[1] (slice).gpu.mig: no pool that can hold this "
                                    "class cuts its GPUs into any of [1g.12gb]")));

  catalog.gpu = "{mig: 1g.12gb}";  // Any model.
  EXPECT_THAT(catalog.Check().errors, IsEmpty());
}

TEST(ClassMig, ASliceClassMayHaveAnIdlePolicy) {
  Slices catalog;
  catalog.extra = "    idle: {gpu_utilization_below: 5%, for: 30m}\n";
  CatalogCheck check = catalog.Check();
  EXPECT_THAT(check.errors, IsEmpty());
  ASSERT_TRUE(check.catalog.classes[1].idle.has_value());

  catalog.extra = "    idle: {gpu_utilization_below: 0%, for: 30m}\n";
  EXPECT_THAT(catalog.Check().errors,
              ElementsAre("classes[1] (slice).idle.gpu_utilization_below: must be > 0% and < "
                          "100%"));
}

TEST(ClassMig, NoPoolForTheSliceIsAnError) {
  Slices catalog;
  catalog.gpu = "{mig: 1g.18gb, models: [H100]}";
  EXPECT_THAT(catalog.Check().errors,
              ElementsAre(HasSubstr("classes[1] (slice).gpu.mig[0]: unknown MIG profile "
                                    "\"1g.18gb\" for H100; did you mean 1g.10gb?"),
                          "classes[1] (slice): no pool can ever hold this class (cpu: has no "
                          "GPUs; gpu: gpu_model \"H200\" is not in models [H100])"));
}

TEST(ClassMig, WarnsWhenNoPoolCutsItsProfiles) {
  Slices catalog;
  catalog.gpu = "{mig: [3g.71gb, 2g.35gb], models: [H200]}";
  catalog.pool = "    mig: {layout: fixed, profiles: [1g.35gb, 1g.35gb, 1g.35gb, 1g.35gb]}\n";
  CatalogCheck check = catalog.Check();
  EXPECT_THAT(check.errors, IsEmpty());
  EXPECT_THAT(check.warnings,
              ElementsAre("classes[1] (slice).gpu.mig: no pool that can hold this class cuts "
                          "its GPUs into any of [3g.71gb, 2g.35gb] (their mig.layout is whole, "
                          "or fixed without these profiles); only GPUs cut by hand would serve "
                          "it"));

  catalog.pool = "    mig: {layout: fixed, profiles: [1g.35gb, 1g.35gb, 2G.35GB]}\n";
  EXPECT_THAT(catalog.Check().warnings, IsEmpty());
  catalog.pool = "    mig: {layout: by_demand, profiles: [7g.141gb]}\n";
  EXPECT_THAT(catalog.Check().warnings, IsEmpty());
}

TEST(PoolMig, ReadsTheLayout) {
  Slices catalog;
  catalog.pool = "    mig: {layout: fixed, profiles: [3g.71gb, 2g.35gb, 1g.18gb, 1g.18gb]}\n";
  CatalogCheck check = catalog.Check();
  ASSERT_THAT(check.errors, IsEmpty());
  EXPECT_EQ(
      check.catalog.pools[1].mig,
      (core::MigLayout{core::MigLayoutKind::kFixed, {"3g.71gb", "2g.35gb", "1g.18gb", "1g.18gb"}}));
  EXPECT_EQ(check.catalog.pools[0].mig, core::MigLayout{});

  catalog.pool = "    mig: {layout: by_demand}\n";
  check = catalog.Check();
  ASSERT_THAT(check.errors, IsEmpty());
  EXPECT_EQ(check.catalog.pools[1].mig, (core::MigLayout{core::MigLayoutKind::kByDemand, {}}));

  catalog.pool = "    mig: {layout: mixed, profile: []}\n";
  EXPECT_THAT(catalog.Check().errors,
              ElementsAre("pools[1] (gpu).mig.profile: unknown field; did you mean profiles?",
                          "pools[1] (gpu).mig.layout: must be whole, fixed or by_demand, got "
                          "\"mixed\""));
  catalog.pool = "    mig: {profiles: [1g.18gb]}\n";
  EXPECT_THAT(catalog.Check().errors, ElementsAre("pools[1] (gpu).mig.layout: is required"));
}

TEST(PoolMig, ALayoutNeedsAGpuPoolOfAModelWithATableAndNoVfio) {
  Slices catalog;
  catalog.gpu = "{count: 1}";
  catalog.pool = "    mig: {layout: whole, profiles: [1g.18gb]}\n";
  EXPECT_THAT(catalog.Check().errors,
              ElementsAre("pools[1] (gpu).mig.profiles: set with layout whole: a whole GPU has "
                          "no slices"));

  catalog.gpus = 0;
  catalog.model = "";
  catalog.pool = "    mig: {layout: fixed, profiles: [1g.18gb]}\n";
  EXPECT_THAT(catalog.Check().errors,
              ::testing::Contains("pools[1] (gpu).mig.layout: \"fixed\" needs a GPU pool "
                                  "(node.gpus is 0)"));

  catalog = Slices();
  catalog.gpu = "{mig: 1g.24gb, models: [L40S]}";
  catalog.model = "L40S";
  catalog.pool = "    mig: {layout: by_demand}\n    gpu_binding: vfio\n";
  EXPECT_THAT(catalog.Check().errors,
              ElementsAre("pools[1] (gpu).mig.layout: \"by_demand\" with gpu_binding vfio: GPUs "
                          "bound to vfio-pci go whole to VMs; MIG slices are for containers only",
                          "pools[1] (gpu).mig.layout: \"by_demand\" needs a node.gpu_model with a "
                          "built-in MIG table (A100-40GB, A100-80GB, H100, H200); \"L40S\" has "
                          "none",
                          "classes[1] (slice): no pool can ever hold this class (cpu: has no "
                          "GPUs; gpu: has gpu_binding vfio: its GPUs are bound to vfio-pci and go "
                          "to vm classes only)"));
}

TEST(PoolMig, AFixedLayoutMustBeGivenKnownAndLegal) {
  Slices catalog;
  catalog.pool = "    mig: {layout: fixed}\n";
  EXPECT_THAT(catalog.Check().errors,
              ElementsAre("pools[1] (gpu).mig.profiles: is required with layout fixed: the "
                          "profiles every GPU is cut into"));

  catalog.pool = "    mig: {layout: fixed, profiles: [3g.71gb, 3g.70gb]}\n";
  EXPECT_THAT(catalog.Check().errors,
              ElementsAre(HasSubstr("pools[1] (gpu).mig.profiles[1]: unknown MIG profile "
                                    "\"3g.70gb\" for H200; did you mean 3g.71gb?")));

  catalog.pool = "    mig: {layout: fixed, profiles: [4g.71gb, 3g.71gb]}\n";
  EXPECT_THAT(catalog.Check().errors,
              ElementsAre("pools[1] (gpu).mig.profiles[1]: does not fit on one GPU: no legal "
                          "start is left for 3g.71gb beside the 1 profile before it, however "
                          "they are arranged (3g.71gb takes 4 slots at starts 0, 4; the ones "
                          "before it take 5 of the 8 memory slots); NVIDIA's valid MIG "
                          "combinations never pair a 4g with a 3g"));

  catalog.pool = "    mig: {layout: by_demand, profiles: [2g.35gb, 2g.35gb, 2g.35gb, 2g.35gb]}\n";
  EXPECT_THAT(catalog.Check().errors,
              ElementsAre("pools[1] (gpu).mig.profiles[3]: does not fit on one GPU: 2g.35gb "
                          "brings the compute slices to 8; a GPU has 7"));
}

TEST(PoolMig, AWholeGpuClassCannotUseASlicedPool) {
  Slices catalog;
  catalog.gpu = "{count: 1, models: [H200]}";
  EXPECT_THAT(catalog.Check().errors,
              ElementsAre("classes[1] (slice): no pool can ever hold this class (cpu: has no "
                          "GPUs; gpu: has mig.layout by_demand: its GPUs are cut into MIG slices "
                          "and go to slice classes only)"));
}

TEST(RenderMig, RoundTripsSlicesAndLayouts) {
  Slices catalog;
  catalog.gpu = "{mig: [2g.35gb, \"null\"], models: [H200]}";
  catalog.pool = "    mig: {layout: fixed, profiles: [3g.71gb, 2g.35gb, 1g.18gb, 1g.18gb]}\n";
  // "null" is not a profile of the H200, but the text survives anyway.
  absl::StatusOr<core::Catalog> parsed = ParseCatalog(catalog.Text());
  ASSERT_FALSE(parsed.ok());
  CatalogCheck check = catalog.Check();
  const std::string text = RenderCatalogYaml(check.catalog);
  EXPECT_THAT(text, HasSubstr("gpu: {mig: [2g.35gb, \"null\"], models: [H200], isolation: "
                              "container}"));
  EXPECT_THAT(text, HasSubstr("mig: {layout: fixed, profiles: [3g.71gb, 2g.35gb, 1g.18gb, "
                              "1g.18gb]}"));
  EXPECT_EQ(CheckCatalogText(text).catalog.classes, check.catalog.classes);
  EXPECT_EQ(CheckCatalogText(text).catalog.pools, check.catalog.pools);

  catalog.gpu = "{mig: {compute: 3}, models: [H200]}";
  check = catalog.Check();
  ASSERT_THAT(check.errors, IsEmpty());
  const std::string sized = RenderCatalogYaml(check.catalog);
  EXPECT_THAT(sized, HasSubstr("gpu: {mig: [3g.71gb, 4g.71gb, 7g.141gb], models: [H200], "
                               "isolation: container}"));
  absl::StatusOr<core::Catalog> back = ParseCatalog(sized);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->classes, check.catalog.classes);
  EXPECT_EQ(back->pools, check.catalog.pools);
  EXPECT_EQ(RenderCatalogYaml(*back), sized);

  catalog.gpu = "{mig: 1g.18gb}";
  const std::string one = RenderCatalogYaml(catalog.Check().catalog);
  EXPECT_THAT(one, HasSubstr("gpu: {mig: 1g.18gb, isolation: container}"));
}

TEST(DiffMig, NamesTheChangedSlicesAndLayouts) {
  Slices catalog;
  const core::Catalog from = catalog.Check().catalog;
  catalog.gpu = "{mig: [1g.18gb, 1g.35gb], models: [H200]}";
  catalog.pool = "    mig: {layout: fixed, profiles: [7g.141gb]}\n";
  const core::Catalog to = catalog.Check().catalog;
  std::vector<std::string> lines;
  for (const CatalogChange& change : DiffCatalogs(from, to)) {
    lines.push_back(DescribeChange(change));
  }
  EXPECT_THAT(lines, ElementsAre("update class slice: gpu.mig [1g.18gb] -> [1g.18gb, 1g.35gb]",
                                 "update pool gpu: mig by_demand -> fixed [7g.141gb]"));

  core::Catalog added = from;
  added.classes.erase(added.classes.begin() + 1);
  added.pools.erase(added.pools.begin() + 1);
  lines.clear();
  for (const CatalogChange& change : DiffCatalogs(added, to)) {
    lines.push_back(DescribeChange(change));
  }
  EXPECT_THAT(lines, ElementsAre("add class slice: cpu 4, memory 32Gi, a MIG slice of [1g.18gb, "
                                 "1g.35gb] [H200], container",
                                 "add pool gpu: node cpu 64, memory 512Gi, 8x H200, MIG fixed "
                                 "[7g.141gb], size 0..2"));
}

}  // namespace
}  // namespace wsched::catalog
