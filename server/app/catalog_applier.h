// Applies a checked catalog to the store atomically: the one path shared by
// the ApplyCatalog RPC, the catalog file at start-up and SIGHUP reloads.
#ifndef WSCHED_SERVER_APP_CATALOG_APPLIER_H_
#define WSCHED_SERVER_APP_CATALOG_APPLIER_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "server/catalog/diagnostics.h"
#include "server/catalog/diff.h"
#include "server/store/database.h"

namespace wsched::app {

struct ApplyResult {
  std::vector<catalog::CatalogChange> changes;
  bool dry_run = false;
};

// `check` is the parsed catalog with its errors. Any error: INVALID_ARGUMENT
// listing all of them, nothing written. Removed classes that workspaces
// still use are kept as deprecated. One transaction, serialized across
// replicas by an advisory lock. `expected_pool_versions` (pool id -> the
// version the caller read; 0 = unchecked) guards pools against lost
// updates: a stored version that differs is ABORTED (VERSION_MISMATCH), a
// pool that is gone NOT_FOUND, checked under that lock in the writing
// transaction, nothing written.
absl::StatusOr<ApplyResult> ApplyCheckedCatalog(
    store::Database& db, const catalog::CatalogCheck& check, bool dry_run,
    const std::map<std::string, int64_t>& expected_pool_versions = {});

}  // namespace wsched::app

#endif  // WSCHED_SERVER_APP_CATALOG_APPLIER_H_
