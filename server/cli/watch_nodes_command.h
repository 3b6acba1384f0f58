// `wschedctl get nodes --watch`: InventoryService.WatchNodes as a table
// that grows by a row per change, or one JSON line (YAML document) per
// message with -o json|yaml; the run, the resume hints and Ctrl-C are get
// workspaces --watch's (watch_workspaces_command.h).
#ifndef WSCHED_SERVER_CLI_WATCH_NODES_COMMAND_H_
#define WSCHED_SERVER_CLI_WATCH_NODES_COMMAND_H_

#include <cstdint>
#include <string>

#include "server/cli/client.h"
#include "server/cli/options.h"
#include "server/cli/watch_workspaces_command.h"
#include "wsched/v1/inventory.pb.h"

namespace wsched::cli {

// Why the flags do not go together for `get nodes` (`get node NAME` when
// `named`): one line naming the flag and the rule; "" when they do.
std::string NodeWatchFlagsProblem(const Options &options, bool named);

// --pool and --node as the filter, --resume-version.
v1::WatchNodesRequest NodeWatchRequest(const Options &options);

// "REGISTERED", "CHANGED", "REMOVED", "EXISTING".
std::string NodeChangeLabel(const v1::NodeChange &change);

class NodeWatchPrinter final
    : public WatchPrinter<v1::WatchNodesResponse, v1::NodeChange> {
public:
  NodeWatchPrinter(const Options &options, int64_t version);
};

// As WatchWorkspaces: until the stream ends or Ctrl-C.
int WatchNodes(const Client &client, const std::string &name,
               const Options &options);

} // namespace wsched::cli

#endif // WSCHED_SERVER_CLI_WATCH_NODES_COMMAND_H_
