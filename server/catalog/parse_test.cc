// Reading YAML: field mapping, defaults, and errors for shapes and types.
#include "server/catalog/parse.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/catalog/load.h"
#include "server/catalog/render.h"
#include "server/catalog/test_catalogs.h"
#include "server/catalog/validate.h"

namespace wsched::catalog {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

constexpr int64_t kGi = int64_t{1} << 30;

// A catalog at the limits (kMaxClasses classes, kMaxPools pools) is read in
// linear time: each field's value was once merged with the whole document,
// so this took minutes, where it takes a fraction of a second.
TEST(ParseCatalog, ReadsACatalogAtTheLimitsQuickly) {
  std::string yaml = "classes:\n";
  for (int i = 0; i < kMaxClasses; ++i) {
    absl::StrAppend(
        &yaml, "  - id: c", i, "\n    display_name: C", i,
        "\n    resources: {cpu: 4, memory: 16Gi}\n    gpu: {count: 1, models: [H100]}\n",
        "    pool_selector: {pool: p", i, "}\n", i == 0 ? "    default: true\n" : "");
  }
  absl::StrAppend(&yaml, "pools:\n");
  for (int i = 0; i < kMaxPools; ++i) {
    absl::StrAppend(&yaml, "  - id: p", i, "\n    labels: {pool: p", i,
                    "}\n    node: {cpu: 200, memory: 1700Gi, gpus: 8, gpu_model: H100}\n",
                    "    max_size: 3\n");
  }
  const absl::Time start = absl::Now();
  absl::StatusOr<core::Catalog> catalog = ParseCatalog(yaml);
  const absl::Duration took = absl::Now() - start;
  ASSERT_TRUE(catalog.ok()) << catalog.status();
  EXPECT_EQ(catalog->classes.size(), static_cast<size_t>(kMaxClasses));
  EXPECT_EQ(catalog->pools.size(), static_cast<size_t>(kMaxPools));
  EXPECT_LT(took, absl::Seconds(10)) << "reading " << yaml.size() << " bytes";
}

TEST(ParseCatalog, MapsEveryFieldAndAppliesDefaults) {
  absl::StatusOr<core::Catalog> catalog = ParseCatalog(testing::kGpuCatalog);
  ASSERT_TRUE(catalog.ok()) << catalog.status();
  ASSERT_EQ(catalog->classes.size(), 2u);

  const core::WorkspaceClass& standard = catalog->classes[0];
  EXPECT_EQ(standard.id, "standard");
  EXPECT_EQ(standard.resources.cpu_request_millis, 4000);
  EXPECT_EQ(standard.resources.cpu_limit_millis, 4000) << "cpu_limit defaults to cpu";
  EXPECT_EQ(standard.resources.memory_bytes, 16 * kGi);
  EXPECT_TRUE(standard.is_default);
  EXPECT_EQ(standard.gpu.count, 0);
  EXPECT_EQ(standard.credits_per_minute_milli, 0);
  ASSERT_EQ(standard.devices.size(), 1u);
  EXPECT_EQ(standard.devices[0], (core::DeviceNode{"/dev/fuse", 'c', 10, 229, "rwm"}));

  const core::WorkspaceClass& gpu = catalog->classes[1];
  EXPECT_EQ(gpu.gpu.count, 1);
  EXPECT_THAT(gpu.gpu.models, ElementsAre("H100", "A100"));
  EXPECT_EQ(gpu.gpu.isolation, core::Isolation::kContainer);
  EXPECT_EQ(gpu.credits_per_minute_milli, 2500);
  EXPECT_EQ(gpu.pool_selector.at("workload"), "gpu");
  EXPECT_FALSE(gpu.is_default);

  const core::NodePool& pool = catalog->pools[1];
  EXPECT_EQ(pool.shape.gpus_per_node, 8);
  EXPECT_EQ(pool.shape.gpu_model, "A100");
  EXPECT_EQ(pool.min_size, 0);
  EXPECT_EQ(pool.max_size, 8);
  EXPECT_EQ(pool.scale_down.unneeded, absl::Minutes(10));
  EXPECT_EQ(pool.scale_down.delay_after_add, absl::Minutes(10));
  EXPECT_EQ(pool.max_node_provision_time, absl::Minutes(15));
  EXPECT_EQ(pool.warm_buffer, core::WarmBuffer::Constant(0));

  ASSERT_EQ(catalog->driver_policy.size(), 1u);
  EXPECT_EQ(catalog->driver_policy[0].os_version, "22.04");
  EXPECT_EQ(catalog->driver_policy[0].driver_branch, "550");
}

TEST(ParseCatalog, ReadsExplicitDevicesDurationsAndVmIsolation) {
  absl::StatusOr<core::Catalog> catalog = ParseCatalog(R"(
classes:
  - id: vm
    display_name: VM
    resources: {cpu: 1500m, cpu_limit: "2.5", memory: 4Gi, ephemeral_storage: 10Gi, disk: 20G}
    gpu: {count: 0, isolation: vm}
    devices: [kvm, {path: /dev/net/tap0, type: c, major: 10, minor: 201, permissions: rw}]
    credits_per_minute: "0.125"
    default: True
pools:
  - id: cpu
    node: {cpu: 16, memory: 64Gi}
    max_size: 4
    scale_down: {unneeded: 1h30m, delay_after_add: 30s}
    max_node_provision_time: 5m
    warm_buffer: 2
)");
  ASSERT_TRUE(catalog.ok()) << catalog.status();
  const core::WorkspaceClass& vm = catalog->classes[0];
  EXPECT_EQ(vm.resources.cpu_request_millis, 1500);
  EXPECT_EQ(vm.resources.cpu_limit_millis, 2500);
  EXPECT_EQ(vm.resources.disk_bytes, 20'000'000'000);
  EXPECT_EQ(vm.gpu.isolation, core::Isolation::kVm);
  EXPECT_EQ(vm.credits_per_minute_milli, 125);
  ASSERT_EQ(vm.devices.size(), 2u);
  EXPECT_EQ(vm.devices[0].path, "/dev/kvm");
  EXPECT_EQ(vm.devices[1], (core::DeviceNode{"/dev/net/tap0", 'c', 10, 201, "rw"}));
  const core::NodePool& pool = catalog->pools[0];
  EXPECT_EQ(pool.scale_down.unneeded, absl::Minutes(90));
  EXPECT_EQ(pool.scale_down.delay_after_add, absl::Seconds(30));
  EXPECT_EQ(pool.max_node_provision_time, absl::Minutes(5));
  EXPECT_EQ(pool.warm_buffer, core::WarmBuffer::Constant(2));
}

TEST(ParseCatalog, ReturnsInvalidArgumentWithEveryErrorOnItsOwnLine) {
  absl::StatusOr<core::Catalog> catalog = ParseCatalog(R"(
classes:
  - id: small
    display_name: Small
    resources: {cpu: 2, memory: 16GB}
    gpu: {count: -1}
    default: true
pools:
  - id: cpu
    node: {cpu: 16, memory: 64Gi}
    max_size: 4
)");
  ASSERT_EQ(catalog.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(catalog.status().message(),
            "classes[0] (small).resources.memory: \"16GB\" is not a quantity; did you mean 16Gi?\n"
            "classes[0] (small).gpu.count: must be >= 0");
}

TEST(CheckCatalogText, UnknownFieldsAtEveryLevelSuggestTheClosestKey) {
  const CatalogCheck check = CheckCatalogText(R"(
clases: []
classes:
  - id: small
    display_nmae: Small
    is_default: true
    resources: {cpu: 2, memroy: 8Gi}
    gpu: {count: 1, modles: [H100]}
    devices: [fuse, {path: /dev/x, type: c, major: 1, minro: 2}]
    colour: blue
pools:
  - id: gpu
    node: {cpu: 16, memory: 64Gi, gpu: 8, gpu_model: H100}
    max_size: 4
    scale_down: {uneeded: 10m}
driver_policy:
  - kernel: 5.15.0-91-generic
    os: ubuntu
    os_id: ubuntu
    driver_version: 550.54.15
    driver_branch: "550"
    installer_repo: registry.example.com/nvidia/driver
)");
  EXPECT_THAT(
      check.errors,
      ElementsAre("clases: unknown field; did you mean classes?",
                  "classes[0] (small).display_nmae: unknown field; did you mean display_name?",
                  "classes[0] (small).is_default: unknown field; did you mean default?",
                  "classes[0] (small).colour: unknown field",
                  "classes[0] (small).display_name: is required",
                  "classes[0] (small).resources.memroy: unknown field; did you mean memory?",
                  "classes[0] (small).resources.memory: is required",
                  "classes[0] (small).gpu.modles: unknown field; did you mean models?",
                  "classes[0] (small).devices[1].minro: unknown field; did you mean minor?",
                  "classes[0] (small).devices[1].minor: is required",
                  "pools[0] (gpu).node.gpu: unknown field; did you mean gpus?",
                  "pools[0] (gpu).scale_down.uneeded: unknown field; did you mean unneeded?",
                  // Too short to guess between os_id and os_version.
                  "driver_policy[0].os: unknown field",
                  // Validation still runs on what could be read.
                  "pools[0] (gpu).node.gpu_model: set on a pool without GPUs (node.gpus is 0)",
                  "classes: no default class; mark exactly one class with default: true"));
}

TEST(CheckCatalogText, UnknownDeviceNameSuggestsABuiltIn) {
  const CatalogCheck check = CheckCatalogText(R"(
classes:
  - id: small
    display_name: Small
    resources: {cpu: 2, memory: 8Gi}
    devices: [fuze]
    default: true
pools: [{id: cpu, node: {cpu: 16, memory: 64Gi}, max_size: 4}]
)");
  EXPECT_THAT(check.errors,
              ElementsAre("classes[0] (small).devices[0]: unknown device \"fuze\"; did you mean "
                          "fuse? (built in: fuse, tun, kvm; or give {path, type, major, minor})"));
}

TEST(CheckCatalogText, WrongTypesAreErrorsNotCrashes) {
  const CatalogCheck check = CheckCatalogText(R"(
classes:
  - id: a
    display_name: [not, a, string]
    resources: [cpu, memory]
    gpu: 1
    devices: {fuse: true}
    pool_selector: [a]
    credits_per_minute: {amount: 1}
    default: yes
  - just a string
  -
pools: {id: p}
driver_policy: none
)");
  EXPECT_THAT(
      check.errors,
      ElementsAre(
          "classes[0] (a).display_name: must be a string, got a list",
          "classes[0] (a).resources: must be a map, got a list",
          "classes[0] (a).gpu: must be a map, got \"1\"",
          "classes[0] (a).devices: must be a list, got a map",
          "classes[0] (a).pool_selector: must be a map, got a list",
          "classes[0] (a).credits_per_minute: must be a decimal number (\"2.5\"), got a map",
          "classes[0] (a).default: must be true or false, got \"yes\"",
          "classes[1]: must be a map (one class), got \"just a string\"",
          "classes[2]: must be a map (one class), got nothing", "pools: must be a list, got a map",
          "driver_policy: must be a list, got \"none\""));
}

TEST(CheckCatalogText, WrongScalarsAreReportedWithTheirValue) {
  const CatalogCheck check = CheckCatalogText(R"(
classes:
  - id: small
    display_name: Small
    resources: {cpu: 2 cores, memory: "16", disk: 1.5Gi}
    gpu: {count: one, isolation: docker}
    credits_per_minute: 0.1234
    default: true
pools:
  - id: cpu
    node: {cpu: 16, memory: 64Gi}
    min_size: 1.5
    max_size: 99999999999
    scale_down: {unneeded: 600}
    max_node_provision_time: forever
)");
  EXPECT_THAT(
      check.errors,
      ElementsAre("classes[0] (small).resources.cpu: \"2 cores\" is not a CPU quantity; use cores "
                  "(\"4\", \"1.5\") or "
                  "millicores (\"500m\")",
                  "classes[0] (small).resources.memory: \"16\" has no unit; write e.g. \"16Gi\" or "
                  "\"16Mi\"",
                  "classes[0] (small).resources.disk: \"1.5Gi\" is not a quantity; use a whole "
                  "number with an optional "
                  "suffix (\"16Gi\", \"500Mi\")",
                  "classes[0] (small).gpu.count: \"one\" is not a whole number",
                  "classes[0] (small).gpu.isolation: must be container or vm, got \"docker\"",
                  "classes[0] (small).credits_per_minute: \"0.1234\" has more than 3 decimals; "
                  "credits are counted in "
                  "thousandths",
                  "pools[0] (cpu).min_size: \"1.5\" is not a whole number",
                  "pools[0] (cpu).max_size: 99999999999 is out of range",
                  "pools[0] (cpu).scale_down.unneeded: \"600\" is not a duration; use a number "
                  "with a unit, e.g. "
                  "\"10m\", \"30s\", \"1h30m\"",
                  "pools[0] (cpu).max_node_provision_time: \"forever\" is not a duration; use a "
                  "number with a unit, "
                  "e.g. \"10m\", \"30s\", \"1h30m\""));
}

TEST(CheckCatalogText, GpuLinksNeedTwoGpusAndAKnownName) {
  const CatalogCheck check = CheckCatalogText(R"(
classes:
  - {id: cpu, display_name: CPU, resources: {cpu: 1, memory: 1Gi}, default: true}
  - id: pair
    display_name: Linked pair
    resources: {cpu: 8, memory: 64Gi}
    gpu: {count: 2, models: [H100], links: nvlink_required}
  - id: one
    display_name: One
    resources: {cpu: 8, memory: 64Gi}
    gpu: {count: 1, models: [H100], links: nvlink_preferred}
  - id: typo
    display_name: Typo
    resources: {cpu: 8, memory: 64Gi}
    gpu: {count: 2, models: [H100], links: nvswitch}
pools:
  - {id: cpu, node: {cpu: 16, memory: 64Gi}, max_size: 2}
  - {id: h100, node: {cpu: 64, memory: 512Gi, gpus: 8, gpu_model: H100}, max_size: 2}
)");
  EXPECT_THAT(check.errors,
              ElementsAre("classes[3] (typo).gpu.links: must be any, nvlink_preferred or "
                          "nvlink_required, got \"nvswitch\"",
                          "classes[2] (one).gpu.links: nvlink_preferred needs gpu.count >= 2, got 1"));
  absl::StatusOr<core::Catalog> catalog = ParseCatalog(R"(
classes:
  - {id: cpu, display_name: CPU, resources: {cpu: 1, memory: 1Gi}, default: true}
  - {id: pair, display_name: Pair, resources: {cpu: 8, memory: 64Gi},
     gpu: {count: 2, models: [H100], links: nvlink_required}}
pools:
  - {id: cpu, node: {cpu: 16, memory: 64Gi}, max_size: 2}
  - {id: h100, node: {cpu: 64, memory: 512Gi, gpus: 8, gpu_model: H100}, max_size: 2}
)");
  ASSERT_TRUE(catalog.ok()) << catalog.status();
  EXPECT_EQ(catalog->classes[1].gpu.links, core::GpuLinks::kNvlinkRequired);
}

TEST(CheckCatalogText, GpuBindingIsHostOrVfio) {
  const CatalogCheck check = CheckCatalogText(R"(
classes:
  - {id: cpu, display_name: CPU, resources: {cpu: 1, memory: 1Gi}, default: true}
  - id: vm
    display_name: VM
    resources: {cpu: 1, memory: 1Gi}
    gpu: {count: 1, models: [H100], isolation: vm}
pools:
  - {id: cpu, node: {cpu: 16, memory: 64Gi}, max_size: 4}
  - {id: gpu-vm, node: {cpu: 16, memory: 64Gi, gpus: 8, gpu_model: H100}, max_size: 4,
     gpu_binding: vfio}
  - {id: gpu-bad, node: {cpu: 16, memory: 64Gi, gpus: 8, gpu_model: H100}, max_size: 4,
     gpu_binding: VFIO}
)");
  EXPECT_THAT(check.errors,
              ElementsAre("pools[2] (gpu-bad).gpu_binding: must be host or vfio, got \"VFIO\""));
}

TEST(ParseCatalog, GpuBindingDefaultsToHostAndRoundTrips) {
  absl::StatusOr<core::Catalog> catalog = ParseCatalog(R"(
classes:
  - {id: cpu, display_name: CPU, resources: {cpu: 1, memory: 1Gi}, default: true}
  - id: vm
    display_name: VM
    resources: {cpu: 1, memory: 1Gi}
    gpu: {count: 1, models: [H100], isolation: vm}
pools:
  - {id: cpu, node: {cpu: 16, memory: 64Gi}, max_size: 4}
  - {id: a, node: {cpu: 16, memory: 64Gi, gpus: 8, gpu_model: H100}, max_size: 4}
  - {id: b, node: {cpu: 16, memory: 64Gi, gpus: 8, gpu_model: H100}, max_size: 4,
     gpu_binding: vfio}
)");
  ASSERT_TRUE(catalog.ok()) << catalog.status();
  EXPECT_EQ(catalog->pools[1].gpu_binding, core::GpuBinding::kHost);
  EXPECT_EQ(catalog->pools[2].gpu_binding, core::GpuBinding::kVfio);
  absl::StatusOr<core::Catalog> again = ParseCatalog(RenderCatalogYaml(*catalog));
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->pools, catalog->pools);
}

TEST(CheckCatalogText, DriverInstallIsManualNodeOrCluster) {
  const CatalogCheck check = CheckCatalogText(R"(
classes:
  - {id: cpu, display_name: CPU, resources: {cpu: 1, memory: 1Gi}, default: true}
pools:
  - {id: cpu, node: {cpu: 16, memory: 64Gi}, max_size: 4}
  - {id: gpu-node, node: {cpu: 16, memory: 64Gi, gpus: 8, gpu_model: H100}, max_size: 4,
     driver_install: node}
  - {id: gpu-bad, node: {cpu: 16, memory: 64Gi, gpus: 8, gpu_model: H100}, max_size: 4,
     driver_install: agent}
)");
  EXPECT_THAT(check.errors,
              ElementsAre("pools[2] (gpu-bad).driver_install: must be manual, node or cluster, "
                          "got \"agent\""));
}

TEST(CheckCatalogText, DriverRolloutNamesEachBadField) {
  const CatalogCheck check = CheckCatalogText(R"(
classes:
  - {id: cpu, display_name: CPU, resources: {cpu: 1, memory: 1Gi}, default: true}
pools:
  - {id: cpu, node: {cpu: 16, memory: 64Gi}, max_size: 4}
  - {id: gpu-a, node: {cpu: 16, memory: 64Gi, gpus: 8, gpu_model: H100}, max_size: 4,
     driver_rollout: {max_unavailable: 0, drain_deadline: -5m}}
  - {id: gpu-b, node: {cpu: 16, memory: 64Gi, gpus: 8, gpu_model: H100}, max_size: 4,
     driver_rollout: {max_unavailable: 9, canary: true}}
)");
  EXPECT_THAT(check.errors,
              ::testing::IsSupersetOf(
                  {"pools[1] (gpu-a).driver_rollout.max_unavailable: must be >= 1",
                   "pools[2] (gpu-b).driver_rollout.max_unavailable: must be <= max_size (4)"}));
  EXPECT_THAT(::testing::PrintToString(check.errors), ::testing::HasSubstr("drain_deadline"));
  EXPECT_THAT(::testing::PrintToString(check.errors), ::testing::HasSubstr("canary"));
}

TEST(ParseCatalog, DriverRolloutDefaultsAndRoundTrips) {
  absl::StatusOr<core::Catalog> catalog = ParseCatalog(R"(
classes:
  - {id: cpu, display_name: CPU, resources: {cpu: 1, memory: 1Gi}, default: true}
pools:
  - {id: cpu, node: {cpu: 16, memory: 64Gi}, max_size: 4}
  - {id: a, node: {cpu: 16, memory: 64Gi, gpus: 8, gpu_model: H100}, max_size: 4,
     driver_rollout: {max_unavailable: 2, drain_deadline: 2h}}
)");
  ASSERT_TRUE(catalog.ok()) << catalog.status();
  EXPECT_EQ(catalog->pools[0].driver_rollout, core::DriverRollout{});
  EXPECT_EQ(catalog->pools[1].driver_rollout.max_unavailable, 2);
  EXPECT_EQ(catalog->pools[1].driver_rollout.drain_deadline, absl::Hours(2));
  absl::StatusOr<core::Catalog> again = ParseCatalog(RenderCatalogYaml(*catalog));
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->pools, catalog->pools);
}

TEST(CheckCatalogText, DriverInstallWithoutAHostDriverIsAWarning) {
  const CatalogCheck check = CheckCatalogText(R"(
classes:
  - {id: cpu, display_name: CPU, resources: {cpu: 1, memory: 1Gi}, default: true}
pools:
  - {id: cpu, node: {cpu: 16, memory: 64Gi}, max_size: 4, driver_install: node}
  - {id: gpu-vm, node: {cpu: 16, memory: 64Gi, gpus: 8, gpu_model: H100}, max_size: 4,
     gpu_binding: vfio, driver_install: node}
)");
  EXPECT_THAT(check.errors, ElementsAre());
  EXPECT_THAT(check.warnings,
              ::testing::IsSupersetOf(
                  {"pools[0] (cpu).driver_install: has no effect on a pool without GPUs",
                   "pools[1] (gpu-vm).driver_install: has no effect with gpu_binding vfio: the "
                   "host needs no NVIDIA driver"}));
}

TEST(ParseCatalog, DriverInstallDefaultsToManualAndRoundTrips) {
  absl::StatusOr<core::Catalog> catalog = ParseCatalog(R"(
classes:
  - {id: cpu, display_name: CPU, resources: {cpu: 1, memory: 1Gi}, default: true}
pools:
  - {id: cpu, node: {cpu: 16, memory: 64Gi}, max_size: 4}
  - {id: a, node: {cpu: 16, memory: 64Gi, gpus: 8, gpu_model: H100}, max_size: 4}
  - {id: b, node: {cpu: 16, memory: 64Gi, gpus: 8, gpu_model: H100}, max_size: 4,
     driver_install: node}
  - {id: c, node: {cpu: 16, memory: 64Gi, gpus: 8, gpu_model: H100}, max_size: 4,
     driver_install: cluster}
)");
  ASSERT_TRUE(catalog.ok()) << catalog.status();
  EXPECT_EQ(catalog->pools[1].driver_install, core::DriverInstall::kManual);
  EXPECT_EQ(catalog->pools[2].driver_install, core::DriverInstall::kNode);
  EXPECT_EQ(catalog->pools[3].driver_install, core::DriverInstall::kCluster);
  absl::StatusOr<core::Catalog> again = ParseCatalog(RenderCatalogYaml(*catalog));
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->pools, catalog->pools);
}

TEST(CheckCatalogText, DuplicateKeysAreErrors) {
  const CatalogCheck check = CheckCatalogText(R"(
classes:
  - id: small
    display_name: Small
    resources: {cpu: 2, memory: 8Gi}
    resources: {cpu: 4, memory: 16Gi}
    default: true
pools:
  - id: cpu
    labels: {a: x, a: y}
    node: {cpu: 16, memory: 64Gi}
    max_size: 4
)");
  EXPECT_THAT(check.errors, ElementsAre("classes[0] (small).resources: appears more than once",
                                        "pools[0] (cpu).labels.a: appears more than once"));
}

TEST(CheckCatalogText, BrokenYamlReportsLineAndColumn) {
  const CatalogCheck check =
      CheckCatalogText("classes:\n  - id: small\n    display_name: [Small\npools: []\n");
  ASSERT_EQ(check.errors.size(), 1u);
  EXPECT_THAT(check.errors[0], ::testing::StartsWith("line 4, column 6: "));
  // Nothing else: a catalog that could not be read is not judged further.
  EXPECT_THAT(check.warnings, IsEmpty());
}

TEST(CheckCatalogText, BadIndentationReportsLineAndColumn) {
  const CatalogCheck check = CheckCatalogText("classes:\n  - id: small\n   display_name: Small\n");
  ASSERT_EQ(check.errors.size(), 1u);
  EXPECT_THAT(check.errors[0], ::testing::StartsWith("line 3, column "));
}

TEST(CheckCatalogText, RefusesSeveralDocumentsAndNonMapTopLevel) {
  EXPECT_THAT(CheckCatalogText("classes: []\n---\npools: []\n").errors,
              ElementsAre("catalog: holds 2 YAML documents; put one catalog in each file"));
  EXPECT_THAT(
      CheckCatalogText("- a\n- b\n").errors,
      ElementsAre("catalog: must be a map with classes, pools and driver_policy, got a list"));
}

TEST(CheckCatalogText, EmptyTextHasNoClasses) {
  EXPECT_THAT(CheckCatalogText("").errors,
              ElementsAre("classes: no default class; mark exactly one class with default: true"));
}

TEST(CheckCatalogText, OddYamlNeverThrows) {
  const char* inputs[] = {
      "classes: &a [*a]",
      "classes: [*undefined]",
      "? [complex, key]\n: value\n",
      "classes:\n  - ? {a: b}\n    : c\n",
      "classes: !!binary aGVsbG8=",
      "classes:\n  - id: !custom x\n    display_name: !!int 3\n",
      "classes: [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]",
      "\t- tab",
      "classes: [{id: a, resources: {cpu: [1], memory: {x: 1}}, gpu: {count: [2], models: "
      "[[H100]]}}]",
      "pools: [{id: p, node: [], scale_down: [1], labels: {[a]: b}}]",
      "driver_policy: [{kernel: {}, os_id: [], driver_version: null}]",
      "\xff\xfe garbage",
      "classes: 'unterminated",
  };
  for (const char* input : inputs) {
    SCOPED_TRACE(input);
    CatalogCheck check;
    EXPECT_NO_THROW(check = CheckCatalogText(input));
    EXPECT_FALSE(check.ok());
  }
  std::string deep;
  for (int i = 0; i < 100000; ++i) deep += "[";
  EXPECT_FALSE(CheckCatalogText(deep).ok());
}

TEST(CheckCatalogText, RefusesHugeTexts) {
  const std::string huge(kMaxCatalogTextBytes + 1, '#');
  EXPECT_THAT(CheckCatalogText(huge).errors,
              ElementsAre(HasSubstr("catalog: is 4194305 bytes; the limit is")));
}

}  // namespace
}  // namespace wsched::catalog
