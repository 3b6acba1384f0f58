#include "server/store/schema_probe.h"

#include "server/store/connection.h"
#include "server/store/migrations.h"

namespace wsched::store {

absl::StatusOr<int> ReadSchemaVersion(Database& db) {
  int version = 0;
  // Within the probe bound: a server that hangs (or vanished without
  // closing the connection) makes the check fail within it, instead of
  // holding the check (and health's last answer) until TCP gives up.
  absl::Status status = WithConnection(
      db, "health check", db.bounds().probe, [&](pqxx::connection& connection) -> absl::Status {
        pqxx::nontransaction txn(connection);
        version = txn.exec1("SELECT COALESCE(MAX(version), 0) FROM schema_migrations")[0].as<int>();
        return absl::OkStatus();
      });
  if (!status.ok()) return status;
  return version;
}

int EmbeddedSchemaVersion() {
  const std::vector<Migration>& migrations = EmbeddedMigrations();
  return migrations.empty() ? 0 : migrations.back().version;
}

}  // namespace wsched::store
