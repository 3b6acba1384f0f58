#include "server/grpc/principal.h"

#include "absl/strings/str_cat.h"

namespace wsched::grpc_api {
namespace {

bool InScope(const std::set<std::string>& scope, const std::string& value) {
  return scope.empty() || scope.count(value) > 0;
}

}  // namespace

const char* RoleName(Role role) {
  switch (role) {
    case Role::kAdmin: return "admin";
    case Role::kControlPlane: return "control-plane";
    case Role::kProjectOwner: return "project-owner";
    case Role::kAgent: return "agent";
    case Role::kActuator: return "actuator";
  }
  return "unknown";
}

absl::StatusOr<Role> ParseRole(const std::string& text) {
  for (Role role : kAllRoles) {
    if (text == RoleName(role)) return role;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown role \"", text, "\"; one of admin, control-plane, project-owner, agent, actuator"));
}

bool Principal::CoversProject(const std::string& org_id, const std::string& project_id) const {
  if (Has(Role::kAdmin) || Has(Role::kControlPlane)) return true;
  return projects.count(project_id) > 0 || (orgs.count(org_id) > 0 && projects.empty());
}

bool Principal::CoversOrg(const std::string& org_id) const {
  if (Has(Role::kAdmin) || Has(Role::kControlPlane)) return true;
  return orgs.count(org_id) > 0;
}

bool Principal::CoversPool(const std::string& pool) const {
  if (Has(Role::kAdmin)) return true;
  return InScope(pools, pool);
}

bool Principal::SpeaksForNode(const std::string& name) const {
  if (Has(Role::kAdmin)) return true;
  if (bootstrap) return false;
  return node.empty() || node == name;
}

bool Principal::ConcurrencyLimited() const {
  if (Has(Role::kAdmin) || Has(Role::kControlPlane)) return false;
  return Has(Role::kAgent) || Has(Role::kProjectOwner);
}

}  // namespace wsched::grpc_api
