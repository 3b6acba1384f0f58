#include "server/cli/resource_commands.h"

#include <iostream>

#include "server/cli/catalog_commands.h"
#include "server/cli/inventory_commands.h"
#include "server/cli/resource_names.h"
#include "server/cli/settings_commands.h"
#include "server/cli/workspace_commands.h"

namespace wsched::cli {
namespace {

// The resource named by args[0]; prints why not and returns nullptr.
const ResourceSpec* ResourceArg(const std::vector<std::string>& args, const char* usage) {
  if (args.empty()) {
    std::cerr << "usage: " << usage << " (see wschedctl help " << usage << ")\n";
    return nullptr;
  }
  const ResourceSpec* spec = FindResource(args[0]);
  if (spec == nullptr) {
    std::cerr << "unknown resource \"" << args[0]
              << "\"; one of classes, pools, nodes, workspaces, projects, orgs, driver-work\n";
  }
  return spec;
}

}  // namespace

int GetCommand(const Client& client, const std::vector<std::string>& args, const Options& options) {
  const ResourceSpec* spec = ResourceArg(args, "get");
  if (spec == nullptr || args.size() > 2) {
    if (spec != nullptr) std::cerr << "usage: wschedctl get RESOURCE [NAME]\n";
    return 2;
  }
  const std::string name = args.size() == 2 ? args[1] : "";
  if (name.empty() && !spec->listable) {
    std::cerr << "get " << spec->plural << " needs a NAME: the API reads them one at a time\n";
    return 2;
  }
  if (!name.empty() && !spec->named) {
    std::cerr << "get " << spec->plural << " takes no NAME: it is a list only\n";
    return 2;
  }
  if ((options.watch || options.resume_version) &&
      spec->resource != Resource::kWorkspaces &&
      spec->resource != Resource::kNodes) {
    std::cerr << "get " << spec->plural
              << ": --watch and --resume-version are for get workspaces and "
                 "get nodes only (see "
                 "wschedctl help get)\n";
    return 2;
  }
  switch (spec->resource) {
    case Resource::kClasses: return GetClasses(client, name, options);
    case Resource::kPools: return GetPools(client, name, options);
    case Resource::kNodes: return GetNodes(client, name, options);
    case Resource::kWorkspaces: return GetWorkspaces(client, name, options);
    case Resource::kProjects: return ShowProject(client, name, options);
    case Resource::kOrgs: return ShowOrg(client, name, options);
    case Resource::kDriverWork: return DriverWorkCommand(client, {}, options);
  }
  return 2;
}

int DescribeCommand(const Client& client, const std::vector<std::string>& args,
                    const Options& options) {
  const ResourceSpec* spec = ResourceArg(args, "describe");
  if (spec == nullptr || args.size() != 2 || !spec->named) {
    if (spec != nullptr) std::cerr << "usage: wschedctl describe RESOURCE NAME\n";
    return 2;
  }
  const std::string& name = args[1];
  Options as_yaml = options;
  if (!as_yaml.structured()) as_yaml.output = OutputFormat::kYaml;
  switch (spec->resource) {
    case Resource::kClasses: return DescribeClass(client, name, options);
    // A pool has no detail view of its own: all its fields, as YAML.
    case Resource::kPools: return GetPools(client, name, as_yaml);
    case Resource::kNodes: return DescribeNode(client, name, options);
    case Resource::kWorkspaces: return DescribeWorkspace(client, name, options);
    case Resource::kProjects: return ShowProject(client, name, options);
    case Resource::kOrgs: return ShowOrg(client, name, options);
    case Resource::kDriverWork: break;
  }
  return 2;
}

int DeleteCommand(const Client& client, const std::vector<std::string>& args,
                  const Options& options) {
  const ResourceSpec* spec = ResourceArg(args, "delete");
  if (spec == nullptr) return 2;
  if (spec->resource != Resource::kNodes) {
    std::cerr << "delete: only nodes can be deleted; classes and pools leave with the catalog "
                 "(wschedctl apply -f FILE)\n";
    return 2;
  }
  if (args.size() != 2) {
    std::cerr << "usage: wschedctl delete node NAME\n";
    return 2;
  }
  return NodeCommand(client, {"remove", args[1]}, options);
}

int ApplyCommand(const Client& client, const std::vector<std::string>& args,
                 const Options& options) {
  if (options.filename.empty() || !args.empty()) {
    std::cerr << "usage: wschedctl apply -f FILE [--dry-run]\n";
    return 2;
  }
  return CatalogCommand(client, {"apply", options.filename}, options);
}

}  // namespace wsched::cli
