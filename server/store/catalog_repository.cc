#include "server/store/catalog_repository.h"

#include "absl/strings/str_cat.h"
#include "server/core/error_reason.h"
#include "server/store/change_log.h"
#include "server/store/documents/documents.h"

namespace wsched::store {
namespace {

constexpr int64_t kCatalogLockKey = 0x77736368'63617461;  // "wschcata"

// Every catalog write ends here: replicas reload the (small) catalog when
// they see the new generation in the change log.
void BumpGeneration(pqxx::work& txn, ChangeSet& changes) {
  int64_t generation =
      txn.exec1("UPDATE catalog_generation SET generation = generation + 1 RETURNING generation")[0]
          .as<int64_t>();
  changes.Add(Entity::kCatalog, "", generation);
}

void UpsertClass(pqxx::work& txn, const core::WorkspaceClass& cls) {
  txn.exec_params(
      "INSERT INTO classes (id, spec, spec_schema, is_default, deprecated, version, updated_at) "
      "VALUES ($1, $2::jsonb, $3, $4, $5, $6, now()) "
      "ON CONFLICT (id) DO UPDATE SET spec = EXCLUDED.spec, spec_schema = EXCLUDED.spec_schema, "
      "is_default = EXCLUDED.is_default, deprecated = EXCLUDED.deprecated, "
      "version = EXCLUDED.version, updated_at = now()",
      cls.id, documents::EncodeClass(cls), documents::kSchemaVersion, cls.is_default,
      cls.deprecated, cls.version);
}

}  // namespace

void LockCatalog(pqxx::work& txn) {
  txn.exec_params("SELECT pg_advisory_xact_lock($1)", kCatalogLockKey);
}

absl::StatusOr<core::Catalog> LoadCatalog(pqxx::work& txn) {
  core::Catalog catalog;
  for (const auto& row :
       txn.exec("SELECT spec::text, version, id, spec_schema FROM classes ORDER BY id")) {
    auto cls = documents::DecodeClass(row[0].c_str(), {"classes", row[2].c_str(), row[3].as<int>()});
    if (!cls.ok()) return cls.status();
    cls->version = row[1].as<int64_t>();
    catalog.classes.push_back(std::move(*cls));
  }
  for (const auto& row :
       txn.exec("SELECT spec::text, version, id, spec_schema FROM pools ORDER BY id")) {
    auto pool = documents::DecodePool(row[0].c_str(), {"pools", row[2].c_str(), row[3].as<int>()});
    if (!pool.ok()) return pool.status();
    pool->version = row[1].as<int64_t>();
    catalog.pools.push_back(std::move(*pool));
  }
  for (const auto& row :
       txn.exec("SELECT spec::text, position, spec_schema FROM driver_policy ORDER BY position")) {
    auto entry = documents::DecodeDriverPolicy(row[0].c_str(), {"driver_policy", row[1].c_str(),
                                                                row[2].as<int>()});
    if (!entry.ok()) return entry.status();
    catalog.driver_policy.push_back(std::move(*entry));
  }
  return catalog;
}

std::set<std::string> ClassesInUse(pqxx::work& txn) {
  std::set<std::string> ids;
  for (const auto& row : txn.exec(
           "SELECT DISTINCT class_id FROM workspaces WHERE state IN ('pending', 'placed', 'lost')")) {
    ids.insert(row[0].c_str());
  }
  return ids;
}

absl::Status WriteCatalog(pqxx::work& txn, const core::Catalog& current,
                          const core::Catalog& target, ChangeSet& changes) {
  // Clear the default flag first so the one-default index never sees two.
  txn.exec("UPDATE classes SET is_default = false WHERE is_default");
  for (const core::WorkspaceClass& old : current.classes) {
    if (target.FindClass(old.id) == nullptr) txn.exec_params("DELETE FROM classes WHERE id = $1", old.id);
  }
  for (core::WorkspaceClass cls : target.classes) {
    const core::WorkspaceClass* old = current.FindClass(cls.id);
    if (old == nullptr) {
      cls.version = 1;
    } else {
      cls.version = old->SameSpec(cls) ? old->version : old->version + 1;
    }
    UpsertClass(txn, cls);
  }
  txn.exec("DELETE FROM pools");
  for (const core::NodePool& pool : target.pools) {
    // As classes: an unchanged spec keeps its version, so an etag read
    // before an apply that left the pool alone still holds.
    const core::NodePool* old = current.FindPool(pool.id);
    const int64_t version = old == nullptr ? 1 : old->SameSpec(pool) ? old->version : old->version + 1;
    txn.exec_params(
        "INSERT INTO pools (id, spec, spec_schema, version) VALUES ($1, $2::jsonb, $3, $4)",
        pool.id, documents::EncodePool(pool), documents::kSchemaVersion, version);
  }
  txn.exec("DELETE FROM driver_policy");
  int position = 0;
  for (const core::DriverPolicyEntry& entry : target.driver_policy) {
    txn.exec_params(
        "INSERT INTO driver_policy (position, spec, spec_schema) VALUES ($1, $2::jsonb, $3)",
        position++, documents::EncodeDriverPolicy(entry), documents::kSchemaVersion);
  }
  BumpGeneration(txn, changes);
  return absl::OkStatus();
}

absl::StatusOr<core::WorkspaceClass> WriteClass(pqxx::work& txn, core::WorkspaceClass cls,
                                                int64_t expected_version, ChangeSet& changes) {
  pqxx::result row = txn.exec_params("SELECT version FROM classes WHERE id = $1 FOR UPDATE", cls.id);
  if (expected_version == 0) {
    if (!row.empty()) {
      const int64_t current = row[0][0].as<int64_t>();
      core::ErrorDetails details;
      details.reason = core::ErrorReason::kClassAlreadyExists;
      details.metadata = {{"class", cls.id}, {"current_version", absl::StrCat(current)}};
      details.resource = core::ResourceRef{"class", cls.id, "exists"};
      return core::ReasonError(absl::StrCat("class ", cls.id, " already exists (version ", current,
                                            "); pass expected_version to update it"),
                               std::move(details));
    }
    cls.version = 1;
  } else {
    if (row.empty()) return core::NotFoundError(core::ErrorReason::kClassNotFound, "class", cls.id);
    int64_t stored = row[0][0].as<int64_t>();
    if (stored != expected_version) {
      return core::VersionMismatchError("class", cls.id, stored, expected_version);
    }
    cls.version = stored + 1;
  }
  if (cls.is_default) txn.exec_params("UPDATE classes SET is_default = false WHERE is_default AND id <> $1", cls.id);
  UpsertClass(txn, cls);
  BumpGeneration(txn, changes);
  return cls;
}

int64_t CatalogGeneration(pqxx::work& txn) {
  return txn.exec1("SELECT generation FROM catalog_generation")[0].as<int64_t>();
}

}  // namespace wsched::store
