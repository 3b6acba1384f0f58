// Catalog texts shared by the catalog tests.
#ifndef WSCHED_SERVER_CATALOG_TEST_CATALOGS_H_
#define WSCHED_SERVER_CATALOG_TEST_CATALOGS_H_

namespace wsched::catalog::testing {

// The smallest valid catalog: one CPU class, one CPU pool.
inline constexpr const char* kMinimalCatalog = R"(
classes:
  - id: small
    display_name: Small
    resources: {cpu: 2, memory: 8Gi}
    default: true
pools:
  - id: cpu
    node: {cpu: 16, memory: 64Gi}
    max_size: 4
)";

// A CPU and a GPU class, a CPU and a GPU pool, one driver policy entry.
inline constexpr const char* kGpuCatalog = R"(
classes:
  - id: standard
    display_name: Standard
    resources: {cpu: 4, memory: 16Gi}
    devices: [fuse]
    default: true
  - id: gpu-1x
    display_name: One GPU
    resources: {cpu: 8, memory: 64Gi}
    gpu: {count: 1, models: [H100, A100]}
    pool_selector: {workload: gpu}
    credits_per_minute: 2.5
pools:
  - id: cpu
    node: {cpu: 16, memory: 64Gi}
    max_size: 4
  - id: gpu-a100
    labels: {workload: gpu}
    node: {cpu: 94, memory: 650Gi, gpus: 8, gpu_model: A100}
    max_size: 8
driver_policy:
  - kernel: "5.15.0-*-generic"
    os_id: ubuntu
    os_version: "22.04"
    driver_version: 550.54.15
    driver_branch: "550"
    installer_repo: registry.example.com/nvidia/driver
)";

}  // namespace wsched::catalog::testing

#endif  // WSCHED_SERVER_CATALOG_TEST_CATALOGS_H_
