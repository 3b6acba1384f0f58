// Node identity through the real wsched-server, a real PostgreSQL, the real
// wsched-agent and wschedctl (docs/security.md, "Node identity";
// docs/agent.md): agent credentials speak for one node, a pool's bootstrap
// token registers only new nodes and leaves each with a token of its own,
// and admins revoke and rotate those tokens. The server runs without
// --allow_shared_agent_credentials.
#include <google/protobuf/util/message_differencer.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <string>
#include <thread>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "google/rpc/error_details.pb.h"
#include "google/rpc/status.pb.h"
#include "gtest/gtest.h"
#include "server/grpc/channel_credentials.h"
#include "server/grpc/token_hash.h"
#include "tests/security_certs.h"
#include "tests/support/eventually.h"
#include "tests/support/fake_nodes.h"
#include "tests/support/rpc_details.h"
#include "tests/support/server_process.h"
#include "tests/support/test_database.h"
#include "wsched/v1/inventory.grpc.pb.h"

namespace wsched {
namespace {

using grpc::StatusCode;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kPool[] = "gpu-h100";
constexpr char kBootstrapToken[] = "bootstrap-gpu-h100-0123456789abcdef";
// `node: n1` / `node: n2` entries: static per-node tokens.
constexpr char kN1Token[] = "static-n1-token-0123456789abcdef";
constexpr char kN2Token[] = "static-n2-token-0123456789abcdef";

std::string Binary(const char* name) {
  std::string server = WSCHED_SERVER_BINARY;
  return server.substr(0, server.rfind('/') + 1) + name;
}

std::string Hex(const std::string& token) { return grpc_api::ToHex(grpc_api::Sha256(token)); }

bool Eventually(const std::function<bool()>& done, int seconds = 15) {
  return testing::Eventually(done, seconds);
}

struct TokensOptions {
  bool bootstrap = true;
  bool static_nodes = false;
  std::string identities;
};

std::string TokensYaml(const TokensOptions& options) {
  std::string yaml = absl::StrCat(
      "tokens:\n  - {name: test-admin, sha256: ", Hex(testing::kAdminToken), ", role: admin}\n");
  if (options.bootstrap) {
    absl::StrAppend(&yaml, "  - {name: h100-join, sha256: ", Hex(kBootstrapToken),
                    ", role: agent, pools: [", kPool, "], bootstrap: true}\n");
  }
  if (options.static_nodes) {
    absl::StrAppend(&yaml, "  - {name: n1-agent, sha256: ", Hex(kN1Token),
                    ", role: agent, pools: [", kPool, "], node: n1}\n",
                    "  - {name: n2-agent, sha256: ", Hex(kN2Token), ", role: agent, pools: [",
                    kPool, "], node: n2}\n");
  }
  if (!options.identities.empty()) absl::StrAppend(&yaml, "identities:\n", options.identities);
  return yaml;
}

// One caller's InventoryService calls: a bearer token, or none (a client
// certificate on the channel).
class Caller {
 public:
  Caller(std::shared_ptr<grpc::Channel> channel, std::string token)
      : stub_(v1::InventoryService::NewStub(std::move(channel))), token_(std::move(token)) {}

  grpc::Status Register(const v1::NodeInfo& node, const std::string& token_sha256 = "") const {
    v1::RegisterNodeRequest request;
    *request.mutable_node() = node;
    request.set_node_token_sha256(token_sha256);
    v1::RegisterNodeResponse response;
    auto context = Context();
    return stub_->RegisterNode(context.get(), request, &response);
  }
  grpc::Status Heartbeat(const std::string& node, const std::string& kernel = "") const {
    v1::HeartbeatRequest request;
    request.set_node_name(node);
    request.set_kernel_version(kernel);
    v1::HeartbeatResponse response;
    auto context = Context();
    return stub_->Heartbeat(context.get(), request, &response);
  }
  grpc::Status GetNode(const std::string& node, v1::Node* out = nullptr) const {
    v1::NodeNameRequest request;
    request.set_node_name(node);
    v1::Node response;
    auto context = Context();
    grpc::Status status = stub_->GetNode(context.get(), request, &response);
    if (out != nullptr) *out = response;
    return status;
  }
  grpc::Status ReportInstall(const std::string& node, const std::string& kernel,
                             v1::DriverInstallOutcome outcome) const {
    v1::ReportDriverInstallRequest request;
    request.set_node_name(node);
    request.set_kernel_version(kernel);
    request.set_outcome(outcome);
    request.set_detail("exit status 1");
    request.set_log_tail("make: *** [nvidia.ko] Error 1");
    v1::Node response;
    auto context = Context();
    return stub_->ReportDriverInstall(context.get(), request, &response);
  }
  grpc::Status RemoveNode(const std::string& node) const {
    v1::NodeNameRequest request;
    request.set_node_name(node);
    v1::Empty response;
    auto context = Context();
    return stub_->RemoveNode(context.get(), request, &response);
  }

 private:
  std::unique_ptr<grpc::ClientContext> Context() const {
    auto context = std::make_unique<grpc::ClientContext>();
    context->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    if (!token_.empty()) testing::Authorize(*context, token_);
    return context;
  }

  std::unique_ptr<v1::InventoryService::Stub> stub_;
  std::string token_;
};

v1::Node AdminView(const Caller& admin, const std::string& node) {
  v1::Node out;
  grpc::Status status = admin.GetNode(node, &out);
  EXPECT_TRUE(status.ok()) << node << ": " << status.error_message();
  return out;
}

// `mine`'s credential registers, heartbeats and reads node `own`, and is
// refused NOT_THIS_NODE for `other` (registered already), which stays as
// it was.
void ExpectBoundToItsNode(const Caller& mine, const std::string& own, const std::string& other,
                          const Caller& admin) {
  SCOPED_TRACE(absl::StrCat(own, " vs ", other));
  grpc::Status status = mine.Register(testing::FakeGpuNode(own, kPool));
  EXPECT_TRUE(status.ok()) << status.error_message();
  status = mine.Heartbeat(own);
  EXPECT_TRUE(status.ok()) << status.error_message();
  v1::Node node;
  status = mine.GetNode(own, &node);
  EXPECT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(node.info().pool(), kPool);
  // Its own driver installs: the agent reports them itself.
  status = mine.ReportInstall(own, node.info().kernel_version(), v1::DRIVER_INSTALL_OUTCOME_STARTED);
  EXPECT_TRUE(status.ok()) << status.error_message();

  const v1::Node before = AdminView(admin, other);
  testing::FakeNodeOptions smaller;
  smaller.gpus = 2;
  for (const grpc::Status& refused :
       {mine.Register(testing::FakeGpuNode(other, kPool, smaller)),
        mine.Heartbeat(other, "6.1.0-evil"), mine.GetNode(other),
        mine.ReportInstall(other, before.info().kernel_version(),
                           v1::DRIVER_INSTALL_OUTCOME_FAILED)}) {
    EXPECT_EQ(refused.error_code(), StatusCode::PERMISSION_DENIED) << refused.error_message();
    EXPECT_EQ(testing::ReasonOf(refused), "NOT_THIS_NODE") << refused.error_message();
    EXPECT_THAT(refused.error_message(), HasSubstr(absl::StrCat("not for ", other)));
  }
  const v1::Node after = AdminView(admin, other);
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(before, after))
      << before.DebugString() << "\nvs\n"
      << after.DebugString();
}

std::optional<double> Metric(int port, const std::string& series) {
  std::string text = testing::HttpGet(port, "/metrics");
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (absl::ConsumePrefix(&line, series) && absl::ConsumePrefix(&line, " ")) {
      return std::stod(std::string(line));
    }
  }
  return std::nullopt;
}

struct CommandResult {
  int code = -1;
  std::string out;  // stdout
  std::string err;  // stderr
};

CommandResult RunCommand(const std::string& command) {
  char dir[] = "/tmp/wsched-node-identity-run-XXXXXX";
  if (mkdtemp(dir) == nullptr) return {};
  const std::string out = absl::StrCat(dir, "/out"), err = absl::StrCat(dir, "/err");
  int status = std::system(absl::StrCat(command, " >", out, " 2>", err).c_str());
  CommandResult run{WIFEXITED(status) ? WEXITSTATUS(status) : -1, testing::ReadWholeFile(out),
                    testing::ReadWholeFile(err)};
  std::remove(out.c_str());
  std::remove(err.c_str());
  rmdir(dir);
  return run;
}

mode_t Mode(const std::string& path) {
  struct stat info {};
  EXPECT_EQ(stat(path.c_str(), &info), 0) << path;
  return info.st_mode & 07777;
}

class NodeIdentityTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/wsched-node-identity-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
    bootstrap_file_ = dir_ + "/bootstrap-token";
    std::ofstream(bootstrap_file_) << kBootstrapToken << "\n";
    chmod(bootstrap_file_.c_str(), 0600);
  }
  void TearDown() override { std::system(absl::StrCat("rm -rf '", dir_, "'").c_str()); }

  void Start(const TokensOptions& tokens, std::vector<std::string> flags = {},
             bool metrics = false) {
    testing::ServerConfig config{db_.url(), testing::SourcePath("classes/saas.yaml"),
                                 std::move(flags)};
    config.tokens_yaml = TokensYaml(tokens);
    config.shared_agent_credentials = false;
    config.metrics = metrics;
    // The bootstrap entry's removal is picked up within this.
    config.extra_flags.push_back("--auth_reload_interval=200ms");
    server_ = std::make_unique<testing::ServerProcess>(config);
    ASSERT_TRUE(server_->started());
  }

  Caller As(const std::string& token) const { return Caller(server_->channel(), token); }

  // wsched-agent --once for node `node` of the fake 8-GPU tree, with
  // `flags` (the credential).
  CommandResult Agent(const std::string& node, const std::string& flags) const {
    return RunCommand(
        absl::StrCat(Binary("wsched-agent"), " --once --nvidia_smi= --cdi_dir= --kmsg= --root=",
                     testing::SourcePath("tests/sysfs/h100-8gpu"), " --node_name=", node,
                     " --pool=", kPool, " --server=", server_->address(), " ", flags));
  }
  CommandResult Bootstrap(const std::string& node, const std::string& state_dir) const {
    return Agent(
        node, absl::StrCat("--bootstrap_token_file=", bootstrap_file_, " --state_dir=", state_dir));
  }
  CommandResult Ctl(const std::string& args) const {
    return RunCommand(absl::StrCat(Binary("wschedctl"), " --server=", server_->address(),
                                   " --token=", testing::kAdminToken, " ", args));
  }

  testing::TestDatabase db_;
  std::unique_ptr<testing::ServerProcess> server_;
  std::string dir_;
  std::string bootstrap_file_;
};

TEST_F(NodeIdentityTest, CertificatesAndStaticTokensSpeakForTheirNodeOnly) {
  testing::TestCa ca("wsched node identity CA");
  testing::IssuedCert server_cert =
      ca.Issue("server", "wsched-server", "DNS:localhost,IP:127.0.0.1");
  testing::IssuedCert node1 =
      ca.Issue("node-1", "node-1", absl::StrCat("DNS:node-1.", kPool, ".nodes.test"));
  testing::IssuedCert node2 =
      ca.Issue("node-2", "node-2", absl::StrCat("DNS:node-2.", kPool, ".nodes.test"));
  ASSERT_TRUE(ca.ok());
  Start({.bootstrap = false,
         .static_nodes = true,
         .identities = "  - {name: nodes, identity: \"{node}.{pool}.nodes.test\", role: agent}\n"},
        {"--tls_cert=" + server_cert.cert, "--tls_key=" + server_cert.key,
         "--tls_client_ca=" + ca.ca_cert()},
        /*metrics=*/true);
  const std::string refusals = "wsched_node_identity_refusals_total{reason=\"not_this_node\"}";
  EXPECT_EQ(Metric(server_->metrics_port(), refusals), 0.0);

  auto tls = [&](const testing::IssuedCert* cert) {
    grpc_api::ClientTlsOptions options;
    options.ca_path = ca.ca_cert();
    if (cert != nullptr) {
      options.cert_path = cert->cert;
      options.key_path = cert->key;
    }
    auto channel = grpc_api::CreateClientChannel(server_->address(), options);
    EXPECT_TRUE(channel.ok()) << channel.status();
    return *channel;
  };
  Caller admin(tls(nullptr), testing::kAdminToken);
  Caller as_node1(tls(&node1), "");
  Caller as_node2(tls(&node2), "");
  ASSERT_TRUE(as_node2.Register(testing::FakeGpuNode("node-2", kPool)).ok());
  ExpectBoundToItsNode(as_node1, "node-1", "node-2", admin);

  Caller as_n1(tls(nullptr), kN1Token);
  Caller as_n2(tls(nullptr), kN2Token);
  ASSERT_TRUE(as_n2.Register(testing::FakeGpuNode("n2", kPool)).ok());
  ExpectBoundToItsNode(as_n1, "n1", "n2", admin);

  // Four refusals per credential, each counted once.
  EXPECT_EQ(Metric(server_->metrics_port(), refusals), 8.0);
}

TEST_F(NodeIdentityTest, TheAgentBootstrapsOnceAndThenUsesItsOwnToken) {
  Start({.bootstrap = true});
  const std::string state1 = dir_ + "/state-1";
  CommandResult first = Bootstrap("node-1", state1);
  ASSERT_EQ(first.code, 0) << first.err;
  EXPECT_THAT(first.err, HasSubstr("bootstrap: the server stored this node's token"));
  const std::string token_path = state1 + "/node-token";
  EXPECT_EQ(Mode(state1), 0700u);
  EXPECT_EQ(Mode(token_path), 0600u);
  const std::string node_token(absl::StripAsciiWhitespace(testing::ReadWholeFile(token_path)));
  ASSERT_EQ(node_token.size(), 43u);

  // The node token is node-1's credential.
  v1::Node node;
  grpc::Status status = As(node_token).GetNode("node-1", &node);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(node.info().pool(), kPool);
  EXPECT_EQ(node.info().gpus_size(), 8);

  // The bootstrap token registers new nodes, nothing else.
  status = As(kBootstrapToken).Heartbeat("node-1");
  EXPECT_EQ(status.error_code(), StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(testing::ReasonOf(status), "BOOTSTRAP_REGISTERS_ONLY") << status.error_message();

  // Another machine with the same bootstrap token and name is refused, and
  // node-1 stays as it was.
  Caller admin = As(testing::kAdminToken);
  const v1::Node before = AdminView(admin, "node-1");
  CommandResult impostor = Bootstrap("node-1", dir_ + "/state-2");
  EXPECT_NE(impostor.code, 0);
  EXPECT_THAT(impostor.err, HasSubstr("BOOTSTRAP_NODE_EXISTS"));
  EXPECT_THAT(impostor.err, HasSubstr("wschedctl node rotate-credential node-1"));
  EXPECT_TRUE(
      google::protobuf::util::MessageDifferencer::Equals(before, AdminView(admin, "node-1")));
  EXPECT_TRUE(As(node_token).Heartbeat("node-1").ok());

  // Without the bootstrap entry the agent still registers: with its own token.
  std::ofstream(server_->tokens_path() + ".new") << TokensYaml({.bootstrap = false});
  ASSERT_EQ(std::rename((server_->tokens_path() + ".new").c_str(), server_->tokens_path().c_str()),
            0);
  ASSERT_TRUE(Eventually([&] {
    return As(kBootstrapToken).Heartbeat("node-1").error_code() == StatusCode::UNAUTHENTICATED;
  }));
  CommandResult again = Bootstrap("node-1", state1);
  EXPECT_EQ(again.code, 0) << again.err;
  EXPECT_THAT(again.err, Not(HasSubstr("bootstrap")));
  EXPECT_EQ(absl::StripAsciiWhitespace(testing::ReadWholeFile(token_path)), node_token);
}

TEST_F(NodeIdentityTest, RevokedRotatedAndRemovedCredentials) {
  Start({.bootstrap = true});
  const std::string state = dir_ + "/state";
  CommandResult joined = Bootstrap("node-1", state);
  ASSERT_EQ(joined.code, 0) << joined.err;
  const std::string token_path = state + "/node-token";
  const std::string first(absl::StripAsciiWhitespace(testing::ReadWholeFile(token_path)));
  ASSERT_TRUE(As(first).Heartbeat("node-1").ok());

  CommandResult revoked = Ctl("node revoke-credential node-1");
  ASSERT_EQ(revoked.code, 0) << revoked.err;
  EXPECT_THAT(revoked.out, HasSubstr("credential revoked"));
  EXPECT_EQ(As(first).Heartbeat("node-1").error_code(), StatusCode::UNAUTHENTICATED);
  // Its agent cannot bootstrap the name back: it exists.
  CommandResult refused = Bootstrap("node-1", state);
  EXPECT_NE(refused.code, 0);
  EXPECT_THAT(refused.err, HasSubstr("BOOTSTRAP_NODE_EXISTS"));

  CommandResult rotated = Ctl("node rotate-credential node-1");
  ASSERT_EQ(rotated.code, 0) << rotated.err;
  const std::string second(absl::StripAsciiWhitespace(rotated.out));
  ASSERT_EQ(second.size(), 43u) << rotated.out;
  EXPECT_TRUE(As(second).Heartbeat("node-1").ok());
  EXPECT_EQ(As(first).Heartbeat("node-1").error_code(), StatusCode::UNAUTHENTICATED);
  // Installed as the agent's node token, as the command says, it registers.
  { std::ofstream(token_path, std::ios::trunc) << rotated.out; }
  CommandResult installed = Bootstrap("node-1", state);
  EXPECT_EQ(installed.code, 0) << installed.err;
  EXPECT_THAT(installed.err, Not(HasSubstr("bootstrap")));

  // Removing the node voids its token; the bootstrap token may then
  // register the name again, and the agent does so with the token it has.
  Caller admin = As(testing::kAdminToken);
  ASSERT_TRUE(admin.RemoveNode("node-1").ok());
  EXPECT_EQ(As(second).Heartbeat("node-1").error_code(), StatusCode::UNAUTHENTICATED);
  CommandResult back = Bootstrap("node-1", state);
  EXPECT_EQ(back.code, 0) << back.err;
  EXPECT_THAT(back.err, HasSubstr("registering with the bootstrap token and the same node token"));
  EXPECT_TRUE(As(second).Heartbeat("node-1").ok());
  EXPECT_EQ(AdminView(admin, "node-1").info().gpus_size(), 8);
}

// n1's own credential cannot take n2's cloud instance or GPUs: an
// actuator that scales n1 down would end n2's instance.
TEST_F(NodeIdentityTest, ARegistrationCannotClaimAnotherNodesProviderIdOrGpus) {
  Start({.bootstrap = false, .static_nodes = true});
  Caller admin(server_->channel(), testing::kAdminToken);
  Caller as_n1(server_->channel(), kN1Token);
  Caller as_n2(server_->channel(), kN2Token);
  v1::NodeInfo n2 = testing::FakeGpuNode("n2", kPool);
  n2.set_provider_id("aws:///us-east-1a/i-0n2");
  ASSERT_TRUE(as_n2.Register(n2).ok());
  const v1::Node n2_before = AdminView(admin, "n2");

  struct Case {
    std::string what;
    std::function<void(v1::NodeInfo&)> claim;
    std::string field, claimed;
  };
  const std::vector<Case> cases = {
      {"provider id", [&](v1::NodeInfo& n) { n.set_provider_id(n2.provider_id()); },
       "node.provider_id", "provider_id"},
      {"one GPU", [&](v1::NodeInfo& n) { n.mutable_gpus(3)->set_uuid(n2.gpus(5).uuid()); },
       "node.gpus.uuid", n2.gpus(5).uuid()},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    v1::NodeInfo n1 = testing::FakeGpuNode("n1", kPool);
    n1.set_provider_id("aws:///us-east-1a/i-0n1");
    c.claim(n1);
    grpc::Status refused = as_n1.Register(n1);
    EXPECT_EQ(refused.error_code(), StatusCode::FAILED_PRECONDITION) << refused.error_message();
    EXPECT_EQ(testing::ReasonOf(refused), "NODE_IDENTITY_CLAIMED");
    EXPECT_THAT(refused.error_message(), HasSubstr(c.field));
    EXPECT_THAT(refused.error_message(), HasSubstr("claimed by node n2"));
    v1::Node absent;
    EXPECT_EQ(admin.GetNode("n1", &absent).error_code(), StatusCode::NOT_FOUND)
        << "a refused registration changes nothing";
  }
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(n2_before, AdminView(admin, "n2")));

  // Its own identity, registered again, is its own; once n2 is removed its
  // identity is free.
  v1::NodeInfo n1 = testing::FakeGpuNode("n1", kPool);
  n1.set_provider_id("aws:///us-east-1a/i-0n1");
  ASSERT_TRUE(as_n1.Register(n1).ok());
  EXPECT_TRUE(as_n1.Register(n1).ok());
  ASSERT_TRUE(admin.RemoveNode("n2").ok());
  n1.set_provider_id(n2.provider_id());
  grpc::Status taken = as_n1.Register(n1);
  EXPECT_TRUE(taken.ok()) << taken.error_message();
}

}  // namespace
}  // namespace wsched
