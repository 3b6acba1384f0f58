#include "server/core/idle_policy.h"

namespace wsched::core {

const char* IdleActionName(IdleAction action) {
  return action == IdleAction::kStop ? "stop" : "notify";
}

std::optional<IdleAction> ParseIdleAction(absl::string_view name) {
  if (name == "notify") return IdleAction::kNotify;
  if (name == "stop") return IdleAction::kStop;
  return std::nullopt;
}

}  // namespace wsched::core
