// `wschedctl version`: what was built, and what the server says it runs.
#ifndef WSCHED_SERVER_CLI_VERSION_COMMAND_H_
#define WSCHED_SERVER_CLI_VERSION_COMMAND_H_

#include "server/cli/options.h"

namespace wsched::cli {

// The API has no version RPC (api/wsched/v1), so the server's version is
// reported as not exposed rather than guessed; no call is made.
int VersionCommand(const Options& options);

}  // namespace wsched::cli

#endif  // WSCHED_SERVER_CLI_VERSION_COMMAND_H_
