// Pools and classes shared by the scaling tests.
#ifndef WSCHED_SERVER_SCALING_TEST_POOLS_H_
#define WSCHED_SERVER_SCALING_TEST_POOLS_H_

#include <string>

#include "server/core/pool.h"
#include "server/core/workspace_class.h"

namespace wsched::scaling::testing {

inline constexpr int64_t kGiB = int64_t{1} << 30;

// An 8-GPU pool that scales to zero, with the GPU defaults for scale-down.
inline core::NodePool GpuPool(int gpus_per_node = 8) {
  core::NodePool pool;
  pool.id = "gpu-a100";
  pool.shape = {.cpu_millis = 96'000,
                .memory_bytes = 1024 * kGiB,
                .gpus_per_node = gpus_per_node,
                .gpu_model = "A100"};
  pool.min_size = 0;
  pool.max_size = 10;
  pool.scale_down = {.unneeded = absl::Minutes(10), .delay_after_add = absl::Minutes(10)};
  pool.max_node_provision_time = absl::Minutes(15);
  return pool;
}

inline core::WorkspaceClass GpuClass(int gpus, int64_t cpu_millis = 8'000,
                                     int64_t memory_bytes = 64 * kGiB) {
  core::WorkspaceClass cls;
  cls.id = "gpu-" + std::to_string(gpus) + "x";
  cls.resources.cpu_request_millis = cpu_millis;
  cls.resources.cpu_limit_millis = cpu_millis;
  cls.resources.memory_bytes = memory_bytes;
  cls.gpu.count = gpus;
  return cls;
}

}  // namespace wsched::scaling::testing

#endif  // WSCHED_SERVER_SCALING_TEST_POOLS_H_
