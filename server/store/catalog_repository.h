// Stored catalog: classes (with versions as etags), pools, driver policy.
// Functions run inside the caller's transaction so applies are atomic;
// writes record their change in `changes`, which the caller's unit of work
// publishes at commit (unit_of_work.h).
#ifndef WSCHED_SERVER_STORE_CATALOG_REPOSITORY_H_
#define WSCHED_SERVER_STORE_CATALOG_REPOSITORY_H_

#include <set>
#include <string>

#include <pqxx/pqxx>

#include "absl/status/statusor.h"
#include "server/core/catalog.h"
#include "server/store/change_log.h"

namespace wsched::store {

// Serializes catalog writers across replicas for the rest of the transaction.
void LockCatalog(pqxx::work& txn);

absl::StatusOr<core::Catalog> LoadCatalog(pqxx::work& txn);

// Ids of classes that pending, placed or lost workspaces use.
std::set<std::string> ClassesInUse(pqxx::work& txn);

// Makes the stored catalog equal `target` (already validated). Classes whose
// spec changed get version + 1; new ones version 1; classes missing from
// `target` are deleted. Pools and the driver policy are replaced.
absl::Status WriteCatalog(pqxx::work& txn, const core::Catalog& current,
                          const core::Catalog& target, ChangeSet& changes);

// Stores one class if its stored version equals `expected_version` (0 =
// must not exist yet). ABORTED on a stale version, ALREADY_EXISTS when
// creating an existing class, NOT_FOUND when updating a missing one.
// Returns the class with its new version.
absl::StatusOr<core::WorkspaceClass> WriteClass(pqxx::work& txn, core::WorkspaceClass cls,
                                                int64_t expected_version, ChangeSet& changes);

// Current generation of the catalog (bumped by every write).
int64_t CatalogGeneration(pqxx::work& txn);

}  // namespace wsched::store

#endif  // WSCHED_SERVER_STORE_CATALOG_REPOSITORY_H_
