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
      "  - {name: h100, token: agent-token-0123456789abcdef, role: agent, pools: [gpu-h100]}\n");
  ASSERT_TRUE(table.ok()) << table.status();
  EXPECT_EQ(table->token_count(), 3u);
  ASSERT_EQ(table->warnings().size(), 3u);
  EXPECT_THAT(table->warnings()[0], HasSubstr("tokens[0] (ops): clear-text token"));
  const Principal* agent = table->FindToken(Sha256("agent-token-0123456789abcdef"));
  ASSERT_NE(agent, nullptr);
  EXPECT_EQ(agent->pools, std::set<std::string>{"gpu-h100"});
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
      "  - {name: ops, identity: Ops Admin, role: admin}\n");
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
                      "  - {identity: A.example, role: agent}\n"),
              HasSubstr("identities[1].identity: \"a.example\" is listed twice"));
}

TEST(CredentialTable, PrintedEntriesParseBack) {
  TokenDigest digest = Sha256(kToken);
  std::string line = TokenEntryYaml("h100", digest, Role::kAgent, {}, {}, {"gpu-h100", "gpu-a100"});
  EXPECT_EQ(line, "  - {name: h100, sha256: " + ToHex(digest) +
                      ", role: agent, pools: [gpu-h100, gpu-a100]}");
  auto table = CredentialTable::Parse("tokens:\n" + line + "\n");
  ASSERT_TRUE(table.ok()) << table.status();
  ASSERT_NE(table->FindToken(digest), nullptr);
  EXPECT_EQ(table->FindToken(digest)->pools.size(), 2u);
}

}  // namespace
}  // namespace wsched::grpc_api
