// The kubectl-style verbs: get, describe, delete and apply. Each maps onto
// the command files' functions, so `get nodes` and `nodes` print the same.
#ifndef WSCHED_SERVER_CLI_RESOURCE_COMMANDS_H_
#define WSCHED_SERVER_CLI_RESOURCE_COMMANDS_H_

#include <string>
#include <vector>

#include "server/cli/client.h"
#include "server/cli/options.h"

namespace wsched::cli {

// get RESOURCE [NAME]
int GetCommand(const Client& client, const std::vector<std::string>& args, const Options& options);
// describe RESOURCE NAME
int DescribeCommand(const Client& client, const std::vector<std::string>& args,
                    const Options& options);
// delete node NAME
int DeleteCommand(const Client& client, const std::vector<std::string>& args,
                  const Options& options);
// apply -f FILE [--dry-run]
int ApplyCommand(const Client& client, const std::vector<std::string>& args,
                 const Options& options);

}  // namespace wsched::cli

#endif  // WSCHED_SERVER_CLI_RESOURCE_COMMANDS_H_
