#include "server/core/class_resolution.h"

#include <algorithm>
#include <optional>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "server/core/error_reason.h"

namespace wsched::core {
namespace {

bool Contains(const std::vector<std::string>& list, const std::string& value) {
  return std::find(list.begin(), list.end(), value) != list.end();
}

}  // namespace

std::optional<std::string> ForbiddingRule(const std::string& class_id,
                                          const ProjectSettings& project,
                                          const OrgSettings& org) {
  if (!org.allowed_classes.empty() && !Contains(org.allowed_classes, class_id)) {
    return absl::StrCat("not in the allow-list of org ", org.org_id);
  }
  if (Contains(project.denied_classes, class_id)) {
    return absl::StrCat("in the deny-list of project ", project.project_id);
  }
  return std::nullopt;
}

const char* ClassSourceName(ClassSource source) {
  switch (source) {
    case ClassSource::kRequest: return "the request";
    case ClassSource::kPrevious: return "the previous run of the workspace";
    case ClassSource::kProjectDefault: return "the project default";
    case ClassSource::kOrgDefault: return "the org default";
    case ClassSource::kInstallationDefault: return "the installation default";
  }
  return "unknown";
}

absl::StatusOr<ClassResolution> ResolveClass(const ClassRequest& request, const Catalog& catalog,
                                             const ProjectSettings& project,
                                             const OrgSettings& org) {
  // Step 1: an explicit class is binding; any refusal is an error.
  if (!request.requested_class.empty()) {
    const std::string& id = request.requested_class;
    const WorkspaceClass* cls = catalog.FindClass(id);
    if (cls == nullptr) {
      return NotFoundError(ErrorReason::kClassNotFound, "class", id,
                           absl::StrCat("requested class ", id, " does not exist"));
    }
    // A restart may keep a deprecated class it already ran with.
    bool restart_of_same = request.previous_class == id;
    if (cls->deprecated && !restart_of_same) {
      return PreconditionError(ErrorReason::kClassDeprecated, "STATE", absl::StrCat("class/", id),
                               absl::StrCat("requested class ", id,
                                            " is deprecated and cannot be chosen for new workspaces"),
                               {{"class", id}});
    }
    if (auto rule = ForbiddingRule(id, project, org)) {
      // Policy, not the caller's identity: FAILED_PRECONDITION (AIP-193).
      return PreconditionError(ErrorReason::kClassNotAllowed, "POLICY", absl::StrCat("class/", id),
                               absl::StrCat("requested class ", id, " is forbidden: ", *rule),
                               {{"class", id}, {"rule", *rule}});
    }
    return ClassResolution{id, ClassSource::kRequest,
                           absl::StrCat("class ", id, " from the request"), {}};
  }

  ClassResolution result;
  auto try_candidate = [&](const std::string& id, ClassSource source, bool allow_deprecated,
                           const std::string& where) -> bool {
    if (id.empty()) return false;
    const WorkspaceClass* cls = catalog.FindClass(id);
    std::string prefix = absl::StrCat(ClassSourceName(source), where, " (", id, ")");
    if (cls == nullptr) {
      result.skipped.push_back(absl::StrCat(prefix, ": class does not exist"));
      return false;
    }
    if (cls->deprecated && !allow_deprecated) {
      result.skipped.push_back(absl::StrCat(prefix, ": class is deprecated"));
      return false;
    }
    if (auto rule = ForbiddingRule(id, project, org)) {
      result.skipped.push_back(absl::StrCat(prefix, ": class is ", *rule));
      return false;
    }
    result.class_id = id;
    result.source = source;
    result.explanation = absl::StrCat("class ", id, " from ", ClassSourceName(source), where);
    return true;
  };

  // Step 2: a restart keeps its class, deprecated or not.
  if (try_candidate(request.previous_class, ClassSource::kPrevious, true, "")) return result;
  if (try_candidate(project.default_class, ClassSource::kProjectDefault, false,
                    absl::StrCat(" set on project ", request.project_id))) {
    return result;
  }
  if (try_candidate(org.default_class, ClassSource::kOrgDefault, false,
                    absl::StrCat(" set on org ", request.org_id))) {
    return result;
  }
  const WorkspaceClass* fallback = catalog.DefaultClass();
  if (fallback != nullptr &&
      try_candidate(fallback->id, ClassSource::kInstallationDefault, false, "")) {
    return result;
  }
  std::string why = fallback == nullptr ? "the catalog has no default class" : result.skipped.back();
  return PreconditionError(
      ErrorReason::kNoClassApplies, "STATE", absl::StrCat("project/", request.project_id),
      absl::StrCat("no class applies to project ", request.project_id, ": ", why),
      {{"project", request.project_id}});
}

}  // namespace wsched::core
