// Numbered SQL migrations from migrations/, embedded in the binary and
// applied at start under an advisory lock.
#ifndef WSCHED_SERVER_STORE_MIGRATIONS_H_
#define WSCHED_SERVER_STORE_MIGRATIONS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "server/store/database.h"

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

// Applies the migrations embedded in this binary on a connection of `db`
// (ApplyMigrations in connection.h: one transaction, under an advisory lock;
// a database newer than this binary is refused with FAILED_PRECONDITION).
absl::StatusOr<MigrationReport> ApplyEmbeddedMigrations(Database& db);

}  // namespace wsched::store

#endif  // WSCHED_SERVER_STORE_MIGRATIONS_H_
