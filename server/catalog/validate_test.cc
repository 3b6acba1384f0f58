// The value rules: every broken rule is reported, each at its exact path.
#include "server/catalog/validate.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/catalog/load.h"
#include "server/catalog/test_catalogs.h"

namespace wsched::catalog {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

TEST(ValidateCatalog, ReportsEveryMistakeWithItsPath) {
  const CatalogCheck check = CheckCatalogText(R"(
classes:
  - id: small
    display_name: Small
    resources: {cpu: 2, memory: 8Gi}
    default: true
  - id: Big_One
    display_name: Big
    resources: {cpu: 4, cpu_limit: 2, memory: 16GB}
  - id: gpu-1x
    display_name: One GPU
    resources: {cpu: 8, memory: 32Gi}
    gpu: {count: -1, models: [H100]}
  - id: gpu-4x
    display_name: Four GPUs
    resources: {cpu: 8, memory: 32Gi}
    gpu: {count: 4, modles: [H100]}
    default: true
  - id: gpu-8x
    display_name: Eight GPUs
    resources: {cpu: 8, memory: 32Gi}
    gpu: {count: 8, models: [H100]}
  - id: small
    display_name: Small again
    resources: {cpu: 1, memory: 1Gi}
pools:
  - id: cpu
    node: {cpu: 16, memory: 64Gi}
    max_size: 4
  - id: gpu-h100
    node: {cpu: 64, memory: 512Gi, gpus: 4, gpu_model: H100}
    min_size: 2
    max_size: 1
  - id: gpu-a10
    node: {cpu: 32, memory: 128Gi, gpus: 1}
    max_size: 2
)");
  EXPECT_THAT(check.errors,
              ElementsAre(
                  // Structure, in document order.
                  "classes[1].resources.memory: \"16GB\" is not a quantity; did you mean 16Gi?",
                  "classes[3] (gpu-4x).gpu.modles: unknown field; did you mean models?",
                  // Values, element by element.
                  "classes[1].id: \"Big_One\" is not a DNS label (1-63 lower-case letters, digits "
                  "and '-', starting "
                  "and ending with a letter or digit)",
                  "classes[1].resources.cpu_limit: must be >= cpu (4)",
                  "classes[2] (gpu-1x).gpu.count: must be >= 0",
                  "pools[1] (gpu-h100).max_size: must be >= min_size (2)",
                  "pools[2] (gpu-a10).node.gpu_model: is required for a GPU pool (node.gpus is 1)",
                  "classes[5] (small).id: \"small\" is already used by classes[0]",
                  "classes: 2 default classes (small, gpu-4x); mark exactly one",
                  "classes[4] (gpu-8x): no pool can ever hold this class (cpu: has no GPUs; "
                  "gpu-h100: node has 4 "
                  "GPUs, class needs 8; gpu-a10: gpu_model \"\" is not in models [H100])"));
}

TEST(ValidateCatalog, RequiresExactlyOneDefaultClass) {
  const CatalogCheck none = CheckCatalogText(R"(
classes:
  - {id: a, display_name: A, resources: {cpu: 1, memory: 1Gi}}
pools: [{id: cpu, node: {cpu: 16, memory: 64Gi}, max_size: 4}]
)");
  EXPECT_THAT(none.errors,
              ElementsAre("classes: no default class; mark exactly one class with default: true"));

  const CatalogCheck several = CheckCatalogText(R"(
classes:
  - {id: a, display_name: A, resources: {cpu: 1, memory: 1Gi}, default: true}
  - {id: b, display_name: B, resources: {cpu: 1, memory: 1Gi}, default: true}
  - {id: c, display_name: C, resources: {cpu: 1, memory: 1Gi}, default: true}
pools: [{id: cpu, node: {cpu: 16, memory: 64Gi}, max_size: 4}]
)");
  EXPECT_THAT(several.errors,
              ElementsAre("classes: 3 default classes (a, b, c); mark exactly one"));
}

TEST(ValidateCatalog, DefaultClassCannotBeDeprecated) {
  const CatalogCheck check = CheckCatalogText(R"(
classes:
  - {id: a, display_name: A, resources: {cpu: 1, memory: 1Gi}, default: true, deprecated: true}
pools: [{id: cpu, node: {cpu: 16, memory: 64Gi}, max_size: 4}]
)");
  EXPECT_THAT(check.errors,
              ElementsAre("classes[0] (a).deprecated: the default class cannot be deprecated; new "
                          "workspaces fall back to it"));
}

TEST(ValidateCatalog, GpuClassNeedsAPoolWithItsModelAndEnoughGpus) {
  const CatalogCheck check = CheckCatalogText(R"(
classes:
  - {id: cpu, display_name: CPU, resources: {cpu: 1, memory: 1Gi}, default: true}
  - id: gpu-l4
    display_name: L4
    resources: {cpu: 4, memory: 16Gi}
    gpu: {count: 1, models: [L4]}
  - id: gpu-2x
    display_name: Two
    resources: {cpu: 4, memory: 16Gi}
    gpu: {count: 2}
  - id: gpu-big
    display_name: Big
    resources: {cpu: 100, memory: 16Gi}
    gpu: {count: 1}
  - id: gpu-tier
    display_name: Tier
    resources: {cpu: 4, memory: 16Gi}
    gpu: {count: 1}
    pool_selector: {tier: premium}
pools:
  - {id: cpu, node: {cpu: 16, memory: 64Gi}, max_size: 4}
  - {id: gpu-a100, labels: {tier: basic}, node: {cpu: 94, memory: 650Gi, gpus: 1, gpu_model: A100},
     max_size: 4}
driver_policy:
  - {kernel: "5.15.0-*-generic", os_id: ubuntu, driver_version: 550.54.15, driver_branch: "550",
     installer_repo: registry.example.com/nvidia/driver}
)");
  EXPECT_THAT(
      check.errors,
      ElementsAre(
          "classes[1] (gpu-l4): no pool can ever hold this class (cpu: has no GPUs; gpu-a100: "
          "gpu_model \"A100\" is not in models [L4])",
          "classes[2] (gpu-2x): no pool can ever hold this class (cpu: has no GPUs; gpu-a100: node "
          "has "
          "1 GPUs, class needs 2)",
          "classes[3] (gpu-big): no pool can ever hold this class (cpu: has no GPUs; gpu-a100: "
          "node cpu "
          "94 < class cpu 100)",
          "classes[4] (gpu-tier): no pool can ever hold this class (cpu: has no label tier "
          "(pool_selector wants premium); gpu-a100: label tier is basic, pool_selector wants "
          "premium)"));
}

TEST(ValidateCatalog, CpuClassStaysOffGpuPoolsUnlessItsSelectorAsks) {
  const char* kOnlyGpuPool = R"(
classes:
  - {id: cpu, display_name: CPU, resources: {cpu: 1, memory: 1Gi}, default: true %s}
pools:
  - {id: gpu, labels: {kind: gpu}, node: {cpu: 94, memory: 650Gi, gpus: 8, gpu_model: A100}, max_size: 4}
driver_policy:
  - {kernel: "5.15.0-*-generic", os_id: ubuntu, driver_version: 550.54.15, driver_branch: "550",
     installer_repo: registry.example.com/nvidia/driver}
)";
  char text[1024];
  snprintf(text, sizeof text, kOnlyGpuPool, "");
  EXPECT_THAT(
      CheckCatalogText(text).errors,
      ElementsAre("classes[0] (cpu): no pool can ever hold this class (gpu: is a GPU pool and the "
                  "class has no pool_selector asking for it)"));
  snprintf(text, sizeof text, kOnlyGpuPool, ", pool_selector: {kind: gpu}");
  EXPECT_THAT(CheckCatalogText(text).errors, IsEmpty());
}

TEST(ValidateCatalog, NoPoolsAtAll) {
  EXPECT_THAT(
      CheckCatalogText(R"(
classes:
  - {id: a, display_name: A, resources: {cpu: 1, memory: 1Gi}, default: true}
)")
          .errors,
      ElementsAre("classes[0] (a): no pool can ever hold this class (the catalog has no pools)"));
}

TEST(ValidateCatalog, ClassFieldRules) {
  const CatalogCheck check = CheckCatalogText(R"(
classes:
  - id: a
    display_name: "bell\x07"
    description: "line one\nline two"
    category: "bad\ttab"
    resources: {cpu: 1, memory: 1Gi}
    gpu: {count: 17, models: [H100, H100, ""]}
    devices:
      - fuse
      - fuse
      - {path: /dev/nvidia0, major: 195, minor: 0}
      - {path: /tmp/x, type: b, major: 5000, minor: 1, permissions: rx}
    pool_selector: {"bad key!": "ok", good: "bad value!"}
    default: true
pools: [{id: cpu, node: {cpu: 16, memory: 64Gi}, max_size: 4}]
)");
  EXPECT_THAT(
      check.errors,
      ElementsAre(
          "classes[0] (a).display_name: must not contain control characters",
          "classes[0] (a).category: must not contain control characters",
          "classes[0] (a).gpu.count: must be <= 16",
          "classes[0] (a).gpu.models[1]: \"H100\" is listed twice",
          "classes[0] (a).gpu.models[2]: must not be empty",
          "classes[0] (a).devices[1]: \"/dev/fuse\" is listed twice",
          "classes[0] (a).devices[2].path: \"/dev/nvidia0\" is a GPU device; placement adds those "
          "for the GPUs "
          "it assigns",
          "classes[0] (a).devices[3].path: \"/tmp/x\" must be a plain path under /dev/",
          "classes[0] (a).devices[3].major: must be between 0 and 4095",
          "classes[0] (a).devices[3].permissions: must combine r, w and m (each once), got \"rx\"",
          "classes[0] (a).pool_selector.bad key!: \"bad key!\" is not a label key ([prefix/]name; "
          "name: 1-63 "
          "letters, digits, '-', '_' or '.', starting and ending alphanumeric)",
          "classes[0] (a).pool_selector.good: \"bad value!\" is not a label value (at most 63 "
          "letters, digits, "
          "'-', '_' or '.', starting and ending alphanumeric)",
          "classes[0] (a): no pool can ever hold this class (cpu: has no label bad key! "
          "(pool_selector wants "
          "ok))"));
}

TEST(ValidateCatalog, BoundsStrings) {
  const std::string long_name(129, 'x');
  const std::string text = std::string(R"(
classes:
  - {id: a, display_name: )") +
                           long_name + R"(, resources: {cpu: 1, memory: 1Gi}, default: true}
pools: [{id: cpu, node: {cpu: 16, memory: 64Gi}, max_size: 4}]
)";
  EXPECT_THAT(CheckCatalogText(text).errors,
              ElementsAre("classes[0] (a).display_name: is 129 bytes; at most 128"));
}

TEST(ValidateCatalog, PoolRules) {
  const CatalogCheck check = CheckCatalogText(R"(
classes:
  - {id: a, display_name: A, resources: {cpu: 1, memory: 1Gi}, default: true}
pools:
  - {id: cpu, node: {cpu: 16, memory: 64Gi}, min_size: -1, max_size: 4, warm_buffer: 5}
  - {id: cpu, node: {cpu: 16, memory: 64Gi, gpu_model: A100}, max_size: 200000,
     max_node_provision_time: 0s}
  - {id: gpu, node: {cpu: 16, memory: 64Gi, gpus: 17, gpu_model: A100}, max_size: 1, warm_buffer: -1}
driver_policy:
  - {kernel: "5.15.0-*-generic", os_id: ubuntu, driver_version: 550.54.15, driver_branch: "550",
     installer_repo: registry.example.com/nvidia/driver}
)");
  EXPECT_THAT(
      check.errors,
      ElementsAre("pools[0] (cpu).min_size: must be >= 0",
                  "pools[0] (cpu).warm_buffer: must be <= max_size (4)",
                  "pools[1] (cpu).node.gpu_model: set on a pool without GPUs (node.gpus is 0)",
                  "pools[1] (cpu).max_size: must be <= 100000",
                  "pools[1] (cpu).max_node_provision_time: must be > 0",
                  "pools[2] (gpu).node.gpus: must be <= 16",
                  "pools[2] (gpu).warm_buffer: must be >= 0",
                  "pools[1] (cpu).id: \"cpu\" is already used by pools[0]"));
}

TEST(ValidateCatalog, DriverPolicyRules) {
  const CatalogCheck check = CheckCatalogText(R"(
classes:
  - {id: a, display_name: A, resources: {cpu: 1, memory: 1Gi}, default: true}
pools: [{id: cpu, node: {cpu: 16, memory: 64Gi}, max_size: 4}]
driver_policy:
  - {kernel: "5.15.0-91-generic", os_id: ubuntu, os_version: "22.04", driver_version: 535.104.05,
     driver_branch: "550", installer_repo: registry.example.com/nvidia/driver:550}
  - {kernel: "5.15.0 91", os_id: Ubuntu, driver_version: v550, driver_branch: "550",
     installer_repo: "Registry/Driver"}
  - {kernel: "5.15.0-91-generic", os_id: ubuntu, os_version: "22.04", driver_version: 550.54.15,
     driver_branch: "550", installer_repo: "registry.example.com:5000/nvidia/driver"}
)");
  EXPECT_THAT(
      check.errors,
      ElementsAre(
          "driver_policy[0].driver_version: 535.104.05 is not on driver_branch 550",
          "driver_policy[0].installer_repo: \"registry.example.com/nvidia/driver:550\" has a tag; "
          "give the "
          "repository only, the tag is built as <driver_branch>-<kernel>-<os_id><os_version>",
          "driver_policy[1].kernel: \"5.15.0 91\" is not a kernel release or pattern (letters, "
          "digits, '.', "
          "'-', '_', '+', '~'; '*' and '?' as wildcards)",
          "driver_policy[1].os_id: \"Ubuntu\" is not an os-release ID (lower-case letters, digits, "
          "'.', '_', "
          "'-')",
          "driver_policy[1].driver_version: \"v550\" is not a driver version (like 550.54.15)",
          "driver_policy[1].installer_repo: \"Registry/Driver\" is not an image repository "
          "(lower-case "
          "letters, digits, '.', '_', '-', '/' and a registry port)",
          "driver_policy[2]: same kernel, os_id and os_version as driver_policy[0]"));
}

TEST(ValidateCatalog, WarnsAboutLikelyMistakesWithoutFailing) {
  const CatalogCheck check = CheckCatalogText(R"(
classes:
  - {id: a, display_name: A, resources: {cpu: 1, memory: 1Gi}, default: true}
  - {id: g, display_name: G, resources: {cpu: 1, memory: 1Gi}, gpu: {count: 1, models: [A100, A10O]}}
pools:
  - {id: cpu, node: {cpu: 16, memory: 64Gi}, max_size: 4, allow_unsafe_iommu: true}
  - {id: big, labels: {size: big}, node: {cpu: 1, memory: 1Gi}, max_size: 4}
  - {id: gpu, node: {cpu: 16, memory: 64Gi, gpus: 1, gpu_model: A100}, max_size: 4}
)");
  EXPECT_THAT(check.errors, IsEmpty());
  EXPECT_THAT(
      check.warnings,
      ElementsAre(
          "pools[0] (cpu).allow_unsafe_iommu: has no effect on a pool without GPUs",
          "classes[1] (g).gpu.models[1]: no pool matching the class offers \"A10O\"; this model "
          "is never used",
          "driver_policy: is empty but the catalog has GPU pools; their nodes never become "
          "ready for GPU workspaces"));
}

TEST(CheckCatalog, ValidatesCatalogsBuiltWithoutYaml) {
  core::Catalog catalog;
  core::WorkspaceClass cls;
  cls.id = "a";
  cls.display_name = "A";
  cls.resources.cpu_request_millis = 1000;
  cls.resources.cpu_limit_millis = 1000;
  cls.is_default = true;  // memory missing
  catalog.classes.push_back(cls);
  core::NodePool pool;
  pool.id = "cpu";
  pool.shape.cpu_millis = 1000;
  pool.shape.memory_bytes = 1 << 30;
  pool.min_size = 3;
  pool.max_size = 2;
  catalog.pools.push_back(pool);
  EXPECT_THAT(CheckCatalog(catalog).errors,
              ElementsAre("classes[0] (a).resources.memory: is required",
                          "pools[0] (cpu).max_size: must be >= min_size (3)"));
}

}  // namespace
}  // namespace wsched::catalog
