// `wschedctl project|org|resolve`: per-project and per-org class settings, and
// "which class would a new workspace get, and why".
#ifndef WSCHED_SERVER_CLI_SETTINGS_COMMANDS_H_
#define WSCHED_SERVER_CLI_SETTINGS_COMMANDS_H_

#include <string>
#include <vector>

#include "server/cli/client.h"
#include "server/cli/options.h"

namespace wsched::cli {

// project get PROJECT | project set-default PROJECT --org=O CLASS
int ProjectCommand(const Client& client, const std::vector<std::string>& args,
                   const Options& options);
// org get ORG | org set ORG [--default=C] [--allow=a,b] [--gpu_quota=N]
int OrgCommand(const Client& client, const std::vector<std::string>& args, const Options& options);
// get|describe project PROJECT (= project get PROJECT).
int ShowProject(const Client& client, const std::string& project, const Options& options);
// get|describe org ORG (= org get ORG).
int ShowOrg(const Client& client, const std::string& org, const Options& options);
// resolve --org=O --project=P [--class=C] [--previous=C]
int ResolveCommand(const Client& client, const std::vector<std::string>& args,
                   const Options& options);

}  // namespace wsched::cli

#endif  // WSCHED_SERVER_CLI_SETTINGS_COMMANDS_H_
