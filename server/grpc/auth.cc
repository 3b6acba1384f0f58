#include "server/grpc/auth.h"

#include <fstream>
#include <sstream>

#include <google/protobuf/descriptor.h>

#include "absl/strings/match.h"
#include "absl/strings/strip.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "server/core/error_reason.h"
#include "server/grpc/method_coverage.h"
#include "server/grpc/peer_identity.h"

namespace wsched::grpc_api {
namespace {

using R = Role;

struct MethodRoles {
  const char* method;
  std::vector<Role> roles;
};

// THE table. Adding an RPC without a line here keeps the server from starting.
const std::vector<MethodRoles>& MethodTable() {
  static const auto *table = new std::vector<MethodRoles>{
      // Classes: admins write; everyone who schedules or picks a class reads.
      {"/wsched.v1.ClassService/ListClasses",
       {R::kAdmin, R::kControlPlane, R::kProjectOwner}},
      {"/wsched.v1.ClassService/GetClass",
       {R::kAdmin, R::kControlPlane, R::kProjectOwner}},
      {"/wsched.v1.ClassService/UpdateClass", {R::kAdmin}},
      {"/wsched.v1.ClassService/DeleteClass", {R::kAdmin}},
      {"/wsched.v1.ClassService/ApplyCatalog", {R::kAdmin}},
      {"/wsched.v1.ClassService/GetCatalog", {R::kAdmin, R::kControlPlane}},
      // Settings: project owners within their scope, admins everywhere.
      {"/wsched.v1.SettingsService/GetProjectSettings",
       {R::kAdmin, R::kControlPlane, R::kProjectOwner}},
      {"/wsched.v1.SettingsService/SetProjectSettings",
       {R::kAdmin, R::kProjectOwner}},
      {"/wsched.v1.SettingsService/GetOrgSettings",
       {R::kAdmin, R::kControlPlane, R::kProjectOwner}},
      {"/wsched.v1.SettingsService/SetOrgSettings", {R::kAdmin}},
      {"/wsched.v1.SettingsService/ResolveClass",
       {R::kAdmin, R::kControlPlane, R::kProjectOwner}},
      // Inventory: agents report their pool's nodes; admins operate nodes.
      {"/wsched.v1.InventoryService/RegisterNode", {R::kAgent, R::kAdmin}},
      {"/wsched.v1.InventoryService/Heartbeat", {R::kAgent, R::kAdmin}},
      {"/wsched.v1.InventoryService/CordonNode", {R::kAdmin}},
      {"/wsched.v1.InventoryService/DrainNode", {R::kAdmin}},
      {"/wsched.v1.InventoryService/UncordonNode", {R::kAdmin}},
      {"/wsched.v1.InventoryService/RemoveNode", {R::kAdmin}},
      {"/wsched.v1.InventoryService/GetNode",
       {R::kAdmin, R::kControlPlane, R::kAgent}},
      {"/wsched.v1.InventoryService/ListNodes", {R::kAdmin, R::kControlPlane}},
      // Scoped in the handler: an agent to its own node (watch_nodes.cc).
      {"/wsched.v1.InventoryService/WatchNodes",
       {R::kAdmin, R::kControlPlane, R::kAgent}},
      {"/wsched.v1.InventoryService/ListPools",
       {R::kAdmin, R::kControlPlane, R::kActuator}},
      {"/wsched.v1.InventoryService/ListDriverWork", {R::kAdmin}},
      {"/wsched.v1.InventoryService/ListDriverRollouts", {R::kAdmin}},
      {"/wsched.v1.InventoryService/SetDriverRolloutPaused", {R::kAdmin}},
      // Agents report their own node's installs (node identity, checked by
      // the handler); admins report manual ones.
      {"/wsched.v1.InventoryService/ReportDriverInstall",
       {R::kAdmin, R::kAgent}},
      {"/wsched.v1.InventoryService/ClearGpuHealth", {R::kAdmin}},
      {"/wsched.v1.InventoryService/RotateNodeCredential", {R::kAdmin}},
      {"/wsched.v1.InventoryService/RevokeNodeCredential", {R::kAdmin}},
      // Placement: the control plane's hot path.
      {"/wsched.v1.PlacementService/PlaceWorkspace", {R::kControlPlane}},
      {"/wsched.v1.PlacementService/StopWorkspace", {R::kControlPlane}},
      // The control plane sees its workspaces start; an admin reports by hand.
      {"/wsched.v1.PlacementService/ReportWorkspaceReady",
       {R::kControlPlane, R::kAdmin}},
      {"/wsched.v1.PlacementService/GetWorkspace",
       {R::kControlPlane, R::kAdmin}},
      {"/wsched.v1.PlacementService/ListWorkspaces",
       {R::kControlPlane, R::kAdmin}},
      {"/wsched.v1.PlacementService/WatchWorkspace", {R::kControlPlane}},
      // Scoped in the handler: a project owner to its projects, an agent
      // to its own node (watch_workspaces.cc).
      {"/wsched.v1.PlacementService/WatchWorkspaces",
       {R::kControlPlane, R::kAdmin, R::kProjectOwner, R::kAgent}},
      // Scaling: actuators watch and report.
      {"/wsched.v1.ScalingService/GetScalingState",
       {R::kActuator, R::kAdmin, R::kControlPlane}},
      {"/wsched.v1.ScalingService/WatchScalingSignals",
       {R::kActuator, R::kAdmin}},
      {"/wsched.v1.ScalingService/ReportActuator", {R::kActuator}},
      // The audit trail: who changed what.
      {"/wsched.v1.AuditService/ListAuditRecords", {R::kAdmin}},
      // The usage ledger: owners read their own orgs' and projects' usage.
      {"/wsched.v1.UsageService/ListUsage",
       {R::kAdmin, R::kControlPlane, R::kProjectOwner}},
      {"/wsched.v1.UsageService/SummarizeUsage",
       {R::kAdmin, R::kControlPlane, R::kProjectOwner}},
      {"/wsched.v1.UsageService/GetSpendingForecast",
       {R::kAdmin, R::kControlPlane, R::kProjectOwner}},
  };
  return *table;
}

// The agent of the node a per-node token belongs to.
std::optional<Principal> NodeTokenPrincipal(const TokenDigest& digest,
                                            const NodeTokenLookup& node_tokens) {
  std::optional<NodeTokenOwner> owner = node_tokens(digest);
  if (!owner) return std::nullopt;
  Principal principal;
  principal.name = absl::StrCat("node/", owner->node);
  principal.credential = absl::StrCat("node token sha256:", ToHex(digest).substr(0, 12));
  principal.roles = {Role::kAgent};
  principal.pools = {owner->pool};
  principal.node = owner->node;
  return principal;
}

}  // namespace

absl::StatusOr<Authenticator> Authenticator::FromYamlFile(const std::string& path,
                                                          const CredentialOptions& options) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read tokens file ", path));
  std::stringstream text;
  text << in.rdbuf();
  auto result = FromYaml(text.str(), options);
  if (!result.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": ", result.status().message()));
  }
  return result;
}

absl::StatusOr<Authenticator> Authenticator::FromYaml(const std::string& text,
                                                      const CredentialOptions& options) {
  auto table = CredentialTable::Parse(text, options);
  if (!table.ok()) return table.status();
  Authenticator auth;
  auth.table_ = *std::move(table);
  return auth;
}

Authenticator Authenticator::AllowAll() {
  Authenticator auth;
  auth.allow_all_ = true;
  return auth;
}

absl::StatusOr<Principal> Authenticator::Authorize(const CallerCredentials& caller,
                                                   const std::string& method,
                                                   const NodeTokenLookup* node_tokens) const {
  auto roles = RolesForMethod(method);
  if (!roles.ok()) return absl::PermissionDeniedError(roles.status().message());
  if (allow_all_) {
    Principal dev;
    dev.name = "unauthenticated-dev";
    dev.credential = "none (--allow_unauthenticated)";
    dev.roles = {Role::kAdmin, Role::kControlPlane, Role::kActuator, Role::kAgent};
    return dev;
  }
  std::optional<Principal> principal;
  if (caller.authorization.has_value()) {
    absl::string_view value = *caller.authorization;
    if (!absl::ConsumePrefix(&value, "Bearer ")) {
      return absl::UnauthenticatedError("authorization must be \"Bearer <token>\"");
    }
    if (value.size() > kMaxTokenLength) return absl::UnauthenticatedError("unknown token");
    const TokenDigest digest = Sha256(value);
    if (const Principal* found = table_.FindToken(digest); found != nullptr) {
      principal = *found;
      // A prefix of the hash names the token without revealing it.
      principal->credential = absl::StrCat("token sha256:", ToHex(digest).substr(0, 12));
    } else if (node_tokens != nullptr) {
      principal = NodeTokenPrincipal(digest, *node_tokens);
    }
    if (!principal) return absl::UnauthenticatedError("unknown token");
  } else if (!caller.certificate_identities.empty()) {
    principal = table_.FindIdentity(caller.certificate_identities);
    if (!principal) {
      return absl::UnauthenticatedError(absl::StrCat(
          "client certificate identity ", absl::StrJoin(caller.certificate_identities, ", "),
          " is not in the identities of the tokens file"));
    }
    principal->credential =
        absl::StrCat("certificate ", absl::StrJoin(caller.certificate_identities, ","));
  } else {
    return absl::UnauthenticatedError(
        "missing authorization metadata (Bearer token) or client certificate");
  }
  for (Role role : *roles) {
    if (principal->Has(role)) return *principal;
  }
  std::vector<std::string> names;
  for (Role role : *roles) names.push_back(RoleName(role));
  core::ErrorDetails details;
  details.reason = core::ErrorReason::kTokenLacksRole;
  details.metadata = {{"principal", principal->name},
                      {"method", method},
                      {"required_roles", absl::StrJoin(names, ",")}};
  return core::ReasonError(absl::StrCat(principal->name, " may not call ", method,
                                        "; it needs role ", absl::StrJoin(names, " or ")),
                           std::move(details));
}

absl::StatusOr<Principal> Authenticator::Authorize(const grpc::ServerContextBase& context,
                                                   const std::string& method,
                                                   const NodeTokenLookup* node_tokens) const {
  CallerCredentials caller;
  const auto& metadata = context.client_metadata();
  if (auto it = metadata.find("authorization"); it != metadata.end()) {
    caller.authorization = std::string(it->second.data(), it->second.size());
  } else if (auto auth_context = context.auth_context(); auth_context != nullptr) {
    // Only without a token: a token decides, and the hot path (the control
    // plane's tokens) need not build the certificate's identity list.
    caller.certificate_identities = CertificateIdentities(*auth_context);
  }
  return Authorize(caller, method, node_tokens);
}

absl::StatusOr<std::vector<Role>> RolesForMethod(const std::string& method) {
  for (const MethodRoles& entry : MethodTable()) {
    if (method == entry.method) return entry.roles;
  }
  return absl::NotFoundError(absl::StrCat("no access decision for ", method));
}

std::vector<std::string> MethodsInTable() {
  std::vector<std::string> out;
  for (const MethodRoles& entry : MethodTable()) out.push_back(entry.method);
  return out;
}

absl::Status CheckMethodTableCovers(const std::vector<std::string>& service_names) {
  return CheckEveryMethod(
      service_names, "an access decision",
      [](const std::string& service, const google::protobuf::MethodDescriptor& method) -> std::string {
        std::string name = absl::StrCat("/", service, "/", method.name());
        return RolesForMethod(name).ok() ? "" : name;
      });
}

}  // namespace wsched::grpc_api
