#include "server/grpc/auth.h"

#include <fstream>
#include <sstream>

#include <google/protobuf/descriptor.h>
#include <yaml-cpp/yaml.h>

#include "absl/strings/match.h"
#include "absl/strings/strip.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace wsched::grpc_api {
namespace {

using R = Role;

struct MethodRoles {
  const char* method;
  std::vector<Role> roles;
};

// THE table. Adding an RPC without a line here keeps the server from starting.
const std::vector<MethodRoles>& MethodTable() {
  static const auto* table = new std::vector<MethodRoles>{
      // Classes: admins write; everyone who schedules or picks a class reads.
      {"/wsched.v1.ClassService/ListClasses", {R::kAdmin, R::kControlPlane, R::kProjectOwner}},
      {"/wsched.v1.ClassService/GetClass", {R::kAdmin, R::kControlPlane, R::kProjectOwner}},
      {"/wsched.v1.ClassService/UpdateClass", {R::kAdmin}},
      {"/wsched.v1.ClassService/DeleteClass", {R::kAdmin}},
      {"/wsched.v1.ClassService/ApplyCatalog", {R::kAdmin}},
      {"/wsched.v1.ClassService/GetCatalog", {R::kAdmin, R::kControlPlane}},
      // Settings: project owners within their scope, admins everywhere.
      {"/wsched.v1.SettingsService/GetProjectSettings",
       {R::kAdmin, R::kControlPlane, R::kProjectOwner}},
      {"/wsched.v1.SettingsService/SetProjectSettings", {R::kAdmin, R::kProjectOwner}},
      {"/wsched.v1.SettingsService/GetOrgSettings",
       {R::kAdmin, R::kControlPlane, R::kProjectOwner}},
      {"/wsched.v1.SettingsService/SetOrgSettings", {R::kAdmin}},
      {"/wsched.v1.SettingsService/ResolveClass", {R::kAdmin, R::kControlPlane, R::kProjectOwner}},
      // Inventory: agents report their pool's nodes; admins operate nodes.
      {"/wsched.v1.InventoryService/RegisterNode", {R::kAgent, R::kAdmin}},
      {"/wsched.v1.InventoryService/Heartbeat", {R::kAgent, R::kAdmin}},
      {"/wsched.v1.InventoryService/CordonNode", {R::kAdmin}},
      {"/wsched.v1.InventoryService/DrainNode", {R::kAdmin}},
      {"/wsched.v1.InventoryService/UncordonNode", {R::kAdmin}},
      {"/wsched.v1.InventoryService/RemoveNode", {R::kAdmin}},
      {"/wsched.v1.InventoryService/GetNode", {R::kAdmin, R::kControlPlane, R::kAgent}},
      {"/wsched.v1.InventoryService/ListNodes", {R::kAdmin, R::kControlPlane}},
      {"/wsched.v1.InventoryService/ListPools", {R::kAdmin, R::kControlPlane, R::kActuator}},
      {"/wsched.v1.InventoryService/ListDriverWork", {R::kAdmin}},
      {"/wsched.v1.InventoryService/ReportDriverInstall", {R::kAdmin}},
      // Placement: the control plane's hot path.
      {"/wsched.v1.PlacementService/PlaceWorkspace", {R::kControlPlane}},
      {"/wsched.v1.PlacementService/StopWorkspace", {R::kControlPlane}},
      {"/wsched.v1.PlacementService/GetWorkspace", {R::kControlPlane, R::kAdmin}},
      {"/wsched.v1.PlacementService/ListWorkspaces", {R::kControlPlane, R::kAdmin}},
      {"/wsched.v1.PlacementService/WatchWorkspace", {R::kControlPlane}},
      // Scaling: actuators watch and report.
      {"/wsched.v1.ScalingService/GetScalingState", {R::kActuator, R::kAdmin, R::kControlPlane}},
      {"/wsched.v1.ScalingService/WatchScalingSignals", {R::kActuator, R::kAdmin}},
      {"/wsched.v1.ScalingService/ReportActuator", {R::kActuator}},
  };
  return *table;
}

absl::StatusOr<Role> ParseRole(const std::string& text) {
  if (text == "admin") return Role::kAdmin;
  if (text == "control-plane") return Role::kControlPlane;
  if (text == "project-owner") return Role::kProjectOwner;
  if (text == "agent") return Role::kAgent;
  if (text == "actuator") return Role::kActuator;
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown role \"", text, "\"; one of admin, control-plane, project-owner, agent, actuator"));
}

std::set<std::string> StringSet(const YAML::Node& node) {
  std::set<std::string> out;
  if (node) {
    for (const auto& item : node) out.insert(item.as<std::string>());
  }
  return out;
}

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

absl::StatusOr<Authenticator> Authenticator::FromYamlFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read tokens file ", path));
  std::stringstream text;
  text << in.rdbuf();
  auto result = FromYaml(text.str());
  if (!result.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": ", result.status().message()));
  }
  return result;
}

absl::StatusOr<Authenticator> Authenticator::FromYaml(const std::string& text) {
  Authenticator auth;
  try {
    YAML::Node root = YAML::Load(text);
    if (!root["tokens"] || !root["tokens"].IsSequence()) {
      return absl::InvalidArgumentError("tokens: must be a list");
    }
    int i = 0;
    for (const auto& entry : root["tokens"]) {
      std::string where = absl::StrCat("tokens[", i++, "]");
      std::string token = entry["token"] ? entry["token"].as<std::string>() : "";
      if (token.size() < 16) {
        return absl::InvalidArgumentError(absl::StrCat(where, ".token: must be >= 16 characters"));
      }
      Principal principal;
      principal.name = entry["name"] ? entry["name"].as<std::string>() : where;
      auto role = ParseRole(entry["role"] ? entry["role"].as<std::string>() : "");
      if (!role.ok()) return absl::InvalidArgumentError(absl::StrCat(where, ".role: ", role.status().message()));
      principal.roles.insert(*role);
      principal.orgs = StringSet(entry["orgs"]);
      principal.projects = StringSet(entry["projects"]);
      principal.pools = StringSet(entry["pools"]);
      if (*role == Role::kProjectOwner && principal.orgs.empty() && principal.projects.empty()) {
        return absl::InvalidArgumentError(
            absl::StrCat(where, ": a project-owner needs orgs or projects"));
      }
      if (!auth.by_token_.emplace(token, principal).second) {
        return absl::InvalidArgumentError(absl::StrCat(where, ".token: duplicate token"));
      }
    }
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("tokens file: ", e.what()));
  }
  return auth;
}

Authenticator Authenticator::AllowAll() {
  Authenticator auth;
  auth.allow_all_ = true;
  return auth;
}

absl::StatusOr<Principal> Authenticator::Authorize(const grpc::ServerContextBase& context,
                                                   const std::string& method) const {
  auto roles = RolesForMethod(method);
  if (!roles.ok()) return absl::PermissionDeniedError(roles.status().message());
  if (allow_all_) {
    Principal dev;
    dev.name = "unauthenticated-dev";
    dev.roles = {Role::kAdmin, Role::kControlPlane, Role::kActuator, Role::kAgent};
    return dev;
  }
  const auto& metadata = context.client_metadata();
  auto it = metadata.find("authorization");
  if (it == metadata.end()) {
    return absl::UnauthenticatedError("missing authorization metadata (Bearer token)");
  }
  absl::string_view value(it->second.data(), it->second.size());
  if (!absl::ConsumePrefix(&value, "Bearer ")) {
    return absl::UnauthenticatedError("authorization must be \"Bearer <token>\"");
  }
  auto principal = by_token_.find(std::string(value));
  if (principal == by_token_.end()) return absl::UnauthenticatedError("unknown token");
  for (Role role : *roles) {
    if (principal->second.Has(role)) return principal->second;
  }
  std::vector<std::string> names;
  for (Role role : *roles) names.push_back(RoleName(role));
  return absl::PermissionDeniedError(absl::StrCat(principal->second.name, " may not call ", method,
                                                  "; it needs role ", absl::StrJoin(names, " or ")));
}

absl::StatusOr<std::vector<Role>> RolesForMethod(const std::string& method) {
  for (const MethodRoles& entry : MethodTable()) {
    if (method == entry.method) return entry.roles;
  }
  return absl::NotFoundError(absl::StrCat("no access decision for ", method));
}

absl::Status CheckMethodTableCovers(const std::vector<std::string>& service_names) {
  std::vector<std::string> missing;
  const auto* pool = google::protobuf::DescriptorPool::generated_pool();
  for (const std::string& name : service_names) {
    const auto* service = pool->FindServiceByName(name);
    if (service == nullptr) return absl::NotFoundError(absl::StrCat("unknown service ", name));
    for (int i = 0; i < service->method_count(); ++i) {
      std::string method = absl::StrCat("/", name, "/", service->method(i)->name());
      if (!RolesForMethod(method).ok()) missing.push_back(method);
    }
  }
  if (!missing.empty()) {
    return absl::InternalError(
        absl::StrCat("RPCs without an access decision: ", absl::StrJoin(missing, ", ")));
  }
  return absl::OkStatus();
}

}  // namespace wsched::grpc_api
