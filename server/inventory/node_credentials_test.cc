#include "server/inventory/node_credentials.h"

#include <gtest/gtest.h>

#include <map>

namespace wsched::inventory {
namespace {

store::NodeCredentialRow Row(const std::string& node, const std::string& digest) {
  store::NodeCredentialRow row;
  row.node = node;
  row.pool = "gpu";
  row.token_sha256 = digest;
  return row;
}

// Stands in for the node_credentials table; counts what is asked of it.
class FakeTable {
 public:
  std::map<std::string, std::string> digest_of;  // node -> digest
  std::vector<std::vector<std::string>> asked;
  bool fail = false;

  NodeCredentials::Loader Loader() {
    return [this](const std::vector<std::string>& nodes)
               -> absl::StatusOr<std::vector<store::NodeCredentialRow>> {
      asked.push_back(nodes);
      if (fail) return absl::UnavailableError("database down");
      std::vector<store::NodeCredentialRow> rows;
      for (const auto& [node, digest] : digest_of) {
        if (nodes.empty() || std::find(nodes.begin(), nodes.end(), node) != nodes.end()) {
          rows.push_back(Row(node, digest));
        }
      }
      return rows;
    };
  }
};

TEST(NodeCredentialsTest, FindsTheNodeOfAToken) {
  FakeTable table;
  table.digest_of = {{"n1", "digest-1"}, {"n2", "digest-2"}};
  NodeCredentials credentials(table.Loader());
  ASSERT_TRUE(credentials.ReloadAll().ok());
  ASSERT_TRUE(credentials.Find("digest-2").has_value());
  EXPECT_EQ(credentials.Find("digest-2")->node, "n2");
  EXPECT_EQ(credentials.Find("digest-2")->pool, "gpu");
  EXPECT_FALSE(credentials.Find("digest-3").has_value());
}

TEST(NodeCredentialsTest, ARefreshDropsRevokedAndRotatedTokensOfTheNamedNodesOnly) {
  FakeTable table;
  table.digest_of = {{"n1", "old-1"}, {"n2", "old-2"}, {"n3", "old-3"}};
  NodeCredentials credentials(table.Loader());
  ASSERT_TRUE(credentials.ReloadAll().ok());
  table.digest_of.erase("n1");         // revoked
  table.digest_of["n2"] = "new-2";     // rotated
  table.digest_of["n3"] = "unseen-3";  // changed, but not named yet
  ASSERT_TRUE(credentials.Refresh({"n1", "n2"}).ok());
  EXPECT_EQ(table.asked.back(), (std::vector<std::string>{"n1", "n2"}));
  EXPECT_FALSE(credentials.Find("old-1").has_value());
  EXPECT_FALSE(credentials.Find("old-2").has_value());
  EXPECT_EQ(credentials.Find("new-2")->node, "n2");
  EXPECT_EQ(credentials.Find("old-3")->node, "n3");
  EXPECT_EQ(credentials.size(), 2u);
}

TEST(NodeCredentialsTest, AFailedReadKeepsWhatWasKnown) {
  FakeTable table;
  table.digest_of = {{"n1", "d1"}};
  NodeCredentials credentials(table.Loader());
  ASSERT_TRUE(credentials.ReloadAll().ok());
  table.fail = true;
  EXPECT_FALSE(credentials.Refresh({"n1"}).ok());
  EXPECT_FALSE(credentials.ReloadAll().ok());
  EXPECT_TRUE(credentials.Find("d1").has_value());
}

TEST(NodeCredentialsTest, NothingNamedReadsNothing) {
  FakeTable table;
  NodeCredentials credentials(table.Loader());
  ASSERT_TRUE(credentials.Refresh({}).ok());
  EXPECT_TRUE(table.asked.empty());
}

}  // namespace
}  // namespace wsched::inventory
