#include "server/grpc/catalog_applier.h"

#include "server/catalog/validate.h"
#include "server/store/catalog_repository.h"

namespace wsched::grpc_api {

absl::StatusOr<ApplyResult> ApplyCheckedCatalog(store::Database& db,
                                                const catalog::CatalogCheck& check, bool dry_run) {
  if (absl::Status status = catalog::CheckStatus(check); !status.ok()) return status;
  ApplyResult result;
  result.dry_run = dry_run;
  absl::Status status = db.InTransaction("applying catalog", [&](pqxx::work& txn) -> absl::Status {
    store::LockCatalog(txn);
    auto current = store::LoadCatalog(txn);
    if (!current.ok()) return current.status();
    std::set<std::string> in_use = store::ClassesInUse(txn);
    core::Catalog target = catalog::KeepInUseClasses(*current, check.catalog, in_use);
    // Keeping a class may break a rule (e.g. its pool is gone): check again.
    if (absl::Status s = catalog::CheckStatus(catalog::CheckCatalog(target)); !s.ok()) return s;
    result.changes = catalog::DeprecateInsteadOfRemoving(
        catalog::DiffCatalogs(*current, check.catalog), in_use);
    if (dry_run) return absl::OkStatus();  // Read-only: nothing to commit.
    return store::WriteCatalog(txn, *current, target);
  });
  if (!status.ok()) return status;
  return result;
}

}  // namespace wsched::grpc_api
