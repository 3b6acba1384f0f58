#include "server/cli/run.h"

#include <iostream>

#include "absl/strings/str_cat.h"
#include "server/cli/arg_parser.h"
#include "server/cli/command_table.h"
#include "server/cli/dispatch.h"
#include "server/cli/help_text.h"
#include "server/cli/options_from_flags.h"

namespace wsched::cli {
namespace {

// --help anywhere: the command's usage when a known command is named,
// else the global one; on stdout, exit 0, as asking is not an error.
int PrintHelp(const std::vector<std::string>& words) {
  const CommandSpec* command = words.empty() ? nullptr : FindCommand(words[0]);
  std::cout << (command != nullptr ? CommandUsage(*command) : GlobalUsage());
  return 0;
}

// A channel only for commands that call the server, so `token create` works
// with broken TLS flags. The channel connects lazily, on the first call.
absl::StatusOr<Client> Connect(const ParsedArgs& parsed, const EnvLookup& env) {
  absl::StatusOr<ConnectionSettings> settings = ResolveConnection(parsed, env);
  if (!settings.ok()) return settings.status();
  auto channel = grpc_api::CreateClientChannel(settings->server, settings->tls);
  if (!channel.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("--tls-*: ", channel.status().message()));
  }
  Client client;
  client.channel = *std::move(channel);
  client.token = settings->token;
  client.timeout = settings->timeout;
  return client;
}

}  // namespace

int Run(const std::vector<std::string>& args, std::istream& in, const EnvLookup& env) {
  absl::StatusOr<ParsedArgs> parsed = ParseArgs(args);
  if (!parsed.ok()) {
    std::cerr << parsed.status().message() << " (see wschedctl --help)\n";
    return kExitUsage;
  }
  std::vector<std::string> words = parsed->positional;
  if (parsed->GetBool("help")) return PrintHelp(words);
  if (parsed->GetBool("version") && words.empty()) words = {"version"};
  if (words.empty()) {
    std::cerr << GlobalUsage();
    return kExitUsage;
  }
  const CommandSpec* command = FindCommand(words[0]);
  Handler handler = FindHandler(words[0]);
  if (command == nullptr || handler == nullptr) {
    std::cerr << "unknown command \"" << words[0] << "\" (see wschedctl help)\n";
    return kExitUsage;
  }
  absl::StatusOr<Options> options = OptionsFromFlags(*parsed);
  if (!options.ok()) {
    std::cerr << options.status().message() << "\n";
    return kExitUsage;
  }
  if (options->output == OutputFormat::kCsv && !command->csv) {
    std::cerr << "-o csv: only wschedctl usage prints CSV (see wschedctl " << command->name
              << " --help)\n";
    return kExitUsage;
  }
  Client client;
  if (command->remote) {
    absl::StatusOr<Client> connected = Connect(*parsed, env);
    if (!connected.ok()) {
      std::cerr << connected.status().message() << "\n";
      return kExitUsage;
    }
    client = *std::move(connected);
  }
  const std::vector<std::string> rest(words.begin() + 1, words.end());
  return handler(Invocation{client, rest, *options, in});
}

}  // namespace wsched::cli
