// Project and org class settings.
#ifndef WSCHED_SERVER_STORE_SETTINGS_REPOSITORY_H_
#define WSCHED_SERVER_STORE_SETTINGS_REPOSITORY_H_

#include <string>

#include <pqxx/pqxx>

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

}  // namespace wsched::store

#endif  // WSCHED_SERVER_STORE_SETTINGS_REPOSITORY_H_
