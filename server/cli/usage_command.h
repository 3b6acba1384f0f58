// wschedctl usage list|summary: the usage ledger (UsageService); -o csv is
// the billing export (docs/billing.md).
#ifndef WSCHED_SERVER_CLI_USAGE_COMMAND_H_
#define WSCHED_SERVER_CLI_USAGE_COMMAND_H_

#include <string>
#include <vector>

#include "server/cli/client.h"
#include "server/cli/options.h"

namespace wsched::cli {

// list: every placement overlapping --since..--until (every page), clipped
// to it. summary: totals by --bucket in --time-zone and --group-by.
int UsageCommand(const Client& client, const std::vector<std::string>& args,
                 const Options& options);

}  // namespace wsched::cli

#endif  // WSCHED_SERVER_CLI_USAGE_COMMAND_H_
