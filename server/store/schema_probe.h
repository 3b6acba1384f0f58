// The health check's one round trip to PostgreSQL: whether the database
// answers and which schema version it is at.
#ifndef WSCHED_SERVER_STORE_SCHEMA_PROBE_H_
#define WSCHED_SERVER_STORE_SCHEMA_PROBE_H_

#include "absl/status/statusor.h"
#include "server/store/database.h"

namespace wsched::store {

// The highest migration applied to the database (0 before any); an error
// (UNAVAILABLE when it cannot be reached) otherwise.
absl::StatusOr<int> ReadSchemaVersion(Database& db);

// The highest migration embedded in this binary: what a complete schema has.
int EmbeddedSchemaVersion();

}  // namespace wsched::store

#endif  // WSCHED_SERVER_STORE_SCHEMA_PROBE_H_
