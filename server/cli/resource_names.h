// The resources of `get`, `describe` and `delete`, with the names kubectl
// users type for them: singular, plural and a short form.
#ifndef WSCHED_SERVER_CLI_RESOURCE_NAMES_H_
#define WSCHED_SERVER_CLI_RESOURCE_NAMES_H_

#include <optional>
#include <string_view>
#include <vector>

namespace wsched::cli {

enum class Resource { kClasses, kPools, kNodes, kWorkspaces, kProjects, kOrgs, kDriverWork };

struct ResourceSpec {
  Resource resource;
  std::string_view plural;    // "nodes": the name the help shows
  std::vector<std::string_view> other_names;  // "node", "no"
  // Without a NAME `get` lists them; false where the API has no list.
  bool listable;
  // `get`/`describe` take a NAME; false for driver-work (a list only).
  bool named;
};

const std::vector<ResourceSpec>& AllResources();

// The resource any of its names stands for; nullopt when none does.
const ResourceSpec* FindResource(std::string_view name);

}  // namespace wsched::cli

#endif  // WSCHED_SERVER_CLI_RESOURCE_NAMES_H_
