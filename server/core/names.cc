// Stable lower-case names of enums, used in logs, metrics labels and SQL.
#include "server/core/node.h"
#include "server/core/workspace_class.h"

namespace wsched::core {

const char* IsolationName(Isolation isolation) {
  return isolation == Isolation::kVm ? "vm" : "container";
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

const char* DriverStateName(DriverState state) {
  switch (state) {
    case DriverState::kNotNeeded: return "not_needed";
    case DriverState::kReady: return "ready";
    case DriverState::kNeedsDriver: return "needs_driver";
    case DriverState::kInstallFailed: return "install_failed";
    case DriverState::kNoPolicy: return "no_policy";
  }
  return "unknown";
}

}  // namespace wsched::core
