// Project and org class settings.
#ifndef WSCHED_SERVER_STORE_SETTINGS_REPOSITORY_H_
#define WSCHED_SERVER_STORE_SETTINGS_REPOSITORY_H_

#include <optional>
#include <pqxx/pqxx>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "server/core/settings.h"
#include "server/store/change_log.h"

namespace wsched::store {

// Settings of a project; defaults (no default class, empty deny-list) when
// none are stored. `version`, when given, gets the row's version (0: none).
absl::StatusOr<core::ProjectSettings> LoadProjectSettings(pqxx::work& txn,
                                                          const std::string& project_id,
                                                          int64_t* version = nullptr);
absl::StatusOr<core::OrgSettings> LoadOrgSettings(pqxx::work& txn, const std::string& org_id,
                                                  int64_t* version = nullptr);

// Both record the change in `changes` (published by the caller's unit of
// work at commit): replicas cache settings and drop the entry when they see
// it, and the version lets a group commit confirm a decision used current
// ones. `expected_version` 0 writes unconditionally; otherwise the write
// is one statement guarded by the stored version, so of two writers that
// read the same version exactly one succeeds and the other gets ABORTED
// (VERSION_MISMATCH, naming the current version) with nothing changed.
// `version`, when given, gets the new version.
absl::Status SaveProjectSettings(pqxx::work& txn, const core::ProjectSettings& settings,
                                 int64_t expected_version, ChangeSet& changes,
                                 int64_t* version = nullptr);
absl::Status SaveOrgSettings(pqxx::work& txn, const core::OrgSettings& settings,
                             int64_t expected_version, ChangeSet& changes,
                             int64_t* version = nullptr);

// A spending limit as the settings tables store it (migration 0021), and
// back; a document this cannot read is INTERNAL (damaged data).
std::string SpendingLimitJson(const core::SpendingLimit& limit);
absl::StatusOr<core::SpendingLimit> ParseSpendingLimitJson(const std::string& text);

// The projects of `org_id` that have a spending limit of their own.
absl::StatusOr<std::vector<std::pair<std::string, core::SpendingLimit>>> LoadProjectLimitsOfOrg(
    pqxx::work& txn, const std::string& org_id);

// Serializes the transaction with every other one that judges or changes
// the org's limits and quota: the group commit's per-org advisory lock
// (write_batch.cc), held to the end of the transaction.
void LockOrgLimits(pqxx::work& txn, const std::string& org_id);

}  // namespace wsched::store

#endif  // WSCHED_SERVER_STORE_SETTINGS_REPOSITORY_H_
