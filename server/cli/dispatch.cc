#include "server/cli/dispatch.h"

#include <iostream>
#include <map>

#include "server/cli/audit_command.h"
#include "server/cli/catalog_commands.h"
#include "server/cli/command_table.h"
#include "server/cli/completion.h"
#include "server/cli/driver_rollout_command.h"
#include "server/cli/help_text.h"
#include "server/cli/inventory_commands.h"
#include "server/cli/resource_commands.h"
#include "server/cli/scaling_commands.h"
#include "server/cli/server_info.h"
#include "server/cli/settings_commands.h"
#include "server/cli/simulate_command.h"
#include "server/cli/token_commands.h"
#include "server/cli/usage_command.h"
#include "server/cli/version_command.h"
#include "server/cli/workspace_commands.h"

namespace wsched::cli {
namespace {

// help [COMMAND]: asking for help is not a usage error (stdout, exit 0).
int Help(const Invocation& in) {
  if (in.args.empty()) {
    std::cout << GlobalUsage();
    return 0;
  }
  const CommandSpec* command = FindCommand(in.args[0]);
  if (command == nullptr || in.args.size() > 1) {
    std::cerr << "help: unknown command \"" << in.args[0] << "\" (see wschedctl help)\n";
    return 2;
  }
  std::cout << CommandUsage(*command);
  return 0;
}

int Completion(const Invocation& in) {
  if (in.args.size() != 1) {
    std::cerr << "usage: wschedctl completion bash|zsh\n";
    return 2;
  }
  absl::StatusOr<std::string> script = CompletionScript(in.args[0]);
  if (!script.ok()) {
    std::cerr << script.status().message() << "\n";
    return 2;
  }
  std::cout << *script;
  return 0;
}

int Version(const Invocation& in) {
  if (!in.args.empty()) {
    std::cerr << "usage: wschedctl version\n";
    return 2;
  }
  return VersionCommand(in.options);
}

// The command files' functions take (client, args, options).
template <int (*F)(const Client&, const std::vector<std::string>&, const Options&)>
int Call(const Invocation& in) {
  return F(in.client, in.args, in.options);
}

const std::map<std::string_view, Handler>& Handlers() {
  static const std::map<std::string_view, Handler> kHandlers = {
      {"get", Call<GetCommand>},
      {"describe", Call<DescribeCommand>},
      {"apply", Call<ApplyCommand>},
      {"delete", Call<DeleteCommand>},
      {"health", [](const Invocation& in) { return Health(in.client); }},
      {"rpcs", [](const Invocation& in) { return ListRpcs(in.client); }},
      {"catalog",
       [](const Invocation& in) { return CatalogCommand(in.client, in.args, in.options); }},
      {"classes", Call<ClassesCommand>},
      {"pools", Call<PoolsCommand>},
      {"nodes", Call<NodesCommand>},
      {"node", Call<NodeCommand>},
      {"driver-work", Call<DriverWorkCommand>},
      {"driver-report", Call<DriverReportCommand>},
      {"driver", Call<DriverCommand>},
      {"clear-gpu-health", Call<ClearGpuHealthCommand>},
      {"place", Call<PlaceCommand>},
      {"stop", Call<StopCommand>},
      {"workspace", Call<WorkspaceCommand>},
      {"workspaces", Call<WorkspacesCommand>},
      {"watch", Call<WatchCommand>},
      {"simulate", [](const Invocation& in) { return SimulateCommand(in.args, in.options); }},
      {"project", Call<ProjectCommand>},
      {"org", Call<OrgCommand>},
      {"resolve", Call<ResolveCommand>},
      {"scaling", Call<ScalingCommand>},
      {"audit", Call<AuditCommand>},
      {"usage", Call<UsageCommand>},
      {"token", [](const Invocation& in) { return TokenCommand(in.args, in.options, in.in); }},
      {"help", Help},
      {"version", Version},
      {"completion", Completion},
  };
  return kHandlers;
}

}  // namespace

Handler FindHandler(std::string_view command) {
  auto it = Handlers().find(command);
  return it == Handlers().end() ? nullptr : it->second;
}

std::vector<std::string_view> HandledCommands() {
  std::vector<std::string_view> names;
  for (const auto& [name, handler] : Handlers()) names.push_back(name);
  return names;
}

}  // namespace wsched::cli
