#include "server/grpc/auth.h"

#include <map>
#include <set>

#include <google/protobuf/descriptor.h>

#include "absl/strings/str_cat.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "grpc/health/v1/health.pb.h"
#include "wsched/v1/classes.grpc.pb.h"
#include "wsched/v1/inventory.grpc.pb.h"
#include "wsched/v1/placement.grpc.pb.h"
#include "wsched/v1/scaling.grpc.pb.h"
#include "wsched/v1/settings.grpc.pb.h"

namespace wsched::grpc_api {
namespace {

using ::testing::HasSubstr;

TEST(MethodTable, EveryServedRpcHasAnAccessDecision) {
  // Referencing a message of each file links the file (and its service)
  // into this binary's descriptor pool.
  for (const auto* descriptor :
       {v1::ListClassesRequest::descriptor(), v1::ResolveClassRequest::descriptor(),
        v1::ListNodesRequest::descriptor(), v1::PlaceWorkspaceRequest::descriptor(),
        v1::ScalingState::descriptor()}) {
    ASSERT_NE(descriptor, nullptr);
  }
  EXPECT_TRUE(CheckMethodTableCovers({"wsched.v1.ClassService", "wsched.v1.SettingsService",
                                      "wsched.v1.InventoryService", "wsched.v1.PlacementService",
                                      "wsched.v1.ScalingService"})
                  .ok());
}

TEST(MethodTable, AnRpcWithoutDecisionIsNamed) {
  grpc::health::v1::HealthCheckRequest force_link;  // Puts the Health service in the pool.
  absl::Status status = CheckMethodTableCovers({"grpc.health.v1.Health"});
  EXPECT_THAT(std::string(status.message()), HasSubstr("/grpc.health.v1.Health/Check"));
}

TEST(MethodTable, AdminsApplyCatalogsControlPlanePlaces) {
  auto apply = RolesForMethod("/wsched.v1.ClassService/ApplyCatalog");
  ASSERT_TRUE(apply.ok());
  EXPECT_THAT(*apply, ::testing::ElementsAre(Role::kAdmin));
  auto place = RolesForMethod("/wsched.v1.PlacementService/PlaceWorkspace");
  ASSERT_TRUE(place.ok());
  EXPECT_THAT(*place, ::testing::ElementsAre(Role::kControlPlane));
}

TEST(Authenticator, RejectsBadTokenFiles) {
  EXPECT_THAT(std::string(Authenticator::FromYaml("tokens: {}").status().message()),
              HasSubstr("tokens: must be a list"));
  EXPECT_THAT(std::string(Authenticator::FromYaml("tokens: [{token: short, role: admin}]")
                              .status()
                              .message()),
              HasSubstr("tokens[0].token: must be >= 22 characters"));
  EXPECT_THAT(std::string(Authenticator::FromYaml(
                              "tokens: [{token: aaaaaaaaaaaaaaaaaaaaaaaa, role: root}]")
                              .status()
                              .message()),
              HasSubstr("tokens[0].role: unknown role \"root\""));
  EXPECT_THAT(std::string(Authenticator::FromYaml(
                              "tokens: [{token: aaaaaaaaaaaaaaaaaaaaaaaa, role: project-owner}]")
                              .status()
                              .message()),
              HasSubstr("a project-owner needs orgs or projects"));
}

TEST(Principal, ScopesLimitProjectOwnersAndAgents) {
  Principal owner;
  owner.roles = {Role::kProjectOwner};
  owner.orgs = {"o-1"};
  owner.projects = {"p-42"};
  EXPECT_TRUE(owner.CoversProject("o-1", "p-42"));
  EXPECT_FALSE(owner.CoversProject("o-1", "p-43"));
  EXPECT_TRUE(owner.CoversOrg("o-1"));
  EXPECT_FALSE(owner.CoversOrg("o-2"));
  Principal agent;
  agent.roles = {Role::kAgent};
  agent.pools = {"gpu-h100"};
  EXPECT_TRUE(agent.CoversPool("gpu-h100"));
  EXPECT_FALSE(agent.CoversPool("cpu"));
}

// The decision for every RPC, written out independently of auth.cc: a change
// to the table must change this test too, in the same review.
const std::map<std::string, std::set<Role>>& ExpectedDecisions() {
  using R = Role;
  static const auto *expected = new std::map<std::string, std::set<Role>>{
      {"/wsched.v1.ClassService/ListClasses",
       {R::kAdmin, R::kControlPlane, R::kProjectOwner}},
      {"/wsched.v1.ClassService/GetClass",
       {R::kAdmin, R::kControlPlane, R::kProjectOwner}},
      {"/wsched.v1.ClassService/UpdateClass", {R::kAdmin}},
      {"/wsched.v1.ClassService/DeleteClass", {R::kAdmin}},
      {"/wsched.v1.ClassService/ApplyCatalog", {R::kAdmin}},
      {"/wsched.v1.ClassService/GetCatalog", {R::kAdmin, R::kControlPlane}},
      {"/wsched.v1.SettingsService/GetProjectSettings",
       {R::kAdmin, R::kControlPlane, R::kProjectOwner}},
      {"/wsched.v1.SettingsService/SetProjectSettings",
       {R::kAdmin, R::kProjectOwner}},
      {"/wsched.v1.SettingsService/GetOrgSettings",
       {R::kAdmin, R::kControlPlane, R::kProjectOwner}},
      {"/wsched.v1.SettingsService/SetOrgSettings", {R::kAdmin}},
      {"/wsched.v1.SettingsService/ResolveClass",
       {R::kAdmin, R::kControlPlane, R::kProjectOwner}},
      {"/wsched.v1.InventoryService/RegisterNode", {R::kAgent, R::kAdmin}},
      {"/wsched.v1.InventoryService/Heartbeat", {R::kAgent, R::kAdmin}},
      {"/wsched.v1.InventoryService/CordonNode", {R::kAdmin}},
      {"/wsched.v1.InventoryService/DrainNode", {R::kAdmin}},
      {"/wsched.v1.InventoryService/UncordonNode", {R::kAdmin}},
      {"/wsched.v1.InventoryService/RemoveNode", {R::kAdmin}},
      {"/wsched.v1.InventoryService/GetNode",
       {R::kAdmin, R::kControlPlane, R::kAgent}},
      {"/wsched.v1.InventoryService/ListNodes", {R::kAdmin, R::kControlPlane}},
      {"/wsched.v1.InventoryService/WatchNodes",
       {R::kAdmin, R::kControlPlane, R::kAgent}},
      {"/wsched.v1.InventoryService/ListPools",
       {R::kAdmin, R::kControlPlane, R::kActuator}},
      {"/wsched.v1.InventoryService/ListDriverWork", {R::kAdmin}},
      {"/wsched.v1.InventoryService/ListDriverRollouts", {R::kAdmin}},
      {"/wsched.v1.InventoryService/SetDriverRolloutPaused", {R::kAdmin}},
      {"/wsched.v1.InventoryService/ReportDriverInstall",
       {R::kAdmin, R::kAgent}},
      {"/wsched.v1.InventoryService/ClearGpuHealth", {R::kAdmin}},
      {"/wsched.v1.InventoryService/RotateNodeCredential", {R::kAdmin}},
      {"/wsched.v1.InventoryService/RevokeNodeCredential", {R::kAdmin}},
      {"/wsched.v1.PlacementService/PlaceWorkspace", {R::kControlPlane}},
      {"/wsched.v1.PlacementService/StopWorkspace", {R::kControlPlane}},
      {"/wsched.v1.PlacementService/ReportWorkspaceReady",
       {R::kControlPlane, R::kAdmin}},
      {"/wsched.v1.PlacementService/GetWorkspace",
       {R::kControlPlane, R::kAdmin}},
      {"/wsched.v1.PlacementService/ListWorkspaces",
       {R::kControlPlane, R::kAdmin}},
      {"/wsched.v1.PlacementService/WatchWorkspace", {R::kControlPlane}},
      {"/wsched.v1.PlacementService/WatchWorkspaces",
       {R::kControlPlane, R::kAdmin, R::kProjectOwner, R::kAgent}},
      {"/wsched.v1.ScalingService/GetScalingState",
       {R::kActuator, R::kAdmin, R::kControlPlane}},
      {"/wsched.v1.ScalingService/WatchScalingSignals",
       {R::kActuator, R::kAdmin}},
      {"/wsched.v1.ScalingService/ReportActuator", {R::kActuator}},
  };
  return *expected;
}

// One token entry and one certificate identity per role.
Authenticator EveryRole() {
  std::string yaml = "tokens:\n";
  std::string identities = "identities:\n";
  for (Role role : kAllRoles) {
    const bool agent = role == Role::kAgent;
    std::string scope = role == Role::kProjectOwner ? ", projects: [p-42]"
                        : agent                     ? ", pools: [gpu-h100]"
                                                    : "";
    // Agents speak for one node: the token names it, the certificate's
    // leftmost label is it.
    absl::StrAppend(&yaml, "  - {name: t-", RoleName(role), ", sha256: ",
                    ToHex(Sha256(absl::StrCat("token-of-role-", RoleName(role), "-0123456789"))),
                    ", role: ", RoleName(role), scope, agent ? ", node: node-1" : "", "}\n");
    absl::StrAppend(&identities, "  - {name: c-", RoleName(role), ", identity: \"",
                    agent ? "{node}" : "*", ".", RoleName(role), ".certs.example\", role: ",
                    RoleName(role), scope, "}\n");
  }
  auto auth = Authenticator::FromYaml(yaml + identities);
  EXPECT_TRUE(auth.ok()) << auth.status();
  return *auth;
}

TEST(MethodTable, EveryRpcAndEveryRoleByTokenAndByCertificate) {
  // Links every service's descriptors (see the first test).
  for (const auto* descriptor :
       {v1::ListClassesRequest::descriptor(), v1::ResolveClassRequest::descriptor(),
        v1::ListNodesRequest::descriptor(), v1::PlaceWorkspaceRequest::descriptor(),
        v1::ScalingState::descriptor()}) {
    ASSERT_NE(descriptor, nullptr);
  }
  std::vector<std::string> served;
  const auto* pool = google::protobuf::DescriptorPool::generated_pool();
  for (const char* name : {"wsched.v1.ClassService", "wsched.v1.SettingsService",
                           "wsched.v1.InventoryService", "wsched.v1.PlacementService",
                           "wsched.v1.ScalingService"}) {
    const auto* service = pool->FindServiceByName(name);
    ASSERT_NE(service, nullptr);
    for (int i = 0; i < service->method_count(); ++i) {
      served.push_back(absl::StrCat("/", name, "/", service->method(i)->name()));
    }
  }
  ASSERT_EQ(served.size(), ExpectedDecisions().size()) << "an RPC was added or removed";
  Authenticator auth = EveryRole();
  int checked = 0;
  for (const std::string& method : served) {
    auto expected = ExpectedDecisions().find(method);
    ASSERT_NE(expected, ExpectedDecisions().end()) << method << " has no expected decision";
    for (Role role : kAllRoles) {
      CallerCredentials by_token;
      by_token.authorization =
          absl::StrCat("Bearer token-of-role-", RoleName(role), "-0123456789");
      CallerCredentials by_cert;
      by_cert.certificate_identities = {absl::StrCat("node-1.", RoleName(role), ".certs.example")};
      for (const CallerCredentials& caller : {by_token, by_cert}) {
        auto principal = auth.Authorize(caller, method);
        bool allowed = expected->second.count(role) > 0;
        EXPECT_EQ(principal.ok(), allowed) << method << " as " << RoleName(role) << ": "
                                           << principal.status();
        if (!allowed) {
          EXPECT_EQ(principal.status().code(), absl::StatusCode::kPermissionDenied) << method;
          EXPECT_THAT(std::string(principal.status().message()), HasSubstr("may not call"));
        }
        ++checked;
      }
    }
  }
  EXPECT_EQ(checked, 38 * 5 * 2);
}

TEST(Authenticator, UnknownCallersAreUnauthenticated) {
  Authenticator auth = EveryRole();
  const std::string method = "/wsched.v1.ClassService/ListClasses";
  CallerCredentials nobody;
  EXPECT_THAT(std::string(auth.Authorize(nobody, method).status().message()),
              HasSubstr("missing authorization metadata (Bearer token) or client certificate"));
  CallerCredentials wrong_token;
  wrong_token.authorization = "Bearer not-a-token-of-this-server-0000";
  EXPECT_EQ(auth.Authorize(wrong_token, method).status().code(),
            absl::StatusCode::kUnauthenticated);
  CallerCredentials not_bearer;
  not_bearer.authorization = "Basic dXNlcjpwYXNz";
  EXPECT_THAT(std::string(auth.Authorize(not_bearer, method).status().message()),
              HasSubstr("Bearer <token>"));
  CallerCredentials stranger;
  stranger.certificate_identities = {"laptop.example"};
  auto refused = auth.Authorize(stranger, method);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kUnauthenticated);
  EXPECT_THAT(std::string(refused.status().message()),
              HasSubstr("client certificate identity laptop.example is not in the identities"));
}

TEST(Authenticator, AWrongTokenIsNotRescuedByACertificate) {
  Authenticator auth = EveryRole();
  CallerCredentials both;
  both.authorization = "Bearer not-a-token-of-this-server-0000";
  both.certificate_identities = {"node-1.admin.certs.example"};
  EXPECT_EQ(auth.Authorize(both, "/wsched.v1.ClassService/ListClasses").status().code(),
            absl::StatusCode::kUnauthenticated);
}

TEST(Authenticator, ScopesComeFromTheMatchingEntry) {
  Authenticator auth = EveryRole();
  CallerCredentials node;
  node.certificate_identities = {"node-9.agent.certs.example"};
  auto principal = auth.Authorize(node, "/wsched.v1.InventoryService/Heartbeat");
  ASSERT_TRUE(principal.ok());
  EXPECT_EQ(principal->name, "c-agent/node-9.agent.certs.example");
  EXPECT_EQ(principal->node, "node-9");
  EXPECT_TRUE(principal->SpeaksForNode("node-9"));
  EXPECT_FALSE(principal->SpeaksForNode("node-1"));
  EXPECT_TRUE(principal->CoversPool("gpu-h100"));
  EXPECT_FALSE(principal->CoversPool("gpu-a100"));
  EXPECT_TRUE(principal->ConcurrencyLimited());
}

TEST(Authenticator, ATokenTheFileDoesNotListMayBeANodesOwn) {
  Authenticator auth = EveryRole();
  const TokenDigest node_token = Sha256("the-token-node-7-made-for-itself-000000");
  NodeTokenLookup lookup = [&](const TokenDigest& digest) -> std::optional<NodeTokenOwner> {
    if (!DigestsEqual(digest, node_token)) return std::nullopt;
    return NodeTokenOwner{"node-7", "gpu-h100"};
  };
  CallerCredentials caller;
  caller.authorization = "Bearer the-token-node-7-made-for-itself-000000";
  const std::string heartbeat = "/wsched.v1.InventoryService/Heartbeat";
  EXPECT_EQ(auth.Authorize(caller, heartbeat).status().code(), absl::StatusCode::kUnauthenticated)
      << "without the directory the token is unknown";
  auto principal = auth.Authorize(caller, heartbeat, &lookup);
  ASSERT_TRUE(principal.ok()) << principal.status();
  EXPECT_EQ(principal->name, "node/node-7");
  EXPECT_THAT(principal->credential, HasSubstr("node token sha256:"));
  EXPECT_TRUE(principal->SpeaksForNode("node-7"));
  EXPECT_FALSE(principal->SpeaksForNode("node-8"));
  EXPECT_EQ(principal->pools, std::set<std::string>{"gpu-h100"});
  // An agent, nothing more.
  EXPECT_EQ(auth.Authorize(caller, "/wsched.v1.InventoryService/CordonNode", &lookup).status().code(),
            absl::StatusCode::kPermissionDenied);
  caller.authorization = "Bearer nobody-issued-this-token-0000000000";
  EXPECT_EQ(auth.Authorize(caller, heartbeat, &lookup).status().code(),
            absl::StatusCode::kUnauthenticated);
}

TEST(Principal, NodeIdentityDecidesWhichNodesACredentialSpeaksFor) {
  Principal admin;
  admin.roles = {Role::kAdmin};
  EXPECT_TRUE(admin.SpeaksForNode("any"));
  Principal bound;
  bound.roles = {Role::kAgent};
  bound.node = "n1";
  EXPECT_TRUE(bound.SpeaksForNode("n1"));
  EXPECT_FALSE(bound.SpeaksForNode("n2"));
  Principal bootstrap;
  bootstrap.roles = {Role::kAgent};
  bootstrap.bootstrap = true;
  EXPECT_FALSE(bootstrap.SpeaksForNode("n1"));
  Principal shared;  // Only with --allow_shared_agent_credentials.
  shared.roles = {Role::kAgent};
  EXPECT_TRUE(shared.SpeaksForNode("n1"));
}

TEST(Principal, OnlyAgentsAndProjectOwnersAreConcurrencyLimited) {
  for (Role role : kAllRoles) {
    Principal principal;
    principal.roles = {role};
    EXPECT_EQ(principal.ConcurrencyLimited(),
              role == Role::kAgent || role == Role::kProjectOwner)
        << RoleName(role);
  }
}

}  // namespace
}  // namespace wsched::grpc_api
