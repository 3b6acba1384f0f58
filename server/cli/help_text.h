// The help texts, generated from the command and flag tables.
#ifndef WSCHED_SERVER_CLI_HELP_TEXT_H_
#define WSCHED_SERVER_CLI_HELP_TEXT_H_

#include <string>

#include "server/cli/command_table.h"

namespace wsched::cli {

// Every command by group, the global flags, resources, environment and
// exit status.
std::string GlobalUsage();

// One command: its usage lines, its flags, a pointer to the global ones.
std::string CommandUsage(const CommandSpec& command);

}  // namespace wsched::cli

#endif  // WSCHED_SERVER_CLI_HELP_TEXT_H_
