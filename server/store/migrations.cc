#include "server/store/migrations.h"

#include "absl/strings/str_cat.h"
#include "server/store/connection.h"
#include "server/store/pg_status.h"

namespace wsched::store {
namespace {

// Arbitrary constant shared by every replica: "wsched-migrations".
constexpr int64_t kMigrationLockKey = 0x77736368'6d696772;

}  // namespace

absl::StatusOr<MigrationReport> ApplyMigrations(pqxx::connection& connection,
                                                const std::vector<Migration>& migrations) {
  MigrationReport report;
  try {
    pqxx::work txn(connection);
    // A migration may rewrite a large table: the session's statement_timeout
    // (the hot path's bound) does not apply; the caller bounds the whole.
    txn.exec0("SET LOCAL statement_timeout = 0");
    txn.exec_params("SELECT pg_advisory_xact_lock($1)", kMigrationLockKey);
    txn.exec(
        "CREATE TABLE IF NOT EXISTS schema_migrations ("
        " version integer PRIMARY KEY,"
        " name text NOT NULL,"
        " applied_at timestamptz NOT NULL DEFAULT now())");
    report.schema_version_before =
        txn.exec1("SELECT COALESCE(MAX(version), 0) FROM schema_migrations")[0].as<int>();
    int latest_known = migrations.empty() ? 0 : migrations.back().version;
    if (report.schema_version_before > latest_known) {
      return absl::FailedPreconditionError(absl::StrCat(
          "database schema is at version ", report.schema_version_before,
          " but this wsched binary only knows migrations up to ", latest_known,
          "; refusing to start: run a wsched release at least as new as the one that "
          "migrated this database"));
    }
    for (const Migration& migration : migrations) {
      if (migration.version <= report.schema_version_before) continue;
      txn.exec(migration.sql);
      txn.exec_params("INSERT INTO schema_migrations (version, name) VALUES ($1, $2)",
                      migration.version, migration.name);
      report.applied.push_back(migration.name);
    }
    report.schema_version_after =
        txn.exec1("SELECT COALESCE(MAX(version), 0) FROM schema_migrations")[0].as<int>();
    txn.commit();
  } catch (...) {
    return StatusFromCurrentException("applying migrations");
  }
  return report;
}

absl::StatusOr<MigrationReport> ApplyEmbeddedMigrations(Database& db) {
  MigrationReport report;
  // Bounded like a retention sweep: long, but not forever on a hung server.
  absl::Status status = WithConnection(db, "migrating", db.bounds().sweep,
                                       [&](pqxx::connection& connection) -> absl::Status {
    auto applied = ApplyMigrations(connection, EmbeddedMigrations());
    if (!applied.ok()) return applied.status();
    report = std::move(*applied);
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  return report;
}

}  // namespace wsched::store
