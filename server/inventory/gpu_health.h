// GPU health on the server: what a report from the agent does to a stored
// GPU. A GPU that went bad stays out of service until the agent has reported
// it healthy for a set time, so a flapping GPU (an XID now and then, an ECC
// counter that resets) is not handed out between its failures.
#ifndef WSCHED_SERVER_INVENTORY_GPU_HEALTH_H_
#define WSCHED_SERVER_INVENTORY_GPU_HEALTH_H_

#include <string>

#include "absl/time/time.h"
#include "server/core/node.h"

namespace wsched::inventory {

// One GPU's health as its agent reports it.
struct GpuHealthReport {
  bool healthy = true;
  std::string reason;  // Why not, when unhealthy; may be empty.
};

// The reason a GPU reported unhealthy without one gets.
inline constexpr char kUnhealthyWithoutReason[] = "reported unhealthy by the node agent";

// Applies `report`, received at `now`, to `gpu`:
// - unhealthy: out of service (kept out if it already was), with the reason;
// - healthy while out of service: the wait starts (reported_healthy_since)
//   and the GPU returns once it has lasted `healthy_for`;
// - healthy while in service: nothing.
// Returns whether anything changed.
bool ApplyGpuHealthReport(core::Gpu& gpu, const GpuHealthReport& report, absl::Time now,
                          absl::Duration healthy_for);

// Returns `gpu` to service now (the admin's ClearGpuHealth). Returns whether
// it was out of service.
bool ClearGpuHealth(core::Gpu& gpu);

// Health of a GPU as (re-)registered: the health the agent reports with it
// applied to what the server stored for the same UUID (`stored`, null for a
// GPU it never saw), so registering again neither ends a running wait nor
// takes times from the agent.
void HealthOnRegister(const core::Gpu* stored, core::Gpu& registered, absl::Time now,
                      absl::Duration healthy_for);

}  // namespace wsched::inventory

#endif  // WSCHED_SERVER_INVENTORY_GPU_HEALTH_H_
