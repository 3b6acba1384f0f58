// Rows written before the store had a document schema of its own
// (tests/fixtures/storage_v1: the proto3 JSON of the wsched.v1 messages)
// read, after every migration, as the same core values the API mapping
// makes of that JSON; and a row of a newer document schema is refused.
#include <fstream>
#include <sstream>

#include <google/protobuf/util/json_util.h>
#include <google/protobuf/util/message_differencer.h>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/convert/convert.h"
#include "server/store/catalog_repository.h"
#include "server/store/connection.h"
#include "server/store/node_repository.h"
#include "server/store/scaling_repository.h"
#include "server/store/workspace_repository.h"
#include "tests/support/test_database.h"
#include "wsched/v1/scaling.pb.h"

namespace wsched {
namespace {

using ::testing::HasSubstr;

constexpr int kDocumentSchemaMigration = 8;  // migrations/0008_document_schema.sql

std::string Fixture(const std::string& name) {
  std::ifstream in(std::string(WSCHED_SOURCE_DIR "/tests/fixtures/storage_v1/") + name);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_FALSE(text.str().empty()) << name;
  return text.str();
}

template <typename Message>
Message Parse(const std::string& json) {
  Message message;
  EXPECT_TRUE(google::protobuf::util::JsonStringToMessage(json, &message).ok()) << json;
  return message;
}

class StorageV1Test : public ::testing::Test {
 protected:
  void SetUp() override {
    connection_ = std::make_unique<pqxx::connection>(db_.url());
    std::vector<store::Migration> before;
    for (const auto& m : store::EmbeddedMigrations()) {
      if (m.version < kDocumentSchemaMigration) before.push_back(m);
    }
    ASSERT_TRUE(store::ApplyMigrations(*connection_, before).ok());
    {
      pqxx::nontransaction txn(*connection_);
      txn.exec(Fixture("rows.sql"));
    }
    auto all = store::ApplyMigrations(*connection_, store::EmbeddedMigrations());
    ASSERT_TRUE(all.ok()) << all.status();
  }

  testing::TestDatabase db_;
  std::unique_ptr<pqxx::connection> connection_;
};

TEST_F(StorageV1Test, EveryExistingRowIsRecordedAsSchemaOne) {
  for (const char* check :
       {"SELECT count(*) FROM classes WHERE spec_schema = 1", "SELECT count(*) FROM pools WHERE spec_schema = 1",
        "SELECT count(*) FROM driver_policy WHERE spec_schema = 1",
        "SELECT count(*) FROM nodes WHERE info_schema = 1",
        "SELECT count(*) FROM workspaces WHERE placement_schema = 1",
        "SELECT count(*) FROM scaling_signals WHERE signal_schema = 1"}) {
    EXPECT_NE(db_.Query(check), "0") << check;
  }
  EXPECT_EQ(db_.Query("SELECT count(*) FROM workspaces WHERE placement_schema <> 1"), "0");
}

TEST_F(StorageV1Test, ClassesAndNodesReadAsTheApiMappingReadsTheirJson) {
  pqxx::work txn(*connection_);
  auto catalog = store::LoadCatalog(txn);
  ASSERT_TRUE(catalog.ok()) << catalog.status();
  ASSERT_EQ(catalog->classes.size(), 5u);
  for (const core::WorkspaceClass& cls : catalog->classes) {
    core::WorkspaceClass want = convert::FromProto(
        Parse<v1::WorkspaceClass>(Fixture("documents/class-" + cls.id + ".json")));
    EXPECT_EQ(cls, want) << cls.id;
  }
  ASSERT_EQ(catalog->pools.size(), 2u);
  EXPECT_EQ(catalog->pools[0].warm_buffer.windows.at(0).nodes, 2);
  EXPECT_EQ(catalog->pools[1].warm_buffer, core::WarmBuffer::Constant(1));
  ASSERT_EQ(catalog->driver_policy.size(), 2u);
  EXPECT_EQ(catalog->driver_policy[0].kernel, "5.15.0-91-generic");
  auto nodes = store::LoadNodes(txn);
  ASSERT_TRUE(nodes.ok()) << nodes.status();
  ASSERT_EQ(nodes->size(), 2u);
  for (const store::StoredNode& node : *nodes) {
    core::NodeInfo want =
        convert::FromProto(Parse<v1::NodeInfo>(Fixture("documents/node-" + node.info.name + ".json")));
    EXPECT_EQ(node.info, want) << node.info.name;
  }
  EXPECT_EQ((*nodes)[0].info.cdi.mode, core::CdiMode::kWsched);
  EXPECT_FALSE((*nodes)[1].info.gpus[1].healthy);
}

TEST_F(StorageV1Test, PlacementsAnswerWhatTheyAnsweredWhenPlaced) {
  pqxx::work txn(*connection_);
  for (const char* id : {"ws-cpu", "ws-gpu", "ws-inline", "ws-vm"}) {
    auto row = store::LoadWorkspace(txn, id);
    ASSERT_TRUE(row.ok()) << row.status();
    ASSERT_TRUE(row->has_value()) << id;
    const core::Workspace& w = (*row)->workspace;
    ASSERT_NE(w.hand_off, nullptr) << id;
    v1::Workspace got;
    convert::ToProto(*w.hand_off, &got);
    v1::Workspace answer = Parse<v1::Workspace>(Fixture(std::string("answers/") + id + ".json"));
    v1::Workspace want;
    *want.mutable_gpus() = answer.gpus();
    *want.mutable_device_spec() = answer.device_spec();
    for (auto& gpu : *want.mutable_gpus()) {
      gpu.clear_health();  // Filled from the node's latest report at answer time.
      gpu.clear_health_reason();
    }
    std::string diff;
    google::protobuf::util::MessageDifferencer differencer;
    differencer.ReportDifferencesToString(&diff);
    EXPECT_TRUE(differencer.Compare(want, got)) << id << ": " << diff;
  }
}

TEST_F(StorageV1Test, SignalsReadAsStored) {
  pqxx::work txn(*connection_);
  auto signals = store::LoadSignals(txn);
  ASSERT_TRUE(signals.ok()) << signals.status();
  ASSERT_EQ(signals->size(), 2u);
  for (const store::SignalRow& row : *signals) {
    auto want = Parse<v1::PoolSignal>(Fixture("documents/signal-" + row.pool + ".json"));
    EXPECT_EQ(row.generation, want.generation());
    EXPECT_EQ(row.current_size, want.current_size());
    EXPECT_EQ(row.target_size, want.target_size());
    EXPECT_EQ(row.detail, want.detail());
    ASSERT_EQ(static_cast<int>(row.reasons.size()), want.reasons_size());
    EXPECT_EQ(static_cast<int>(row.reasons[0]) + 1, static_cast<int>(want.reasons(0)));
  }
}

TEST_F(StorageV1Test, ARowOfANewerSchemaIsRefusedByName) {
  db_.Query("UPDATE nodes SET info_schema = 2 WHERE name = 'node-b' RETURNING 1");
  db_.Query("UPDATE workspaces SET placement_schema = 2 WHERE id = 'ws-vm' RETURNING 1");
  pqxx::work txn(*connection_);
  auto nodes = store::LoadNodes(txn);
  EXPECT_EQ(nodes.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(nodes.status().message(), HasSubstr("nodes row node-b"));
  EXPECT_THAT(nodes.status().message(), HasSubstr("written by a newer wsched"));
  auto vm = store::LoadWorkspace(txn, "ws-vm");
  EXPECT_EQ(vm.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(vm.status().message(), HasSubstr("workspaces row ws-vm"));
  EXPECT_TRUE(store::LoadWorkspace(txn, "ws-gpu").ok());
}

}  // namespace
}  // namespace wsched
