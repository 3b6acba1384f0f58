#include "server/app/settings_operations.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "server/core/error_reason.h"
#include "server/store/unit_of_work.h"

namespace wsched::app {
namespace {

// Classes a setting refers to must exist; a default must also be choosable.
absl::Status CheckClassReferences(const core::Catalog& catalog, const std::string& default_class,
                                  const std::vector<std::string>& listed,
                                  const std::string& list_field) {
  if (!default_class.empty()) {
    const core::WorkspaceClass* cls = catalog.FindClass(default_class);
    if (cls == nullptr) {
      return core::InvalidFieldError("settings.default_class",
                                     absl::StrCat("class ", default_class, " does not exist"));
    }
    if (cls->deprecated) {
      return core::InvalidFieldError(
          "settings.default_class",
          absl::StrCat("class ", default_class, " is deprecated and cannot be a default"));
    }
  }
  for (size_t i = 0; i < listed.size(); ++i) {
    if (catalog.FindClass(listed[i]) == nullptr) {
      return core::InvalidFieldError(absl::StrCat(list_field, "[", i, "]"),
                                     absl::StrCat("class ", listed[i], " does not exist"));
    }
  }
  return absl::OkStatus();
}

// Org admins set budgets; a project owner keeps the one it was given.
absl::Status LimitNeedsAdmin(const core::ProjectSettings& settings) {
  return core::ReasonError(
      absl::StrCat("settings.spending_limit: only an admin changes the spending limit of project ",
                   settings.project_id),
      {.reason = core::ErrorReason::kPermissionDenied,
       .metadata = {{"project", settings.project_id},
                    {"field", "settings.spending_limit"},
                    {"required_roles", "admin"}}});
}

absl::Status InOtherOrg(const core::ProjectSettings& settings, const std::string& stored_org) {
  return core::ReasonError(
      absl::StrCat("settings.org_id: project ", settings.project_id, " belongs to org ", stored_org),
      {.reason = core::ErrorReason::kProjectInOtherOrg,
       .metadata = {{"project", settings.project_id},
                    {"org", settings.org_id},
                    {"stored_org", stored_org},
                    {"required_roles", "admin"}}});
}

// A project's limit fits inside its org's (core::ProjectLimitOutsideOrg).
absl::Status CheckProjectLimitInOrg(const core::ProjectSettings& project,
                                    const std::optional<core::SpendingLimit>& org_limit) {
  if (!project.spending_limit) return absl::OkStatus();
  std::vector<std::string> problems =
      core::ProjectLimitOutsideOrg(*project.spending_limit, org_limit, "settings.spending_limit");
  if (problems.empty()) return absl::OkStatus();
  return core::InvalidFieldLinesError(problems);
}

// An org's new limit must still hold every project's limit of the org.
absl::Status CheckOrgLimitHoldsProjects(
    const core::OrgSettings& org,
    const std::vector<std::pair<std::string, core::SpendingLimit>>& project_limits) {
  if (!org.spending_limit) return absl::OkStatus();
  for (const auto& [project, limit] : project_limits) {
    std::vector<std::string> problems = core::ProjectLimitOutsideOrg(limit, org.spending_limit, "");
    if (problems.empty()) continue;
    return core::InvalidFieldError(
        "settings.spending_limit",
        absl::StrCat("project ", project, "'s limit would no longer fit inside it (",
                     problems.front().substr(1), "); change the project's limit first"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Versioned<core::ProjectSettings>> SettingsOperations::GetProject(
    const std::string& project_id) const {
  Versioned<core::ProjectSettings> read;
  absl::Status status = store::UnitOfWork::Run(*db_, "reading project settings",
                                               [&](store::UnitOfWork& unit) -> absl::Status {
    auto settings = unit.settings().LoadProject(project_id, &read.version);
    if (!settings.ok()) return settings.status();
    read.settings = *std::move(settings);
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  return read;
}

absl::StatusOr<Versioned<core::ProjectSettings>> SettingsOperations::SetProject(
    const core::ProjectSettings& settings, int64_t expected_version, bool may_move_org) {
  Versioned<core::ProjectSettings> saved{settings};
  // Read, checked and saved in one transaction; the save itself is guarded
  // by expected_version (settings_repository.h).
  absl::Status status = store::UnitOfWork::Run(*db_, "saving project settings",
                                               [&](store::UnitOfWork& unit) -> absl::Status {
    // Judged against the org's limit under the org's lock, so an org
    // lowering its limit at the same time cannot slip past this check.
    if (settings.spending_limit) unit.settings().LockOrgLimits(settings.org_id);
    auto stored = unit.settings().LoadProject(settings.project_id);
    if (!stored.ok()) return stored.status();
    // A project belongs to one org; only an admin may move it.
    if (!stored->org_id.empty() && stored->org_id != settings.org_id && !may_move_org) {
      return InOtherOrg(settings, stored->org_id);
    }
    if (!may_move_org && settings.spending_limit != stored->spending_limit) {
      return LimitNeedsAdmin(settings);
    }
    auto catalog = unit.catalog().Load();
    if (!catalog.ok()) return catalog.status();
    if (absl::Status s = CheckClassReferences(*catalog, settings.default_class,
                                              settings.denied_classes, "settings.denied_classes");
        !s.ok()) {
      return s;
    }
    if (settings.spending_limit) {
      auto org = unit.settings().LoadOrg(settings.org_id);
      if (!org.ok()) return org.status();
      if (absl::Status s = CheckProjectLimitInOrg(settings, org->spending_limit); !s.ok()) return s;
    }
    return unit.settings().SaveProject(saved.settings, expected_version, &saved.version);
  });
  if (!status.ok()) return status;
  return saved;
}

absl::StatusOr<Versioned<core::OrgSettings>> SettingsOperations::GetOrg(
    const std::string& org_id) const {
  Versioned<core::OrgSettings> read;
  absl::Status status = store::UnitOfWork::Run(*db_, "reading org settings",
                                               [&](store::UnitOfWork& unit) -> absl::Status {
    auto settings = unit.settings().LoadOrg(org_id, &read.version);
    if (!settings.ok()) return settings.status();
    read.settings = *std::move(settings);
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  return read;
}

absl::StatusOr<Versioned<core::OrgSettings>> SettingsOperations::SetOrg(
    const core::OrgSettings& settings, int64_t expected_version) {
  Versioned<core::OrgSettings> saved{settings};
  absl::Status status = store::UnitOfWork::Run(*db_, "saving org settings",
                                               [&](store::UnitOfWork& unit) -> absl::Status {
    auto catalog = unit.catalog().Load();
    if (!catalog.ok()) return catalog.status();
    if (absl::Status s = CheckClassReferences(*catalog, settings.default_class,
                                              settings.allowed_classes, "settings.allowed_classes");
        !s.ok()) {
      return s;
    }
    // The org's lock: a project changing its limit at the same time waits.
    unit.settings().LockOrgLimits(settings.org_id);
    auto project_limits = unit.settings().LoadProjectLimitsOfOrg(settings.org_id);
    if (!project_limits.ok()) return project_limits.status();
    if (absl::Status s = CheckOrgLimitHoldsProjects(settings, *project_limits); !s.ok()) return s;
    return unit.settings().SaveOrg(saved.settings, expected_version, &saved.version);
  });
  if (!status.ok()) return status;
  return saved;
}

absl::StatusOr<core::ClassResolution> SettingsOperations::Resolve(
    const core::ClassRequest& request) const {
  absl::StatusOr<core::ClassResolution> resolution;
  absl::Status status = store::UnitOfWork::Run(*db_, "resolving class",
                                               [&](store::UnitOfWork& unit) -> absl::Status {
    auto catalog = unit.catalog().Load();
    if (!catalog.ok()) return catalog.status();
    auto project = unit.settings().LoadProject(request.project_id);
    if (!project.ok()) return project.status();
    auto org = unit.settings().LoadOrg(request.org_id);
    if (!org.ok()) return org.status();
    resolution = core::ResolveClass(request, *catalog, *project, *org);
    return resolution.status();
  });
  if (!status.ok()) return status;
  return resolution;
}

}  // namespace wsched::app
