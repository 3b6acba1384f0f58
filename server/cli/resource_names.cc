#include "server/cli/resource_names.h"

namespace wsched::cli {

const std::vector<ResourceSpec>& AllResources() {
  using R = Resource;
  static const std::vector<ResourceSpec> kResources = {
      {R::kClasses, "classes", {"class", "cl"}, true, true},
      {R::kPools, "pools", {"pool", "po"}, true, true},
      {R::kNodes, "nodes", {"node", "no"}, true, true},
      {R::kWorkspaces, "workspaces", {"workspace", "ws"}, true, true},
      // The API reads settings one project or org at a time; it lists none.
      {R::kProjects, "projects", {"project", "proj"}, false, true},
      {R::kOrgs, "orgs", {"org"}, false, true},
      {R::kDriverWork, "driver-work", {"driverwork", "dw"}, true, false},
  };
  return kResources;
}

const ResourceSpec* FindResource(std::string_view name) {
  for (const ResourceSpec& spec : AllResources()) {
    if (spec.plural == name) return &spec;
    for (std::string_view other : spec.other_names) {
      if (other == name) return &spec;
    }
  }
  return nullptr;
}

}  // namespace wsched::cli
