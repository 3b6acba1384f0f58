#include "server/grpc/auth.h"

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
              HasSubstr("tokens[0].token: must be >= 16 characters"));
  EXPECT_THAT(std::string(Authenticator::FromYaml(
                              "tokens: [{token: aaaaaaaaaaaaaaaaaaaa, role: root}]")
                              .status()
                              .message()),
              HasSubstr("tokens[0].role: unknown role \"root\""));
  EXPECT_THAT(std::string(Authenticator::FromYaml(
                              "tokens: [{token: aaaaaaaaaaaaaaaaaaaa, role: project-owner}]")
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

}  // namespace
}  // namespace wsched::grpc_api
