// `wschedctl place|stop|workspace|workspaces|watch`: the placement hot path,
// by hand.
#ifndef WSCHED_SERVER_CLI_WORKSPACE_COMMANDS_H_
#define WSCHED_SERVER_CLI_WORKSPACE_COMMANDS_H_

#include <string>
#include <vector>

#include "server/cli/client.h"
#include "server/cli/options.h"
#include "wsched/v1/placement.pb.h"

namespace wsched::cli {

// "pending", "PENDING" or "WORKSPACE_STATE_PENDING"; false for anything else.
bool ParseWorkspaceState(const std::string& text, v1::WorkspaceState* state);
// The columns of `get workspaces` (-o wide: more), and one workspace's row.
std::vector<std::string> WorkspaceTableHeader(const Options& options);
std::vector<std::string> WorkspaceTableRow(const v1::Workspace& workspace, const Options& options);

// place WORKSPACE_ID --org=O --project=P --user=U [--class=C] [--restart] [--priority=N]
int PlaceCommand(const Client& client, const std::vector<std::string>& args, const Options& options);
// stop WORKSPACE_ID
int StopCommand(const Client& client, const std::vector<std::string>& args, const Options& options);
// workspace get ID (= describe workspace ID)
int WorkspaceCommand(const Client& client, const std::vector<std::string>& args,
                     const Options& options);
// workspaces [--node=N] [--pool=P] [--state=S] [--watch]
int WorkspacesCommand(const Client& client, const std::vector<std::string>& args,
                      const Options& options);
// get workspaces [filters] (id empty) or get workspace ID: the table row(s);
// get workspaces --watch: WatchWorkspaces (watch_workspaces_command.h).
int GetWorkspaces(const Client& client, const std::string& id, const Options& options);
// describe workspace ID: the full view with GPUs and the device spec.
int DescribeWorkspace(const Client& client, const std::string& id, const Options& options);
// watch ID: streams state changes until the workspace stops (or Ctrl-C).
int WatchCommand(const Client& client, const std::vector<std::string>& args, const Options& options);

}  // namespace wsched::cli

#endif  // WSCHED_SERVER_CLI_WORKSPACE_COMMANDS_H_
