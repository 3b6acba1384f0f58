#include "server/grpc/catalog_applier.h"

#include "server/catalog/validate.h"
#include "server/store/unit_of_work.h"

namespace wsched::grpc_api {

absl::StatusOr<ApplyResult> ApplyCheckedCatalog(store::Database& db,
                                                const catalog::CatalogCheck& check, bool dry_run) {
  if (absl::Status status = catalog::CheckStatus(check); !status.ok()) return status;
  ApplyResult result;
  result.dry_run = dry_run;
  // All or nothing, under the catalog lock: what is in use and the diff are
  // read in the transaction that writes.
  absl::Status status = store::UnitOfWork::Run(db, "applying catalog",
                                               [&](store::UnitOfWork& unit) -> absl::Status {
    unit.catalog().Lock();
    auto current = unit.catalog().Load();
    if (!current.ok()) return current.status();
    std::set<std::string> in_use = unit.catalog().ClassesInUse();
    core::Catalog target = catalog::KeepInUseClasses(*current, check.catalog, in_use);
    // Keeping a class may break a rule (e.g. its pool is gone): check again.
    if (absl::Status s = catalog::CheckStatus(catalog::CheckCatalog(target)); !s.ok()) return s;
    result.changes = catalog::DeprecateInsteadOfRemoving(
        catalog::DiffCatalogs(*current, check.catalog), in_use);
    if (dry_run) return absl::OkStatus();  // Read-only: nothing to commit.
    return unit.catalog().Write(*current, target);
  });
  if (!status.ok()) return status;
  return result;
}

}  // namespace wsched::grpc_api
