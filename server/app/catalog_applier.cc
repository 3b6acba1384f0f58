#include "server/app/catalog_applier.h"

#include "absl/strings/str_cat.h"
#include "server/catalog/validate.h"
#include "server/core/error_reason.h"
#include "server/store/unit_of_work.h"

namespace wsched::app {
namespace {

absl::Status CheckPoolVersions(const core::Catalog& current,
                               const std::map<std::string, int64_t>& expected) {
  for (const auto& [id, version] : expected) {
    if (version == 0) continue;
    const core::NodePool* pool = current.FindPool(id);
    if (pool == nullptr) {
      return core::NotFoundError(core::ErrorReason::kPoolNotFound, "pool", id,
                                 absl::StrCat("pool ", id, " does not exist (expected_version ",
                                              version, "): it was removed since you read it"));
    }
    if (pool->version != version) {
      return core::VersionMismatchError("pool", id, pool->version, version);
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ApplyResult> ApplyCheckedCatalog(
    store::Database& db, const catalog::CatalogCheck& check, bool dry_run,
    const std::map<std::string, int64_t>& expected_pool_versions) {
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
    if (absl::Status s = CheckPoolVersions(*current, expected_pool_versions); !s.ok()) return s;
    std::set<std::string> in_use = unit.catalog().ClassesInUse();
    core::Catalog target = catalog::KeepInUseClasses(*current, check.catalog, in_use);
    // Keeping a class may break a rule (e.g. its pool is gone): check again.
    if (absl::Status s = catalog::CheckStatus(catalog::CheckCatalog(target, check.rules)); !s.ok()) {
      return s;
    }
    result.changes = catalog::DeprecateInsteadOfRemoving(
        catalog::DiffCatalogs(*current, check.catalog), in_use);
    if (dry_run) return absl::OkStatus();  // Read-only: nothing to commit.
    return unit.catalog().Write(*current, target);
  });
  if (!status.ok()) return status;
  return result;
}

}  // namespace wsched::app
