#include "server/grpc/credentials_file.h"

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace wsched::grpc_api {
namespace {

using ::testing::HasSubstr;

constexpr char kToken[] = "a-long-enough-test-token-0123456789";

std::string ErrorOf(const std::string& yaml, CredentialOptions options = {}) {
  auto table = CredentialTable::Parse(yaml, options);
  return table.ok() ? "OK" : std::string(table.status().message());
}

TEST(CredentialTable, HashedEntriesMatchTheirToken) {
  std::string yaml = "tokens:\n  - {name: ops, sha256: " + ToHex(Sha256(kToken)) +
                     ", role: admin}\n";
  auto table = CredentialTable::Parse(yaml);
  ASSERT_TRUE(table.ok()) << table.status();
  const Principal* found = table->FindToken(Sha256(kToken));
  ASSERT_NE(found, nullptr);
  EXPECT_EQ(found->name, "ops");
  EXPECT_TRUE(found->Has(Role::kAdmin));
  EXPECT_EQ(table->FindToken(Sha256("another-token-that-is-long-enough")), nullptr);
  EXPECT_TRUE(table->warnings().empty());
}

TEST(CredentialTable, ExistingClearTextFilesStillLoadWithAWarning) {
  auto table = CredentialTable::Parse(
      "tokens:\n"
      "  - {name: ops, token: admin-token-0123456789abcdef, role: admin}\n"
      "  - {name: p42-owner, token: owner-token-0123456789abcdef, role: project-owner, "
      "orgs: [o-1], projects: [p-42]}\n"
      "  - {name: h100, token: agent-token-0123456789abcdef, role: agent, pools: [gpu-h100], "
      "node: h100-1}\n");
  ASSERT_TRUE(table.ok()) << table.status();
  EXPECT_EQ(table->token_count(), 3u);
  ASSERT_EQ(table->warnings().size(), 3u);
  EXPECT_THAT(table->warnings()[0], HasSubstr("tokens[0] (ops): clear-text token"));
  const Principal* agent = table->FindToken(Sha256("agent-token-0123456789abcdef"));
  ASSERT_NE(agent, nullptr);
  EXPECT_EQ(agent->pools, std::set<std::string>{"gpu-h100"});
  EXPECT_EQ(agent->node, "h100-1");
}

TEST(CredentialTable, ClearTextIsRefusedWhenHashesAreRequired) {
  EXPECT_THAT(ErrorOf("tokens: [{name: ops, token: admin-token-0123456789abcdef, role: admin}]",
                      {.require_hashed_tokens = true}),
              HasSubstr("tokens[0] (ops).token: clear-text tokens are refused"));
}

TEST(CredentialTable, ShortTokensAreRefusedNamingTheEntry) {
  EXPECT_THAT(ErrorOf("tokens: [{name: ci, token: only-21-chars-long-xy, role: admin}]"),
              HasSubstr("tokens[0] (ci).token: must be >= 22 characters"));
  EXPECT_THAT(ErrorOf("tokens: [{token: short, role: admin}]"),
              HasSubstr("tokens[0].token: must be >= 22 characters"));
  EXPECT_EQ(ErrorOf("tokens: [{token: exactly-22-characters!, role: admin}]"), "OK");
}

TEST(CredentialTable, EachBrokenRuleNamesItsPlace) {
  const std::string hash = ToHex(Sha256(kToken));
  EXPECT_THAT(ErrorOf("tokens: {}"), HasSubstr("tokens: must be a list"));
  EXPECT_THAT(ErrorOf("{}"), HasSubstr("tokens: must be a list"));
  EXPECT_THAT(ErrorOf("tokens: [{name: x, sha256: abc, role: admin}]"),
              HasSubstr("tokens[0] (x).sha256: must be 64 hex digits"));
  EXPECT_THAT(ErrorOf("tokens: [{name: x, role: admin}]"),
              HasSubstr("tokens[0] (x): needs exactly one of sha256"));
  EXPECT_THAT(ErrorOf("tokens: [{name: x, sha265: " + hash + ", role: admin}]"),
              HasSubstr("tokens[0].sha265: unknown key"));
  EXPECT_THAT(ErrorOf("tokenz: []"), HasSubstr("file.tokenz: unknown key"));
  EXPECT_THAT(ErrorOf("tokens: [{sha256: " + hash + ", role: root}]"),
              HasSubstr("tokens[0].role: unknown role \"root\""));
  EXPECT_THAT(ErrorOf("tokens: [{sha256: " + hash + "}]"),
              HasSubstr("tokens[0].role: is required"));
  EXPECT_THAT(ErrorOf("tokens: [{sha256: " + hash + ", role: project-owner}]"),
              HasSubstr("a project-owner needs orgs or projects"));
  EXPECT_THAT(ErrorOf("tokens: [{sha256: " + hash + ", role: admin, pools: [gpu]}]"),
              HasSubstr("pools only scope agent entries, not admin"));
  EXPECT_THAT(ErrorOf("tokens: [{sha256: " + hash + ", role: agent, orgs: [o-1]}]"),
              HasSubstr("orgs and projects only scope project-owner entries"));
  EXPECT_THAT(ErrorOf("tokens: [{sha256: " + hash + ", role: agent, pools: [gpu], node: n1, "
                      "bootstrap: true}]"),
              HasSubstr("tokens[0]: a bootstrap token registers new nodes; it cannot also name a node"));
  EXPECT_THAT(ErrorOf("tokens: [{sha256: " + hash + ", role: agent, pools: gpu}]"),
              HasSubstr("tokens[0].pools: must be a list"));
  EXPECT_THAT(ErrorOf("tokens: [{sha256: " + hash + ", role: [admin]}]"),
              HasSubstr("tokens[0].role: must be a string"));
  EXPECT_THAT(ErrorOf("tokens: [\"just a string\"]"), HasSubstr("tokens[0]: must be a map"));
  EXPECT_THAT(ErrorOf("tokens: [{{{"), HasSubstr("not YAML"));
}

TEST(CredentialTable, TheSameTokenTwiceIsRefused) {
  const std::string hash = ToHex(Sha256(kToken));
  EXPECT_THAT(ErrorOf("tokens:\n  - {name: a, sha256: " + hash + ", role: admin}\n"
                      "  - {name: b, token: " + std::string(kToken) + ", role: actuator}\n"),
              HasSubstr("tokens[1] (b): same token as tokens[0] (a)"));
}

TEST(CredentialTable, IdentitiesMatchSansExactlyThenByWildcard) {
  auto table = CredentialTable::Parse(
      "identities:\n"
      "  - {name: h100-nodes, identity: \"*.gpu-h100.nodes.example\", role: agent, "
      "pools: [gpu-h100]}\n"
      "  - {name: special, identity: node-1.gpu-h100.nodes.example, role: admin}\n"
      "  - {name: saas, identity: \"spiffe://example.com/Saas\", role: control-plane}\n"
      "  - {name: ops, identity: Ops Admin, role: admin}\n",
      {.allow_shared_agent_credentials = true});
  ASSERT_TRUE(table.ok()) << table.status();
  // Exact entries win over wildcards, whatever the file order.
  auto special = table->FindIdentity({"node-1.gpu-h100.nodes.example"});
  ASSERT_TRUE(special.has_value());
  EXPECT_EQ(special->name, "special");
  // A wildcard names the node, so every node is its own principal.
  auto node = table->FindIdentity({"NODE-7.gpu-h100.nodes.example"});
  ASSERT_TRUE(node.has_value());
  EXPECT_EQ(node->name, "h100-nodes/node-7.gpu-h100.nodes.example");
  EXPECT_TRUE(node->Has(Role::kAgent));
  // One label only: no deeper names, no bare suffix.
  EXPECT_FALSE(table->FindIdentity({"a.b.gpu-h100.nodes.example"}).has_value());
  EXPECT_FALSE(table->FindIdentity({"gpu-h100.nodes.example"}).has_value());
  EXPECT_FALSE(table->FindIdentity({".gpu-h100.nodes.example"}).has_value());
  // URIs compare exactly; names case-insensitively.
  EXPECT_TRUE(table->FindIdentity({"spiffe://example.com/Saas"}).has_value());
  EXPECT_FALSE(table->FindIdentity({"spiffe://example.com/saas"}).has_value());
  EXPECT_TRUE(table->FindIdentity({"ops admin"}).has_value());
  EXPECT_FALSE(table->FindIdentity({"stranger.example"}).has_value());
  EXPECT_FALSE(table->FindIdentity({}).has_value());
}

TEST(CredentialTable, BadIdentitiesAreRefused) {
  EXPECT_THAT(ErrorOf("identities: [{name: x, role: admin}]"),
              HasSubstr("identities[0] (x).identity: is required"));
  for (const char* bad : {"\"*\"", "\"*.com\"", "\"a.*.example\"", "\"*x.example.com\"",
                          "\"spiffe://*.example\"", "\" padded\""}) {
    EXPECT_THAT(ErrorOf(absl::StrCat("identities: [{identity: ", bad, ", role: admin}]")),
                HasSubstr("identities[0].identity:"))
        << bad;
  }
  EXPECT_THAT(ErrorOf("identities:\n  - {identity: a.example, role: admin}\n"
                      "  - {identity: A.example, role: agent, pools: [gpu], node: a}\n"),
              HasSubstr("identities[1].identity: \"a.example\" is listed twice"));
}

TEST(CredentialTable, PrintedEntriesParseBack) {
  TokenDigest digest = Sha256(kToken);
  std::string line = TokenEntryYaml("h100", digest, Role::kAgent,
                                    {.pools = {"gpu-h100", "gpu-a100"}, .bootstrap = true});
  EXPECT_EQ(line, "  - {name: h100, sha256: " + ToHex(digest) +
                      ", role: agent, pools: [gpu-h100, gpu-a100], bootstrap: true}");
  auto table = CredentialTable::Parse("tokens:\n" + line + "\n");
  ASSERT_TRUE(table.ok()) << table.status();
  ASSERT_NE(table->FindToken(digest), nullptr);
  EXPECT_EQ(table->FindToken(digest)->pools.size(), 2u);
  EXPECT_TRUE(table->FindToken(digest)->bootstrap);
  std::string bound = TokenEntryYaml("n7", digest, Role::kAgent, {.pools = {"gpu"}, .node = "n7"});
  EXPECT_THAT(bound, HasSubstr(", pools: [gpu], node: n7}"));
  ASSERT_TRUE(CredentialTable::Parse("tokens:\n" + bound + "\n").ok());
}

TEST(CredentialTable, AgentCredentialsSpeakForOneNodeUnlessSharedOnesAreAllowed) {
  const std::string hash = ToHex(Sha256(kToken));
  const std::string shared = "tokens: [{name: h100, sha256: " + hash + ", role: agent, pools: [gpu]}]";
  EXPECT_THAT(ErrorOf(shared),
              HasSubstr("tokens[0] (h100): an agent credential must speak for one node"));
  EXPECT_THAT(ErrorOf(shared), HasSubstr("--allow_shared_agent_credentials"));
  EXPECT_EQ(ErrorOf(shared, {.allow_shared_agent_credentials = true}), "OK");
  EXPECT_THAT(ErrorOf("identities: [{name: all, identity: \"*.gpu.example.com\", role: agent, "
                      "pools: [gpu]}]"),
              HasSubstr("identities[0] (all): an agent credential must speak for one node"));
  // Bound ones need the pool they may report in; bootstrap tokens too.
  EXPECT_THAT(ErrorOf("tokens: [{sha256: " + hash + ", role: agent, node: n1}]"),
              HasSubstr("tokens[0].pools: a node's credential needs the pool"));
  EXPECT_THAT(ErrorOf("tokens: [{sha256: " + hash + ", role: agent, bootstrap: true}]"),
              HasSubstr("tokens[0].pools: a bootstrap token needs the pools"));
  EXPECT_THAT(ErrorOf("tokens: [{sha256: " + hash + ", role: admin, node: n1}]"),
              HasSubstr("tokens[0].node: only an agent entry speaks for a node"));
  EXPECT_THAT(ErrorOf("tokens: [{sha256: " + hash + ", role: agent, pools: [gpu], bootstrap: maybe}]"),
              HasSubstr("tokens[0].bootstrap: must be true or false"));
  EXPECT_THAT(ErrorOf("identities: [{identity: n1.example.com, role: agent, pools: [gpu], "
                      "bootstrap: true}]"),
              HasSubstr("identities[0].bootstrap: unknown key"));
  EXPECT_THAT(ErrorOf("tokens: [{sha256: " + hash + ", role: agent, pools: [gpu], node: \"Not A Name\"}]"),
              HasSubstr("tokens[0].node: must be a node name"));
}

TEST(CredentialTable, NodePatternsBindTheCertificatesNodeAndPool) {
  auto table = CredentialTable::Parse(
      "identities:\n"
      "  - {name: nodes, identity: \"{node}.{pool}.nodes.example.com\", role: agent}\n"
      "  - {name: gpu-b, identity: \"{node}.b.example.com\", role: agent, pools: [gpu-b]}\n"
      "  - {name: narrowed, identity: \"{node}.{pool}.c.example.com\", role: agent, "
      "pools: [gpu-c]}\n"
      "  - {name: n9, identity: n9.gpu.example.com, role: agent, pools: [gpu], node: n9}\n");
  ASSERT_TRUE(table.ok()) << table.status();
  auto a = table->FindIdentity({"Node-7.gpu-h100.nodes.example.com"});
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->name, "nodes/node-7.gpu-h100.nodes.example.com");
  EXPECT_EQ(a->node, "node-7");
  EXPECT_EQ(a->pools, std::set<std::string>{"gpu-h100"});
  auto b = table->FindIdentity({"b1.b.example.com"});
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(b->node, "b1");
  EXPECT_EQ(b->pools, std::set<std::string>{"gpu-b"});
  // A listed pool narrows a {pool} pattern.
  EXPECT_TRUE(table->FindIdentity({"c1.gpu-c.c.example.com"}).has_value());
  EXPECT_FALSE(table->FindIdentity({"c1.gpu-x.c.example.com"}).has_value());
  // Labels match whole: no extra or missing labels, no URIs.
  EXPECT_FALSE(table->FindIdentity({"x.node-7.gpu-h100.nodes.example.com"}).has_value());
  EXPECT_FALSE(table->FindIdentity({"gpu-h100.nodes.example.com"}).has_value());
  EXPECT_FALSE(table->FindIdentity({"spiffe://node-7.gpu.nodes.example.com"}).has_value());
  auto n9 = table->FindIdentity({"n9.gpu.example.com"});
  ASSERT_TRUE(n9.has_value());
  EXPECT_EQ(n9->name, "n9");
  EXPECT_EQ(n9->node, "n9");
}

TEST(CredentialTable, BadNodePatternsAreRefused) {
  for (const char* bad : {"\"{node}.com\"", "\"{node}.{node}.example.com\"",
                          "\"{pool}.example.com\"", "\"x{node}.example.com\"",
                          "\"*.{node}.example.com\"", "\"{node}.{pool}.{zone}.example.com\""}) {
    EXPECT_THAT(ErrorOf(absl::StrCat("identities: [{identity: ", bad,
                                     ", role: agent, pools: [gpu]}]")),
                HasSubstr("identities[0].identity: a node pattern is DNS labels with {node}"))
        << bad;
  }
  EXPECT_THAT(ErrorOf("identities: [{identity: \"{node}.nodes.example.com\", role: admin}]"),
              HasSubstr("only for agent entries"));
  EXPECT_THAT(ErrorOf("identities: [{identity: \"{node}.nodes.example.com\", role: agent}]"),
              HasSubstr("identities[0].pools: a {node} pattern needs a {pool} label or the pools"));
  EXPECT_THAT(ErrorOf("identities: [{identity: \"{node}.nodes.example.com\", role: agent, "
                      "pools: [gpu], node: n1}]"),
              HasSubstr("identities[0].node: a {node} pattern names the node itself"));
}

}  // namespace
}  // namespace wsched::grpc_api
