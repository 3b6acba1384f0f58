// Command name -> the function that runs it. The names are those of
// command_table.cc; dispatch_test checks that the two lists agree.
#ifndef WSCHED_SERVER_CLI_DISPATCH_H_
#define WSCHED_SERVER_CLI_DISPATCH_H_

#include <istream>
#include <string>
#include <string_view>
#include <vector>

#include "server/cli/client.h"
#include "server/cli/options.h"

namespace wsched::cli {

struct Invocation {
  const Client& client;
  // The words after the command name.
  const std::vector<std::string>& args;
  const Options& options;
  std::istream& in;
};

using Handler = int (*)(const Invocation& invocation);

// nullptr for a name without a handler.
Handler FindHandler(std::string_view command);

// Every name FindHandler knows.
std::vector<std::string_view> HandledCommands();

}  // namespace wsched::cli

#endif  // WSCHED_SERVER_CLI_DISPATCH_H_
