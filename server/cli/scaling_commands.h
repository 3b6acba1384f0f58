// `wschedctl scaling [watch]`: the autoscaler signals per pool.
#ifndef WSCHED_SERVER_CLI_SCALING_COMMANDS_H_
#define WSCHED_SERVER_CLI_SCALING_COMMANDS_H_

#include <string>
#include <vector>

#include "server/cli/client.h"
#include "server/cli/options.h"

namespace wsched::cli {

// scaling: the current state; scaling watch [POOL...]: full state, then each change.
int ScalingCommand(const Client& client, const std::vector<std::string>& args,
                   const Options& options);

}  // namespace wsched::cli

#endif  // WSCHED_SERVER_CLI_SCALING_COMMANDS_H_
