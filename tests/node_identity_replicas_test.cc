// Node credentials across replicas (docs/security.md, "Node identity"): a
// node token issued through one replica authenticates on another once it
// has applied the change feed, and a revocation made on one replica holds
// on every other the same way; the replica that made the change refuses
// the revoked token on the very next call.
#include <chrono>
#include <functional>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "server/grpc/token_hash.h"
#include "tests/support/eventually.h"
#include "tests/support/fake_nodes.h"
#include "tests/support/server_process.h"
#include "tests/support/test_database.h"
#include "wsched/v1/inventory.grpc.pb.h"

namespace wsched {
namespace {

constexpr char kBootstrapToken[] = "bootstrap-replicas-0123456789abcdef";
constexpr char kNodeToken[] = "node-made-token-of-rep-1-0123456789";

bool Eventually(const std::function<bool()>& done, int seconds = 10) {
  return testing::Eventually(done, seconds);
}

grpc::StatusCode HeartbeatAs(const std::shared_ptr<grpc::Channel>& channel,
                             const std::string& token, const std::string& node) {
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
  testing::Authorize(context, token);
  v1::HeartbeatRequest request;
  request.set_node_name(node);
  v1::HeartbeatResponse response;
  return v1::InventoryService::NewStub(channel)->Heartbeat(&context, request, &response).error_code();
}

testing::ServerConfig Config(const std::string& url) {
  testing::ServerConfig config{url, testing::SourcePath("classes/saas.yaml")};
  config.shared_agent_credentials = false;
  config.tokens_yaml = absl::StrCat(
      "tokens:\n  - {name: ops, token: ", testing::kAdminToken, ", role: admin}\n",
      "  - {name: join, token: ", kBootstrapToken,
      ", role: agent, pools: [gpu-h100], bootstrap: true}\n");
  return config;
}

TEST(NodeIdentityReplicas, ATokenIssuedOnOneReplicaWorksOnAnotherAndARevocationHoldsOnBoth) {
  testing::TestDatabase db;
  testing::ServerProcess a(Config(db.url()));
  testing::ServerProcess b(Config(db.url()));
  ASSERT_TRUE(a.started() && b.started());

  {
    grpc::ClientContext context;
    testing::Authorize(context, kBootstrapToken);
    v1::RegisterNodeRequest request;
    *request.mutable_node() = testing::FakeGpuNode("rep-1", "gpu-h100");
    request.set_node_token_sha256(grpc_api::ToHex(grpc_api::Sha256(kNodeToken)));
    v1::RegisterNodeResponse response;
    grpc::Status status =
        v1::InventoryService::NewStub(a.channel())->RegisterNode(&context, request, &response);
    ASSERT_TRUE(status.ok()) << status.error_message();
    EXPECT_TRUE(response.node_credential_issued());
  }
  EXPECT_EQ(HeartbeatAs(a.channel(), kNodeToken, "rep-1"), grpc::StatusCode::OK);
  EXPECT_TRUE(Eventually([&] { return HeartbeatAs(b.channel(), kNodeToken, "rep-1") == grpc::StatusCode::OK; }))
      << "replica B never learned the node token";

  {
    grpc::ClientContext context;
    testing::Authorize(context, testing::kAdminToken);
    v1::RevokeNodeCredentialRequest request;
    request.set_node_name("rep-1");
    v1::RevokeNodeCredentialResponse response;
    grpc::Status status =
        v1::InventoryService::NewStub(b.channel())->RevokeNodeCredential(&context, request, &response);
    ASSERT_TRUE(status.ok()) << status.error_message();
    EXPECT_TRUE(response.revoked());
  }
  // The replica that revoked: the very next call.
  EXPECT_EQ(HeartbeatAs(b.channel(), kNodeToken, "rep-1"), grpc::StatusCode::UNAUTHENTICATED);
  // The other: once it applied the entry.
  EXPECT_TRUE(Eventually([&] {
    return HeartbeatAs(a.channel(), kNodeToken, "rep-1") == grpc::StatusCode::UNAUTHENTICATED;
  })) << "replica A still accepts a revoked token";
}

}  // namespace
}  // namespace wsched
