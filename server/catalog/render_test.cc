// The canonical YAML reads back as the same catalog.
#include "server/catalog/render.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/catalog/diff.h"
#include "server/catalog/load.h"
#include "server/catalog/test_catalogs.h"

namespace wsched::catalog {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;

void ExpectRoundTrip(const core::Catalog& catalog) {
  const std::string text = RenderCatalogYaml(catalog);
  absl::StatusOr<core::Catalog> back = ParseCatalog(text);
  ASSERT_TRUE(back.ok()) << back.status() << "\n" << text;
  EXPECT_THAT(DiffCatalogs(catalog, *back), IsEmpty()) << text;
  EXPECT_EQ(back->classes, catalog.classes) << text;
  EXPECT_EQ(back->pools, catalog.pools) << text;
  EXPECT_EQ(back->driver_policy, catalog.driver_policy) << text;
  // Canonical means stable: rendering again gives the same text.
  EXPECT_EQ(RenderCatalogYaml(*back), text);
}

TEST(RenderCatalogYaml, RoundTripsTheSamples) {
  for (const char* name : {"saas.yaml", "self-hosted.yaml"}) {
    SCOPED_TRACE(name);
    absl::StatusOr<core::Catalog> catalog =
        LoadCatalog(std::string(WSCHED_SOURCE_DIR "/classes/") + name);
    ASSERT_TRUE(catalog.ok()) << catalog.status();
    ExpectRoundTrip(*catalog);
  }
}

TEST(RenderCatalogYaml, RoundTripsUnusualValues) {
  absl::StatusOr<core::Catalog> catalog = ParseCatalog(R"(
classes:
  - id: odd
    display_name: "null"
    description: "two\nlines: with # and 'quotes' and \"more\""
    category: "true"
    resources: {cpu: 1500m, cpu_limit: 2, memory: 1000M, ephemeral_storage: 1536Mi, disk: 3Ti}
    gpu: {count: 0, isolation: vm}
    devices: [kvm, {path: "/dev/net/tap 0x", type: b, major: 7, minor: 0, permissions: r}]
    pool_selector: {"example.com/tier": "", zone: "1"}
    credits_per_minute: 0.005
    default: true
pools:
  - id: cpu
    labels: {"example.com/tier": "", zone: "1"}
    node: {cpu: 64, memory: 256Gi, ephemeral_storage: 1Ti}
    min_size: 1
    max_size: 9
    scale_down: {unneeded: 1h30m, delay_after_add: 0s}
    max_node_provision_time: 90s
    warm_buffer: 3
driver_policy:
  - {kernel: "6.1.0-*-amd64", os_id: debian, driver_version: 550.54.15, driver_branch: "550",
     installer_repo: "localhost:5000/driver"}
)");
  // The device path with a space is invalid; render what parses instead.
  ASSERT_FALSE(catalog.ok());
  catalog = ParseCatalog(R"(
classes:
  - id: odd
    display_name: "null"
    description: "two\nlines: with # and 'quotes' and \"more\""
    category: "true"
    resources: {cpu: 1500m, cpu_limit: 2, memory: 1000M, ephemeral_storage: 1536Mi, disk: 3Ti}
    gpu: {count: 0, isolation: vm}
    devices: [kvm, {path: /dev/net/tap0, type: b, major: 7, minor: 0, permissions: r}]
    pool_selector: {"example.com/tier": "", zone: "1"}
    credits_per_minute: 0.005
    default: true
  - id: pair
    display_name: Linked pair
    resources: {cpu: 8, memory: 64Gi}
    gpu: {count: 2, isolation: container, links: nvlink_preferred}
pools:
  - id: cpu
    labels: {"example.com/tier": "", zone: "1"}
    node: {cpu: 64, memory: 256Gi, ephemeral_storage: 1Ti}
    min_size: 1
    max_size: 9
    scale_down: {unneeded: 1h30m, delay_after_add: 0s}
    max_node_provision_time: 90s
    warm_buffer: 3
  - {id: h100, node: {cpu: 64, memory: 512Gi, gpus: 8, gpu_model: H100}, max_size: 2}
driver_policy:
  - {kernel: "6.1.0-*-amd64", os_id: debian, driver_version: 550.54.15, driver_branch: "550",
     installer_repo: "localhost:5000/driver"}
)");
  ASSERT_TRUE(catalog.ok()) << catalog.status();
  ExpectRoundTrip(*catalog);
}

TEST(RenderCatalogYaml, UsesCanonicalUnitsAndBuiltinDeviceNames) {
  absl::StatusOr<core::Catalog> catalog = ParseCatalog(R"(
classes:
  - id: small
    display_name: Small
    resources: {cpu: "2.0", memory: 8192Mi}
    devices: [{path: /dev/fuse, major: 10, minor: 229}]
    default: true
pools: [{id: cpu, node: {cpu: 16000m, memory: 65536Mi}, max_size: 4}]
)");
  ASSERT_TRUE(catalog.ok()) << catalog.status();
  EXPECT_EQ(RenderCatalogYaml(*catalog), R"(classes:
  - id: small
    display_name: Small
    resources:
      cpu: 2
      memory: 8Gi
    devices: [fuse]
    credits_per_minute: 0
    default: true
pools:
  - id: cpu
    node:
      cpu: 16
      memory: 64Gi
    min_size: 0
    max_size: 4
    scale_down:
      unneeded: 10m
      delay_after_add: 10m
    max_node_provision_time: 15m
driver_policy: []
)");
}

}  // namespace
}  // namespace wsched::catalog
