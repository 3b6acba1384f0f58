// Migrations against a real PostgreSQL: apply, re-apply, refuse newer schema.
#include "server/store/migrations.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/store/connection.h"
#include "tests/support/server_process.h"
#include "tests/support/test_database.h"

namespace wsched {
namespace {

using ::testing::HasSubstr;

TEST(Migrations, ApplyTwiceIsANoOp) {
  testing::TestDatabase db;
  pqxx::connection connection(db.url());
  auto first = store::ApplyMigrations(connection, store::EmbeddedMigrations());
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(first->schema_version_before, 0);
  EXPECT_EQ(first->applied.size(), store::EmbeddedMigrations().size());
  std::string tables_after_first =
      db.Query("SELECT string_agg(table_name, ',' ORDER BY table_name) FROM "
               "information_schema.tables WHERE table_schema = 'public'");

  auto second = store::ApplyMigrations(connection, store::EmbeddedMigrations());
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_TRUE(second->applied.empty());
  EXPECT_EQ(second->schema_version_before, second->schema_version_after);
  EXPECT_EQ(db.Query("SELECT count(*) FROM schema_migrations"),
            std::to_string(store::EmbeddedMigrations().size()));
  EXPECT_EQ(db.Query("SELECT string_agg(table_name, ',' ORDER BY table_name) FROM "
                     "information_schema.tables WHERE table_schema = 'public'"),
            tables_after_first);
}

TEST(Migrations, AFailingMigrationAppliesNothing) {
  testing::TestDatabase db;
  pqxx::connection connection(db.url());
  std::vector<store::Migration> migrations = {
      {1, "0001_ok.sql", "CREATE TABLE a (x int)"},
      {2, "0002_bad.sql", "CREATE TABLE b (x nosuchtype)"},
  };
  auto result = store::ApplyMigrations(connection, migrations);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(db.Query("SELECT count(*) FROM information_schema.tables WHERE table_name = 'a'"), "0");
}

TEST(Migrations, NewerSchemaIsRefused) {
  testing::TestDatabase db;
  pqxx::connection connection(db.url());
  ASSERT_TRUE(store::ApplyMigrations(connection, store::EmbeddedMigrations()).ok());
  db.Query("INSERT INTO schema_migrations (version, name) VALUES (9999, '9999_future.sql') "
           "RETURNING version");
  auto result = store::ApplyMigrations(connection, store::EmbeddedMigrations());
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(result.status().message()), HasSubstr("version 9999"));

  // The server refuses to start on it, with the same clear message.
  auto exit = testing::RunServerToExit(
      {"--database_url=" + db.url(), "--allow_unauthenticated", "--listen=127.0.0.1:0",
       "--metrics_listen="});
  EXPECT_EQ(exit.exit_code, 1);
  EXPECT_THAT(exit.log, HasSubstr("schema is at version 9999"));
}

}  // namespace
}  // namespace wsched
