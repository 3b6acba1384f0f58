// wschedctl from its command line to its exit status: parse, pick the
// command, connect, run.
#ifndef WSCHED_SERVER_CLI_RUN_H_
#define WSCHED_SERVER_CLI_RUN_H_

#include <istream>
#include <string>
#include <vector>

#include "server/cli/connection_settings.h"

namespace wsched::cli {

// Exit status: 0 ok, 1 the call failed, 2 bad usage (help_text.cc).
inline constexpr int kExitUsage = 2;

// `args` without the program name.
int Run(const std::vector<std::string>& args, std::istream& in, const EnvLookup& env);

}  // namespace wsched::cli

#endif  // WSCHED_SERVER_CLI_RUN_H_
