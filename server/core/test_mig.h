// MIG states for tests: an H200's real profile table and a mixed layout.
#ifndef WSCHED_SERVER_CORE_TEST_MIG_H_
#define WSCHED_SERVER_CORE_TEST_MIG_H_

#include "server/core/mig.h"

namespace wsched::core::testing {

inline GpuMig H200MixedLayout() {
  constexpr int64_t kGiB = int64_t{1} << 30;
  GpuMig mig;
  mig.enabled = mig.pending_enabled = true;
  mig.profiles = {{"1g.18gb", 19, 1, 16 * kGiB, 1, {0, 1, 2, 3, 4, 5, 6}},
                  {"1g.35gb", 15, 1, 32 * kGiB, 2, {0, 2, 4, 6}},
                  {"2g.35gb", 14, 2, 32 * kGiB, 2, {0, 2, 4}},
                  {"3g.71gb", 9, 3, 65 * kGiB, 4, {0, 4}},
                  {"4g.71gb", 5, 4, 65 * kGiB, 4, {0}},
                  {"7g.141gb", 0, 7, 130 * kGiB, 8, {0}}};
  DeviceNode gi{"/dev/nvidia-caps/nvidia-cap21", 'c', 235, 21, "rw"};
  DeviceNode ci{"/dev/nvidia-caps/nvidia-cap22", 'c', 235, 22, "rw"};
  mig.instances = {{"3g.71gb", 2, 0, 0, 4, "MIG-aa11", gi, ci, ""},
                   {"2g.35gb", 3, 0, 4, 2, "MIG-bb22", std::nullopt, std::nullopt, ""},
                   {"1g.18gb", 9, 0, 6, 1, "MIG-cc33", std::nullopt, std::nullopt, ""}};
  return mig;
}

// Two GPUs joined by `nvlinks` bonded NVLinks.
inline GpuLink NvlinkTo(int peer, int nvlinks = 4) { return {peer, GpuLinkKind::kNvlink, nvlinks}; }

}  // namespace wsched::core::testing

#endif  // WSCHED_SERVER_CORE_TEST_MIG_H_
