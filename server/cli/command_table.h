// Every wschedctl command, in one table: the global help, `help COMMAND`,
// `COMMAND --help`, the shell completion and the dispatcher all read it.
#ifndef WSCHED_SERVER_CLI_COMMAND_TABLE_H_
#define WSCHED_SERVER_CLI_COMMAND_TABLE_H_

#include <string_view>
#include <vector>

namespace wsched::cli {

// One line of usage: "node cordon NAME" and what it does.
struct UsageLine {
  std::string_view synopsis;  // after "wschedctl "
  std::string_view summary;
};

struct CommandSpec {
  std::string_view name;   // the first word: "get", "node"
  std::string_view group;  // the heading it is listed under
  std::vector<UsageLine> usage;
  // The flags of this command (canonical names); the global ones apply too.
  std::vector<std::string_view> flags;
  // Calls the server (needs a channel and maybe a token).
  bool remote = true;
  // Prints -o csv (else that is a usage error).
  bool csv = false;
};

// In the order of the global help; a group's commands are adjacent.
const std::vector<CommandSpec>& AllCommands();

// nullptr for an unknown command.
const CommandSpec* FindCommand(std::string_view name);

}  // namespace wsched::cli

#endif  // WSCHED_SERVER_CLI_COMMAND_TABLE_H_
