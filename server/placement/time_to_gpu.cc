#include "server/placement/time_to_gpu.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"

namespace wsched::placement {
namespace {

// Whole seconds; below a second, milliseconds (a cache-hit install can
// take 400ms, which whole seconds would print as "0").
std::string Text(absl::Duration d) {
  const absl::Duration unit = d < absl::Seconds(1) ? absl::Milliseconds(1) : absl::Seconds(1);
  return absl::FormatDuration(absl::Trunc(d, unit));
}

// One phase before any of it elapsed, with the words the basis shows:
// "node start median 4m0s (5 samples)" or "default node start time 5m0s
// (--default_node_start_time; no measured starts yet)".
struct Part {
  EstimatePhase phase;
  std::string basis;
};

Part Measured(PhaseKind kind, const MeasuredTime& measured, std::string basis) {
  const absl::Duration p90 = std::max(measured.median, measured.p90.value_or(measured.median));
  return {{.kind = kind, .p50 = measured.median, .p90 = p90, .samples = measured.samples},
          std::move(basis)};
}

Part Default(PhaseKind kind, absl::Duration time, std::string basis) {
  return {{.kind = kind, .p50 = time, .p90 = time, .default_used = true}, std::move(basis)};
}

Part NodeStart(const TimeToGpuInputs& in) {
  if (in.node_start && in.node_start->samples > 0) {
    return Measured(PhaseKind::kNodeBoot, *in.node_start,
                    absl::StrCat("node start median ", Text(in.node_start->median), " (",
                                 in.node_start->samples, " samples)"));
  }
  return Default(PhaseKind::kNodeBoot, in.default_node_start,
                 absl::StrCat("default node start time ", Text(in.default_node_start),
                              " (--default_node_start_time; no measured starts in pool ",
                              in.reason.pool, " yet)"));
}

// A node not started yet, until it registers: the cloud's start, then the
// node's boot, when the pool measured both; else one boot from the request.
std::vector<Part> NewNodeStart(const TimeToGpuInputs& in) {
  if (in.cloud_start && in.cloud_start->samples > 0 && in.node_boot && in.node_boot->samples > 0) {
    return {Measured(PhaseKind::kCloudStart, *in.cloud_start,
                     absl::StrCat("cloud start median ", Text(in.cloud_start->median), " (",
                                  in.cloud_start->samples, " samples)")),
            Measured(PhaseKind::kNodeBoot, *in.node_boot,
                     absl::StrCat("node boot median ", Text(in.node_boot->median), " (",
                                  in.node_boot->samples, " samples)"))};
  }
  return {NodeStart(in)};
}

// The install on `kernel` ("" when not known), measured or the default.
Part DriverInstall(const TimeToGpuInputs& in, const std::string& kernel) {
  const std::string where = kernel.empty() ? absl::StrCat("in pool ", in.reason.pool)
                                           : absl::StrCat("on kernel ", kernel);
  if (in.driver_install && in.driver_install->samples > 0) {
    return Measured(
        PhaseKind::kDriverInstall, *in.driver_install,
        absl::StrCat("driver install median ", where, " ", Text(in.driver_install->median), " (",
                     in.driver_install->samples, " samples)"));
  }
  return Default(
      PhaseKind::kDriverInstall, in.default_driver_install,
      absl::StrCat("default driver install time ", Text(in.default_driver_install),
                   " (--default_driver_install_time; no measured installs ", where, " yet)"));
}

// `part` with `elapsed` of it gone; what is left never goes below zero.
EstimatePhase Elapsed(EstimatePhase phase, absl::Duration elapsed) {
  phase.elapsed = elapsed;
  phase.remaining_p50 = std::max(absl::ZeroDuration(), phase.p50 - elapsed);
  phase.remaining_p90 = std::max(absl::ZeroDuration(), phase.p90 - elapsed);
  return phase;
}

// An estimate made of `phases`: the sums of what is left of each.
TimeToGpu Of(std::vector<EstimatePhase> phases, std::string basis) {
  TimeToGpu t{absl::ZeroDuration(), absl::ZeroDuration(), std::move(phases)};
  for (const EstimatePhase& phase : t.phases) {
    *t.estimate += phase.remaining_p50;
    *t.estimate_p90 += phase.remaining_p90;
  }
  t.basis = std::move(basis);
  return t;
}

// What is left of `part` after `since` (nullopt: not begun).
TimeToGpu Remaining(const Part& part, std::optional<absl::Time> since, absl::Time now) {
  if (!since) return Of({Elapsed(part.phase, absl::ZeroDuration())}, part.basis);
  absl::Duration elapsed = std::max(absl::ZeroDuration(), now - *since);
  return Of({Elapsed(part.phase, elapsed)},
            absl::StrCat(part.basis, " - ", Text(elapsed), " elapsed"));
}

TimeToGpu None(const std::string& why) {
  TimeToGpu t;
  t.basis = "no estimate: " + why;
  return t;
}

// `before` (a window, a backoff), then a new node's start, under way for
// `elapsed` when it was asked for already: what has gone of it counts
// against its first phase (the cloud's start, if measured).
TimeToGpu NewNode(const TimeToGpuInputs& in, std::vector<EstimatePhase> before,
                  std::optional<absl::Duration> elapsed, std::string basis) {
  const std::vector<Part> parts = NewNodeStart(in);
  for (size_t i = 0; i < parts.size(); ++i) {
    const bool first = i == 0;
    before.push_back(Elapsed(
        parts[i].phase, first ? elapsed.value_or(absl::ZeroDuration()) : absl::ZeroDuration()));
    absl::StrAppend(&basis, first ? "" : ", then ", parts[i].basis,
                    first && elapsed ? absl::StrCat(" - ", Text(*elapsed), " elapsed") : "");
  }
  return Of(std::move(before), std::move(basis));
}

// A new node takes work once registered, unless the pool's nodes install
// their driver first: then the install, not begun, follows.
TimeToGpu ThenNewNodeInstall(TimeToGpu t, const TimeToGpuInputs& in) {
  if (!in.new_node_install_kernel) return t;
  const Part install = DriverInstall(in, *in.new_node_install_kernel);
  t.phases.push_back(Elapsed(install.phase, absl::ZeroDuration()));
  *t.estimate += t.phases.back().remaining_p50;
  *t.estimate_p90 += t.phases.back().remaining_p90;
  absl::StrAppend(&t.basis, ", then ", install.basis);
  return t;
}

TimeToGpu EstimateTimeToPlace(const TimeToGpuInputs& in) {
  const PendingReason& r = in.reason;
  switch (r.code) {
    case PendingCode::kQueued:
      return Of({Elapsed({.kind = PhaseKind::kQueue}, absl::ZeroDuration())},
                absl::StrCat("room exists; queue position ", r.queue_position));
    case PendingCode::kMigRelayout:
      // A handful of nvidia-smi calls at the node's next heartbeat: no
      // phase worth measuring.
      return Of({}, "a MIG re-layout takes seconds once the node's agent hears of it");
    case PendingCode::kDriverInstalling:
      return Remaining(DriverInstall(in, r.kernel), r.since, in.now);
    case PendingCode::kNodeProvisioning:
      return ThenNewNodeInstall(Remaining(NodeStart(in), r.since, in.now), in);
    case PendingCode::kScaleUpRequested: {
      std::optional<absl::Duration> elapsed;
      if (r.since) elapsed = std::max(absl::ZeroDuration(), in.now - *r.since);
      return ThenNewNodeInstall(NewNode(in, {}, elapsed, ""), in);
    }
    case PendingCode::kScaleUpNotYetRequested: {
      std::vector<EstimatePhase> phases;
      // How much of the window is left is not known here: all of it, which
      // is right when the workspace was just queued (the estimate checked).
      if (in.batching_window > absl::ZeroDuration()) {
        phases.push_back(Elapsed(
            {.kind = PhaseKind::kQueue, .p50 = in.batching_window, .p90 = in.batching_window},
            absl::ZeroDuration()));
      }
      TimeToGpu t = NewNode(in, std::move(phases), std::nullopt, "");
      absl::StrAppend(&t.basis, ", once the scale-up is requested");
      return ThenNewNodeInstall(std::move(t), in);
    }
    case PendingCode::kPoolBackingOff: {
      absl::Duration wait = r.until ? std::max(absl::ZeroDuration(), *r.until - in.now)
                                    : absl::ZeroDuration();
      EstimatePhase backoff{.kind = PhaseKind::kBackoff, .p50 = wait, .p90 = wait};
      return ThenNewNodeInstall(NewNode(in, {Elapsed(backoff, absl::ZeroDuration())}, std::nullopt,
                                        absl::StrCat("backoff ends in ", Text(wait), ", then ")),
                                in);
    }
    case PendingCode::kBudgetExhausted:
      return None("the spending limit must be raised or its period reset");
    case PendingCode::kOrgGpuQuota:
      return None("the org must free GPUs or get a larger quota");
    case PendingCode::kClassPolicy:
      return None("the class is not allowed");
    case PendingCode::kNoPool:
      return None("no pool can hold the class");
    case PendingCode::kIommuUnsafe:
      return None("the free GPUs are not safe for a VM");
    case PendingCode::kGpusUnhealthy:
      return None("the free GPUs are unhealthy");
    case PendingCode::kGpusNotBound:
      return None("the free GPUs are not bound as the class needs");
    case PendingCode::kGpusNotLinked:
      return None("no free GPUs share NVLink as the class needs");
    case PendingCode::kDriverInstallFailed:
      return None("the driver install failed; an operator must act");
    case PendingCode::kPoolAtMaxSize:
      return None("the pool is at max_size; it waits for a workspace to stop");
  }
  return None("unknown reason");
}

// The time to place `t`, then the workspace's first ready when the pool
// measured it: a phase of its own, after the placement, that neither sum
// of the time to place counts (the accuracy check compares placements
// with them).
TimeToGpu ThenFirstReady(TimeToGpu t, const TimeToGpuInputs& in) {
  if (!t.estimate || !in.first_ready || in.first_ready->samples <= 0) return t;
  const Part ready = Measured(PhaseKind::kFirstReady, *in.first_ready, "");
  t.phases.push_back(Elapsed(ready.phase, absl::ZeroDuration()));
  t.estimate_to_ready = *t.estimate + t.phases.back().remaining_p50;
  return t;
}

}  // namespace

std::string PhaseKindName(PhaseKind kind) {
  switch (kind) {
    case PhaseKind::kQueue: return "queue";
    case PhaseKind::kBackoff: return "backoff";
    case PhaseKind::kCloudStart: return "cloud_start";
    case PhaseKind::kNodeBoot: return "node_boot";
    case PhaseKind::kDriverInstall: return "driver_install";
    case PhaseKind::kFirstReady: return "first_ready";
  }
  return "unknown";
}

bool WaitsForANewNode(PendingCode code) {
  return code == PendingCode::kScaleUpNotYetRequested || code == PendingCode::kScaleUpRequested ||
         code == PendingCode::kPoolBackingOff;
}

bool WaitsForANodeToStart(PendingCode code) {
  return WaitsForANewNode(code) || code == PendingCode::kNodeProvisioning;
}

TimeToGpu EstimateTimeToGpu(const TimeToGpuInputs& in) {
  return ThenFirstReady(EstimateTimeToPlace(in), in);
}

}  // namespace wsched::placement
