// The project and org settings rules, as plain operations over the store:
// reading and saving each (versioned), and resolving the class a new
// workspace would get. Who may do what is the transport's check; the rules
// of the settings themselves (classes named exist, a default is
// choosable, a project stays in its org) are here.
#ifndef WSCHED_SERVER_APP_SETTINGS_OPERATIONS_H_
#define WSCHED_SERVER_APP_SETTINGS_OPERATIONS_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "server/core/class_resolution.h"
#include "server/core/settings.h"
#include "server/store/database.h"

namespace wsched::app {

template <typename Settings>
struct Versioned {
  Settings settings;
  int64_t version = 0;  // 0: nothing stored (the defaults).
};

class SettingsOperations {
 public:
  explicit SettingsOperations(store::Database* db) : db_(db) {}

  absl::StatusOr<Versioned<core::ProjectSettings>> GetProject(const std::string& project_id) const;
  // Saves at `expected_version` (0: unchecked; ABORTED VERSION_MISMATCH
  // otherwise) when every class it names exists and its default is not
  // deprecated (INVALID_ARGUMENT naming the field). A project stays in its
  // org unless `may_move_org` (admins): FAILED_PRECONDITION
  // PROJECT_IN_OTHER_ORG. Only an admin (`may_move_org`) changes its spending
  // limit: for another caller a different limit than the stored one is
  // PERMISSION_DENIED naming settings.spending_limit, and it must fit inside
  // the org's (INVALID_ARGUMENT). One transaction: read, checked, saved.
  absl::StatusOr<Versioned<core::ProjectSettings>> SetProject(const core::ProjectSettings& settings,
                                                              int64_t expected_version,
                                                              bool may_move_org);
  absl::StatusOr<Versioned<core::OrgSettings>> GetOrg(const std::string& org_id) const;
  absl::StatusOr<Versioned<core::OrgSettings>> SetOrg(const core::OrgSettings& settings,
                                                      int64_t expected_version);
  // The class a new workspace would get, and why (core/class_resolution.h),
  // on the stored catalog and settings.
  absl::StatusOr<core::ClassResolution> Resolve(const core::ClassRequest& request) const;

 private:
  store::Database* const db_;
};

}  // namespace wsched::app

#endif  // WSCHED_SERVER_APP_SETTINGS_OPERATIONS_H_
