#include "server/inventory/gpu_health.h"

namespace wsched::inventory {

bool ApplyGpuHealthReport(core::Gpu& gpu, const GpuHealthReport& report, absl::Time now,
                          absl::Duration healthy_for) {
  const core::Gpu before = gpu;
  if (!report.healthy) {
    if (gpu.healthy || gpu.unhealthy_since == absl::InfinitePast()) gpu.unhealthy_since = now;
    gpu.healthy = false;
    gpu.health_reason = report.reason.empty() ? kUnhealthyWithoutReason : report.reason;
    // A relapse restarts the wait from the next healthy report.
    gpu.reported_healthy_since = absl::InfinitePast();
    return !(gpu == before);
  }
  if (gpu.healthy) return false;
  if (gpu.reported_healthy_since == absl::InfinitePast()) gpu.reported_healthy_since = now;
  if (now - gpu.reported_healthy_since >= healthy_for) ClearGpuHealth(gpu);
  return !(gpu == before);
}

bool ClearGpuHealth(core::Gpu& gpu) {
  const bool was_out = !gpu.healthy;
  gpu.healthy = true;
  gpu.health_reason.clear();
  gpu.unhealthy_since = absl::InfinitePast();
  gpu.reported_healthy_since = absl::InfinitePast();
  return was_out;
}

void HealthOnRegister(const core::Gpu* stored, core::Gpu& registered, absl::Time now,
                      absl::Duration healthy_for) {
  GpuHealthReport report{registered.healthy, registered.health_reason};
  ClearGpuHealth(registered);
  if (stored != nullptr) {
    registered.healthy = stored->healthy;
    registered.health_reason = stored->health_reason;
    registered.unhealthy_since = stored->unhealthy_since;
    registered.reported_healthy_since = stored->reported_healthy_since;
  }
  ApplyGpuHealthReport(registered, report, now, healthy_for);
}

}  // namespace wsched::inventory
