// `wschedctl catalog validate|diff|apply|show` and `wschedctl classes`.
#ifndef WSCHED_SERVER_CLI_CATALOG_COMMANDS_H_
#define WSCHED_SERVER_CLI_CATALOG_COMMANDS_H_

#include <string>
#include <vector>

#include "server/cli/client.h"
#include "server/cli/options.h"

namespace wsched::cli {

// validate works offline (no server): it prints every error with its path.
// apply sends options.dry_run and options.pool_versions.
int CatalogCommand(const Client& client, const std::vector<std::string>& args,
                   const Options& options);
int ClassesCommand(const Client& client, const std::vector<std::string>& args,
                   const Options& options);
// get classes (id empty) or get class ID: the table row(s).
int GetClasses(const Client& client, const std::string& id, const Options& options);
// describe class ID: the whole class (YAML unless -o json).
int DescribeClass(const Client& client, const std::string& id, const Options& options);

}  // namespace wsched::cli

#endif  // WSCHED_SERVER_CLI_CATALOG_COMMANDS_H_
