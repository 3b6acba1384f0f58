// Numbered SQL migrations from migrations/, embedded in the binary and
// applied at start under an advisory lock.
#ifndef WSCHED_SERVER_STORE_MIGRATIONS_H_
#define WSCHED_SERVER_STORE_MIGRATIONS_H_

#include <string>
#include <vector>

#include <pqxx/pqxx>

#include "absl/status/statusor.h"

namespace wsched::store {

struct Migration {
  int version = 0;   // From the file name: 0001_initial.sql -> 1.
  std::string name;  // "0001_initial.sql"
  std::string sql;
};

// The migrations compiled into this binary, ordered by version.
const std::vector<Migration>& EmbeddedMigrations();

struct MigrationReport {
  int schema_version_before = 0;
  int schema_version_after = 0;
  std::vector<std::string> applied;  // Names applied by this call.
};

// Applies every migration newer than the database's schema in ONE
// transaction under a transaction-scoped advisory lock, so replicas starting
// together apply each file once. Applying twice is a no-op. A database whose
// schema is newer than `migrations` knows is refused (FAILED_PRECONDITION).
absl::StatusOr<MigrationReport> ApplyMigrations(pqxx::connection& connection,
                                                const std::vector<Migration>& migrations);

}  // namespace wsched::store

#endif  // WSCHED_SERVER_STORE_MIGRATIONS_H_
