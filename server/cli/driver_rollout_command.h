// `wschedctl driver rollout status|pause|resume`: the driver rollouts of GPU
// pools (docs/operations.md "Driver rollouts").
#ifndef WSCHED_SERVER_CLI_DRIVER_ROLLOUT_COMMAND_H_
#define WSCHED_SERVER_CLI_DRIVER_ROLLOUT_COMMAND_H_

#include <string>
#include <vector>

#include "server/cli/client.h"
#include "server/cli/options.h"

namespace wsched::cli {

// driver rollout status [POOL] | pause POOL [REASON] | resume POOL
int DriverCommand(const Client& client, const std::vector<std::string>& args,
                  const Options& options);

}  // namespace wsched::cli

#endif  // WSCHED_SERVER_CLI_DRIVER_ROLLOUT_COMMAND_H_
