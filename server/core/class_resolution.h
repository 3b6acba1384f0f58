// Which class a new workspace gets, and why (docs/placement.md, "The flow of
// one request", step 3).
#ifndef WSCHED_SERVER_CORE_CLASS_RESOLUTION_H_
#define WSCHED_SERVER_CORE_CLASS_RESOLUTION_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "server/core/catalog.h"
#include "server/core/settings.h"

namespace wsched::core {

enum class ClassSource { kRequest, kPrevious, kProjectDefault, kOrgDefault, kInstallationDefault };

struct ClassRequest {
  std::string org_id;
  std::string project_id;
  std::string requested_class;  // Empty: none named.
  std::string previous_class;   // Empty: not a restart.
};

struct ClassResolution {
  std::string class_id;
  ClassSource source = ClassSource::kInstallationDefault;
  std::string explanation;           // "class gpu-a100-1 from the project default set on project p-42"
  std::vector<std::string> skipped;  // Candidates passed over, each with its rule.
};

// First step that applies wins; each step skips a class the policies forbid.
// An explicitly requested class that is unknown, deprecated or forbidden is
// an error (FAILED_PRECONDITION / NOT_FOUND) naming the rule: never a silent
// fallback. A restart keeps its previous class even when it is deprecated.
absl::StatusOr<ClassResolution> ResolveClass(const ClassRequest& request, const Catalog& catalog,
                                             const ProjectSettings& project,
                                             const OrgSettings& org);

const char* ClassSourceName(ClassSource source);

// The policy rule that forbids the class for this project, if any:
// "not in the allow-list of org o-1", "in the deny-list of project p-42".
std::optional<std::string> ForbiddingRule(const std::string& class_id,
                                          const ProjectSettings& project,
                                          const OrgSettings& org);

}  // namespace wsched::core

#endif  // WSCHED_SERVER_CORE_CLASS_RESOLUTION_H_
