// Transport security and credentials through the real wsched-server and a
// real PostgreSQL: TLS, mutual TLS with certificate identities mapped to
// roles, certificates and tokens replaced while the server runs, hashed
// tokens, the request size limit and the per-principal concurrency limit.
// Certificates come from a throwaway CA made with openssl at test time.
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <future>
#include <thread>

#include <pqxx/pqxx>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "gtest/gtest.h"
#include "server/grpc/channel_credentials.h"
#include "tests/security_certs.h"
#include "tests/support/eventually.h"
#include "tests/support/fake_nodes.h"
#include "tests/support/server_process.h"
#include "tests/support/test_database.h"
#include "tests/support/workspaces.h"
#include "wsched/v1/classes.grpc.pb.h"
#include "wsched/v1/inventory.grpc.pb.h"
#include "wsched/v1/placement.grpc.pb.h"
#include "wsched/v1/settings.grpc.pb.h"

namespace wsched {
namespace {

using ::testing::HasSubstr;
using grpc::StatusCode;

constexpr char kHostSans[] = "DNS:localhost,IP:127.0.0.1";
constexpr char kNodeDomain[] = "gpu-h100.nodes.test";

std::string Binary(const char* name) {
  std::string server = WSCHED_SERVER_BINARY;
  return server.substr(0, server.rfind('/') + 1) + name;
}

bool Eventually(const std::function<bool()>& done, int seconds = 15) {
  return testing::Eventually(done, seconds);
}

// printf %s TOKEN | sha256sum: what an operator would run, independent of
// the server's own hashing.
std::string Sha256Hex(const std::string& token) {
  std::string command = absl::StrCat("printf %s '", token, "' | sha256sum");
  FILE* pipe = popen(command.c_str(), "r");
  char hex[65] = {};
  if (pipe == nullptr || fread(hex, 1, 64, pipe) != 64) ADD_FAILURE() << "sha256sum failed";
  if (pipe != nullptr) pclose(pipe);
  return hex;
}

// The support file's tokens (one per role) plus `identities`.
std::string TokensYaml(const std::string& identities = "") {
  return absl::StrCat(
      "tokens:\n",
      "  - {name: test-admin, token: ", testing::kAdminToken, ", role: admin}\n",
      "  - {name: test-cp, sha256: ", Sha256Hex(testing::kControlPlaneToken),
      ", role: control-plane}\n",
      "  - {name: owner-p42, token: ", testing::kOwnerToken,
      ", role: project-owner, orgs: [o-1], projects: [p-42]}\n",
      "  - {name: test-agent, token: ", testing::kAgentToken, ", role: agent}\n",
      identities.empty() ? "" : absl::StrCat("identities:\n", identities));
}

// A fresh connection each time (own subchannel pool), so every call below
// makes a new TLS handshake with whatever certificates are current.
std::shared_ptr<grpc::Channel> Connect(const std::string& address,
                                       const grpc_api::ClientTlsOptions& tls) {
  static int unique = 0;
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  args.SetInt("wsched.test.connection", ++unique);
  auto channel = grpc_api::CreateClientChannel(address, tls, args);
  EXPECT_TRUE(channel.ok()) << channel.status();
  return channel.ok() ? *channel : nullptr;
}

struct CallResult {
  grpc::Status status;
  std::string server_cn;  // Common name of the certificate the server presented.
};

CallResult ListClasses(const std::shared_ptr<grpc::Channel>& channel, const std::string& token) {
  auto stub = v1::ClassService::NewStub(channel);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
  if (!token.empty()) testing::Authorize(context, token);
  v1::ListClassesResponse response;
  CallResult result;
  result.status = stub->ListClasses(&context, v1::ListClassesRequest(), &response);
  for (const auto& cn : context.auth_context()->FindPropertyValues("x509_common_name")) {
    result.server_cn.assign(cn.data(), cn.size());
  }
  return result;
}

grpc::Status Register(const std::shared_ptr<grpc::Channel>& channel, const v1::NodeInfo& node) {
  auto stub = v1::InventoryService::NewStub(channel);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
  v1::RegisterNodeRequest request;
  *request.mutable_node() = node;
  v1::RegisterNodeResponse response;
  return stub->RegisterNode(&context, request, &response);
}

// Runs a command; returns its exit code, with stdout+stderr in *output.
int RunCommand(const std::string& command, std::string* output) {
  char path[] = "/tmp/wsched-security-run-XXXXXX";
  int fd = mkstemp(path);
  close(fd);
  int status = std::system(absl::StrCat(command, " >", path, " 2>&1").c_str());
  *output = testing::ReadWholeFile(path);
  std::remove(path);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// Replaces a file the way rotation tools do: write aside, rename over.
void Replace(const std::string& from, const std::string& to) {
  std::string tmp = to + ".tmp";
  std::ofstream(tmp) << testing::ReadWholeFile(from);
  ASSERT_EQ(std::rename(tmp.c_str(), to.c_str()), 0);
}

class SecurityTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(ca_.ok());
    server_cert_ = ca_.Issue("server", "wsched-server-1", kHostSans);
    ASSERT_TRUE(ca_.ok());
  }

  std::vector<std::string> TlsFlags(bool mutual) const {
    std::vector<std::string> flags = {"--tls_cert=" + server_cert_.cert,
                                      "--tls_key=" + server_cert_.key,
                                      "--tls_reload_interval=1s"};
    if (mutual) flags.push_back("--tls_client_ca=" + ca_.ca_cert());
    return flags;
  }

  grpc_api::ClientTlsOptions Trusting() const {
    grpc_api::ClientTlsOptions tls;
    tls.ca_path = ca_.ca_cert();
    return tls;
  }

  grpc_api::ClientTlsOptions WithCert(const testing::IssuedCert& cert) const {
    grpc_api::ClientTlsOptions tls = Trusting();
    tls.cert_path = cert.cert;
    tls.key_path = cert.key;
    return tls;
  }

  testing::TestDatabase db_;
  testing::TestCa ca_{"wsched test CA"};
  testing::IssuedCert server_cert_;
};

TEST_F(SecurityTest, TlsServerRefusesPlaintextAndServesTokensOverTls) {
  testing::ServerConfig config{db_.url()};
  config.extra_flags = TlsFlags(/*mutual=*/false);
  testing::ServerProcess server(config);
  ASSERT_TRUE(server.started());

  auto plaintext = grpc::CreateChannel(server.address(), grpc::InsecureChannelCredentials());
  EXPECT_EQ(ListClasses(plaintext, testing::kAdminToken).status.error_code(),
            StatusCode::UNAVAILABLE);

  auto tls = Connect(server.address(), Trusting());
  CallResult ok = ListClasses(tls, testing::kAdminToken);
  EXPECT_TRUE(ok.status.ok()) << ok.status.error_message();
  EXPECT_EQ(ok.server_cn, "wsched-server-1");
  // The hashed entry works the same as a clear-text one.
  EXPECT_TRUE(ListClasses(tls, testing::kControlPlaneToken).status.ok());
  EXPECT_EQ(ListClasses(tls, "").status.error_code(), StatusCode::UNAUTHENTICATED);

  // A client that does not trust the server's CA, or reaches it under a name
  // the certificate does not carry, does not connect.
  testing::TestCa other("another CA");
  grpc_api::ClientTlsOptions untrusting;
  untrusting.ca_path = other.ca_cert();
  EXPECT_EQ(ListClasses(Connect(server.address(), untrusting), testing::kAdminToken)
                .status.error_code(),
            StatusCode::UNAVAILABLE);
  grpc_api::ClientTlsOptions wrong_name = Trusting();
  wrong_name.server_name = "wsched.elsewhere.example";
  EXPECT_EQ(ListClasses(Connect(server.address(), wrong_name), testing::kAdminToken)
                .status.error_code(),
            StatusCode::UNAVAILABLE);

  // wschedctl's --tls flags.
  std::string out;
  EXPECT_EQ(RunCommand(absl::StrCat(Binary("wschedctl"), " --server=", server.address(),
                             " --tls_ca=", ca_.ca_cert(), " --token=", testing::kAdminToken,
                             " classes"),
                &out),
            0)
      << out;
  EXPECT_EQ(RunCommand(absl::StrCat(Binary("wschedctl"), " --server=", server.address(),
                             " --token=", testing::kAdminToken, " classes"),
                &out),
            1)
      << "plaintext wschedctl against a TLS server: " << out;
}

TEST_F(SecurityTest, ClientCertificatesMapToRolesAndScopes) {
  testing::IssuedCert node1 =
      ca_.Issue("node-1", "ignored-cn", absl::StrCat("DNS:node-1.", kNodeDomain));
  testing::IssuedCert node2 =
      ca_.Issue("node-2", "ignored-cn", absl::StrCat("DNS:node-2.", kNodeDomain));
  testing::IssuedCert ops = ca_.Issue("ops", "ops-admin", "");  // CN only.
  testing::IssuedCert laptop = ca_.Issue("laptop", "laptop", "DNS:laptop.example");
  testing::TestCa other("another CA");
  testing::IssuedCert forged =
      other.Issue("forged", "forged", absl::StrCat("DNS:node-1.", kNodeDomain));
  ASSERT_TRUE(ca_.ok() && other.ok());

  testing::ServerConfig config{db_.url(), testing::SourcePath("classes/saas.yaml")};
  config.extra_flags = TlsFlags(/*mutual=*/true);
  config.tokens_yaml = TokensYaml(absl::StrCat(
      "  - {name: h100-nodes, identity: \"*.", kNodeDomain, "\", role: agent, pools: [gpu-h100]}\n",
      "  - {name: ops, identity: ops-admin, role: admin}\n"));
  testing::ServerProcess server(config);
  ASSERT_TRUE(server.started());

  // A node certificate is an agent of its pool, and nothing more.
  auto as_node1 = Connect(server.address(), WithCert(node1));
  grpc::Status registered = Register(as_node1, testing::FakeGpuNode("node-1", "gpu-h100"));
  EXPECT_TRUE(registered.ok()) << registered.error_message();
  grpc::Status other_pool = Register(as_node1, testing::FakeCpuNode("cpu-1", "general"));
  EXPECT_EQ(other_pool.error_code(), StatusCode::PERMISSION_DENIED);
  EXPECT_THAT(other_pool.error_message(), HasSubstr("not pool general"));
  CallResult not_agent_rpc = ListClasses(as_node1, "");
  EXPECT_EQ(not_agent_rpc.status.error_code(), StatusCode::PERMISSION_DENIED);
  EXPECT_THAT(not_agent_rpc.status.error_message(),
              HasSubstr(absl::StrCat("h100-nodes/node-1.", kNodeDomain, " may not call")));

  // A certificate without SANs is known by its CN.
  EXPECT_TRUE(ListClasses(Connect(server.address(), WithCert(ops)), "").status.ok());

  // A valid certificate whose identity is not listed: unauthenticated.
  CallResult stranger = ListClasses(Connect(server.address(), WithCert(laptop)), "");
  EXPECT_EQ(stranger.status.error_code(), StatusCode::UNAUTHENTICATED);
  EXPECT_THAT(stranger.status.error_message(), HasSubstr("laptop.example is not in the identities"));

  // A certificate from another CA fails the handshake, whatever it claims.
  EXPECT_EQ(ListClasses(Connect(server.address(), WithCert(forged)), testing::kAdminToken)
                .status.error_code(),
            StatusCode::UNAVAILABLE);

  // Clients without a certificate may still use tokens.
  EXPECT_TRUE(ListClasses(Connect(server.address(), Trusting()), testing::kAdminToken).status.ok());

  // The real agent, with its node certificate instead of a token.
  std::string out;
  int rc = RunCommand(absl::StrCat(Binary("wsched-agent"), " --once --nvidia_smi= --cdi_dir= --root=",
                            testing::SourcePath("tests/sysfs/h100-8gpu"),
                            " --node_name=node-2 --pool=gpu-h100 --server=", server.address(),
                            " --tls_ca_file=", ca_.ca_cert(), " --tls_cert_file=", node2.cert,
                            " --tls_key_file=", node2.key),
               &out);
  EXPECT_EQ(rc, 0) << out;
  // wschedctl with the admin certificate and no token.
  EXPECT_EQ(RunCommand(absl::StrCat(Binary("wschedctl"), " --server=", server.address(), " --tls_ca=",
                             ca_.ca_cert(), " --tls_cert=", ops.cert, " --tls_key=", ops.key,
                             " nodes"),
                &out),
            0)
      << out;
  EXPECT_THAT(out, HasSubstr("node-2"));
}

TEST_F(SecurityTest, RequiredClientCertificatesRefuseOtherClients) {
  testing::IssuedCert ops = ca_.Issue("ops", "ops-admin", "");
  testing::ServerConfig config{db_.url()};
  config.extra_flags = TlsFlags(/*mutual=*/true);
  config.extra_flags.push_back("--tls_require_client_cert");
  config.tokens_yaml = TokensYaml("  - {name: ops, identity: ops-admin, role: admin}\n");
  testing::ServerProcess server(config);
  ASSERT_TRUE(server.started());
  EXPECT_EQ(ListClasses(Connect(server.address(), Trusting()), testing::kAdminToken)
                .status.error_code(),
            StatusCode::UNAVAILABLE);
  EXPECT_TRUE(ListClasses(Connect(server.address(), WithCert(ops)), "").status.ok());
}

TEST_F(SecurityTest, ReplacedCertificateFilesAreServedWithoutRestart) {
  testing::ServerConfig config{db_.url()};
  config.extra_flags = TlsFlags(/*mutual=*/false);
  testing::ServerProcess server(config);
  ASSERT_TRUE(server.started());
  EXPECT_EQ(ListClasses(Connect(server.address(), Trusting()), testing::kAdminToken).server_cn,
            "wsched-server-1");

  testing::IssuedCert renewed = ca_.Issue("renewed", "wsched-server-2", kHostSans);
  ASSERT_TRUE(ca_.ok());
  // Each file is renamed into place as rotation tools do; the check below
  // asks only that the new pair is served within a few reload intervals.
  Replace(renewed.key, server_cert_.key);
  Replace(renewed.cert, server_cert_.cert);
  std::string served;
  EXPECT_TRUE(Eventually([&] {
    CallResult result = ListClasses(Connect(server.address(), Trusting()), testing::kAdminToken);
    served = result.server_cn;
    return result.status.ok() && served == "wsched-server-2";
  })) << "still serving " << served;
  EXPECT_GT(server.pid(), 0);  // The same process throughout.
}

// One placer, many front doors over TLS: the front door reaches the placer
// at its advertised address, verifies its certificate against
// --peer_tls_ca, and the placer commits the placement.
TEST_F(SecurityTest, AFrontDoorForwardsToThePlacerOverTls) {
  testing::ServerConfig config{db_.url(), testing::SourcePath("classes/saas.yaml")};
  config.extra_flags = TlsFlags(/*mutual=*/false);
  for (const char* flag : {"--advertise_host=127.0.0.1", "--placer_poll_interval=100ms"}) {
    config.extra_flags.push_back(flag);
  }
  config.extra_flags.push_back("--peer_tls_ca=" + ca_.ca_cert());
  testing::ServerProcess placer(config);  // Started first: it takes the lock.
  ASSERT_TRUE(placer.started());
  testing::ServerProcess front_door(config);
  ASSERT_TRUE(front_door.started());
  auto channel = Connect(front_door.address(), Trusting());
  testing::RegisterNode(channel, testing::FakeGpuNode("tls-1", "gpu-h100"));
  v1::Workspace out;
  grpc::Status placed = testing::PlaceAs(channel, "tls-w-1", "gpu-1x", &out);
  ASSERT_TRUE(placed.ok()) << placed.error_message() << front_door.Log();
  EXPECT_EQ(out.state(), v1::WORKSPACE_STATE_PLACED);
  EXPECT_EQ(db_.Query("SELECT string_agg(DISTINCT replica, ',') FROM change_log "
                      "WHERE 'tls-w-1' = ANY(ids)"),
            db_.Query("SELECT replica FROM placer"));
  EXPECT_EQ(db_.Query("SELECT address FROM placer"), absl::StrCat("127.0.0.1:", placer.port()));

  // A front door that does not trust the placer's CA does not hand it the
  // caller's token: the call fails, saying so, and nothing is placed.
  testing::TestCa other("another CA");
  testing::ServerConfig distrusting = config;
  distrusting.extra_flags.back() = "--peer_tls_ca=" + other.ca_cert();
  testing::ServerProcess wary(distrusting);
  ASSERT_TRUE(wary.started());
  grpc::Status refused =
      testing::PlaceAs(Connect(wary.address(), Trusting()), "tls-w-2", "gpu-1x", &out);
  EXPECT_EQ(refused.error_code(), StatusCode::UNAVAILABLE) << refused.error_message();
  EXPECT_THAT(refused.error_message(), HasSubstr("the placer (127.0.0.1:"));
  EXPECT_EQ(db_.Query("SELECT count(*) FROM workspaces WHERE id = 'tls-w-2'"), "0");
}

TEST_F(SecurityTest, BadTlsConfigurationIsAClearStartupError) {
  testing::IssuedCert other = ca_.Issue("other", "other", kHostSans);
  auto run = [&](std::vector<std::string> flags) {
    flags.push_back("--database_url=" + db_.url());
    flags.push_back("--allow_unauthenticated");
    flags.push_back("--metrics_listen=");
    return testing::RunServerToExit(flags);
  };
  auto mismatched = run({"--tls_cert=" + server_cert_.cert, "--tls_key=" + other.key});
  EXPECT_EQ(mismatched.exit_code, 1);
  EXPECT_THAT(mismatched.log, HasSubstr("--tls_key"));
  EXPECT_THAT(mismatched.log, HasSubstr("is not the key of the certificate"));
  auto missing = run({"--tls_cert=/nonexistent.crt", "--tls_key=" + server_cert_.key});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_THAT(missing.log, HasSubstr("--tls_cert: cannot read /nonexistent.crt"));
  auto ca_alone = run({"--tls_client_ca=" + ca_.ca_cert()});
  EXPECT_EQ(ca_alone.exit_code, 1);
  EXPECT_THAT(ca_alone.log, HasSubstr("need --tls_cert and --tls_key"));
}

TEST(TokensFile, ChangesApplyWithoutRestartByPollingAndBySighup) {
  const std::string first = "first-rotated-token-0123456789abcdef";
  const std::string second = "second-rotated-token-0123456789abcdef";
  auto admin = [](const std::string& token) {
    return absl::StrCat("tokens:\n  - {name: ops, sha256: ", Sha256Hex(token), ", role: admin}\n");
  };
  testing::TestDatabase db;
  for (bool by_signal : {false, true}) {
    SCOPED_TRACE(by_signal ? "SIGHUP" : "polling");
    testing::ServerConfig config{db.url()};
    config.tokens_yaml = admin(first);
    // Polling off for the SIGHUP run, so only the signal can explain a reload.
    config.extra_flags = {by_signal ? "--auth_reload_interval=0" : "--auth_reload_interval=200ms"};
    testing::ServerProcess server(config);
    ASSERT_TRUE(server.started());
    EXPECT_TRUE(ListClasses(server.channel(), first).status.ok());

    std::ofstream(server.tokens_path() + ".new") << admin(second);
    ASSERT_EQ(std::rename((server.tokens_path() + ".new").c_str(), server.tokens_path().c_str()),
              0);
    if (by_signal) server.Signal(SIGHUP);
    EXPECT_TRUE(Eventually([&] { return ListClasses(server.channel(), second).status.ok(); }));
    EXPECT_EQ(ListClasses(server.channel(), first).status.error_code(),
              StatusCode::UNAUTHENTICATED);

    // A broken file is refused and logged; the last good credentials stay.
    std::ofstream(server.tokens_path()) << "tokens: [{name: bad, token: short, role: admin}]\n";
    if (by_signal) server.Signal(SIGHUP);
    EXPECT_TRUE(Eventually([&] {
      return server.Log().find("tokens file rejected") != std::string::npos;
    }));
    EXPECT_TRUE(ListClasses(server.channel(), second).status.ok());
    EXPECT_THAT(server.Log(), HasSubstr("tokens[0] (bad).token: must be >= 22 characters"));
  }
}

TEST(TokensFile, WeakEntriesAreRefusedAtStartNamingTheEntry) {
  testing::TestDatabase db;
  char pattern[] = "/tmp/wsched-tokens-XXXXXX";
  ASSERT_NE(mkdtemp(pattern), nullptr);
  std::string path = absl::StrCat(pattern, "/tokens.yaml");
  std::ofstream(path) << "tokens:\n  - {name: ci, token: too-short-0123, role: admin}\n";
  auto exit = testing::RunServerToExit({"--database_url=" + db.url(), "--metrics_listen=",
                                        "--auth_tokens_file=" + path});
  EXPECT_EQ(exit.exit_code, 1);
  EXPECT_THAT(exit.log, HasSubstr("tokens[0] (ci).token: must be >= 22 characters"));

  std::ofstream(path) << "tokens:\n  - {name: ci, token: " << testing::kAdminToken
                      << ", role: admin}\n";
  exit = testing::RunServerToExit({"--database_url=" + db.url(), "--metrics_listen=",
                                   "--auth_tokens_file=" + path, "--require_hashed_tokens"});
  EXPECT_EQ(exit.exit_code, 1);
  EXPECT_THAT(exit.log, HasSubstr("clear-text tokens are refused"));
}

TEST(Limits, OversizeRequestsAreRefusedWithAClearError) {
  testing::TestDatabase db;
  testing::ServerConfig config{db.url()};
  config.extra_flags = {"--max_receive_message_size=65536"};
  testing::ServerProcess server(config);
  ASSERT_TRUE(server.started());
  auto stub = v1::ClassService::NewStub(server.channel());
  grpc::ClientContext context;
  testing::Authorize(context, testing::kAdminToken);
  v1::ApplyCatalogRequest request;
  request.set_yaml(std::string(100 << 10, '#'));
  v1::ApplyCatalogResponse response;
  grpc::Status status = stub->ApplyCatalog(&context, request, &response);
  EXPECT_EQ(status.error_code(), StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_THAT(status.error_message(), HasSubstr("more than --max_receive_message_size (65536"));
  // A request under the limit goes through to validation as usual.
  grpc::ClientContext small;
  testing::Authorize(small, testing::kAdminToken);
  request.set_yaml("classes: [");
  EXPECT_EQ(stub->ApplyCatalog(&small, request, &response).error_code(),
            StatusCode::INVALID_ARGUMENT);
}

TEST(Limits, OneProjectOwnerCannotHoldMoreThanItsShareOfCalls) {
  testing::TestDatabase db;
  testing::ServerConfig config{db.url()};
  config.extra_flags = {"--max_concurrent_calls_per_principal=1"};
  const std::string other_owner = "owner-p43-token-0123456789abcdef";
  config.tokens_yaml = TokensYaml() + absl::StrCat("  - {name: owner-p43, token: ", other_owner,
                                                   ", role: project-owner, projects: [p-43]}\n");
  testing::ServerProcess server(config);
  ASSERT_TRUE(server.started());
  auto settings = v1::SettingsService::NewStub(server.channel());
  auto get = [&](const std::string& token, const std::string& project) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(20));
    testing::Authorize(context, token);
    v1::GetProjectSettingsRequest request;
    request.set_project_id(project);
    v1::ProjectSettings response;
    return settings->GetProjectSettings(&context, request, &response);
  };
  ASSERT_TRUE(get(testing::kOwnerToken, "p-42").ok());

  // Hold the table so the owner's next call waits inside the server.
  pqxx::connection locker(db.url());
  pqxx::work lock(locker);
  lock.exec("LOCK TABLE project_settings IN ACCESS EXCLUSIVE MODE");
  auto held = std::async(std::launch::async, [&] { return get(testing::kOwnerToken, "p-42"); });
  ASSERT_TRUE(Eventually([&] {
    return db.Query("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                    "AND query LIKE '%project_settings%'") != "0";
  }));
  grpc::Status refused = get(testing::kOwnerToken, "p-42");
  EXPECT_EQ(refused.error_code(), StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_THAT(refused.error_message(), HasSubstr("owner-p42 already has 1 calls in flight"));
  // Other principals are not held back by it.
  EXPECT_TRUE(ListClasses(server.channel(), testing::kControlPlaneToken).status.ok());
  auto other = std::async(std::launch::async, [&] { return get(other_owner, "p-43"); });

  lock.abort();
  EXPECT_TRUE(held.get().ok());
  EXPECT_TRUE(other.get().ok());
  EXPECT_TRUE(get(testing::kOwnerToken, "p-42").ok());  // The slot came back.
}

}  // namespace
}  // namespace wsched
