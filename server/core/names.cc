// Stable lower-case names of enums, used in logs, metrics labels and SQL.
#include "server/core/node.h"
#include "server/core/pool.h"
#include "server/core/workspace.h"
#include "server/core/workspace_class.h"

namespace wsched::core {

const char* IsolationName(Isolation isolation) {
  return isolation == Isolation::kVm ? "vm" : "container";
}

const char* GpuLinksName(GpuLinks links) {
  switch (links) {
    case GpuLinks::kAny: return "any";
    case GpuLinks::kNvlinkPreferred: return "nvlink_preferred";
    case GpuLinks::kNvlinkRequired: return "nvlink_required";
  }
  return "any";
}

std::optional<GpuLinks> ParseGpuLinks(absl::string_view name) {
  for (GpuLinks links : {GpuLinks::kAny, GpuLinks::kNvlinkPreferred, GpuLinks::kNvlinkRequired}) {
    if (name == GpuLinksName(links)) return links;
  }
  return std::nullopt;
}

const char* MigLayoutKindName(MigLayoutKind kind) {
  switch (kind) {
    case MigLayoutKind::kWhole: return "whole";
    case MigLayoutKind::kFixed: return "fixed";
    case MigLayoutKind::kByDemand: return "by_demand";
  }
  return "whole";
}

std::optional<MigLayoutKind> ParseMigLayoutKind(absl::string_view name) {
  for (MigLayoutKind kind : {MigLayoutKind::kWhole, MigLayoutKind::kFixed, MigLayoutKind::kByDemand}) {
    if (name == MigLayoutKindName(kind)) return kind;
  }
  return std::nullopt;
}

const char* NodeStateName(NodeState state) {
  switch (state) {
    case NodeState::kProvisioning: return "provisioning";
    case NodeState::kReady: return "ready";
    case NodeState::kCordoned: return "cordoned";
    case NodeState::kDraining: return "draining";
    case NodeState::kLost: return "lost";
  }
  return "unknown";
}

const char* CdiModeName(CdiMode mode) {
  switch (mode) {
    case CdiMode::kInline: return "inline";
    case CdiMode::kWsched: return "wsched";
    case CdiMode::kNvidia: return "nvidia";
  }
  return "unknown";
}

const char* DriverStateName(DriverState state) {
  switch (state) {
    case DriverState::kNotNeeded: return "not_needed";
    case DriverState::kReady: return "ready";
    case DriverState::kNeedsDriver: return "needs_driver";
    case DriverState::kInstallFailed: return "install_failed";
    case DriverState::kNoPolicy: return "no_policy";
    case DriverState::kInstalling: return "installing";
    case DriverState::kOutdated: return "outdated";
  }
  return "unknown";
}

std::optional<NodeState> ParseNodeState(absl::string_view name) {
  for (NodeState state : {NodeState::kProvisioning, NodeState::kReady, NodeState::kCordoned,
                          NodeState::kDraining, NodeState::kLost}) {
    if (name == NodeStateName(state)) return state;
  }
  return std::nullopt;
}

std::optional<DriverState> ParseDriverState(absl::string_view name) {
  for (DriverState state : {DriverState::kNotNeeded, DriverState::kReady, DriverState::kNeedsDriver,
                            DriverState::kInstallFailed, DriverState::kNoPolicy,
                            DriverState::kInstalling, DriverState::kOutdated}) {
    if (name == DriverStateName(state)) return state;
  }
  return std::nullopt;
}

const char* WorkspaceStateName(WorkspaceState state) {
  switch (state) {
    case WorkspaceState::kPending: return "pending";
    case WorkspaceState::kPlaced: return "placed";
    case WorkspaceState::kStopped: return "stopped";
    case WorkspaceState::kLost: return "lost";
  }
  return "unknown";
}

std::optional<WorkspaceState> ParseWorkspaceState(absl::string_view name) {
  for (WorkspaceState state : {WorkspaceState::kPending, WorkspaceState::kPlaced,
                               WorkspaceState::kStopped, WorkspaceState::kLost}) {
    if (name == WorkspaceStateName(state)) return state;
  }
  return std::nullopt;
}

}  // namespace wsched::core
