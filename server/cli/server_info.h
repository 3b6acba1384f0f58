// `wschedctl health` and `wschedctl rpcs`: what the server says about itself.
#ifndef WSCHED_SERVER_CLI_SERVER_INFO_H_
#define WSCHED_SERVER_CLI_SERVER_INFO_H_

#include "server/cli/client.h"

namespace wsched::cli {

// Prints SERVING/NOT_SERVING; returns the process exit code.
int Health(const Client& client);

// Lists every service and RPC the server offers, read over server reflection.
int ListRpcs(const Client& client);

}  // namespace wsched::cli

#endif  // WSCHED_SERVER_CLI_SERVER_INFO_H_
