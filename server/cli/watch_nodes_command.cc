#include "server/cli/watch_nodes_command.h"

#include <iostream>
#include <vector>

#include "absl/strings/str_cat.h"
#include "server/cli/inventory_commands.h"
#include "server/cli/output.h"
#include "wsched/v1/inventory.grpc.pb.h"

namespace wsched::cli {
namespace {

WatchedResource NodesWatched(const Options &options) {
  return {"nodes", {{"--pool", options.pool}, {"--node", options.node}}};
}

int UnhealthyGpus(const v1::Node &node) {
  int unhealthy = 0;
  for (const v1::Gpu &gpu : node.info().gpus()) {
    if (gpu.health() == v1::GPU_HEALTH_UNHEALTHY)
      ++unhealthy;
  }
  return unhealthy;
}

// A removed node has its name and pool only: the rest is a dash.
std::vector<std::string> Row(const v1::NodeChange &change) {
  const v1::Node &node = change.node();
  if (change.what() == v1::NodeChange::WHAT_REMOVED) {
    return {NodeChangeLabel(change),
            node.info().name(),
            node.info().pool(),
            "-",
            "-",
            "-",
            "-",
            absl::StrCat(change.node_version())};
  }
  return {NodeChangeLabel(change),
          node.info().name(),
          node.info().pool(),
          NodeStateText(node.state()),
          DriverStateText(node.driver_state()),
          absl::StrCat(node.info().gpus_size()),
          absl::StrCat(UnhealthyGpus(node)),
          absl::StrCat(change.node_version())};
}

} // namespace

std::string NodeWatchFlagsProblem(const Options &options, bool named) {
  if (options.resume_version && !options.watch) {
    return "get nodes: --resume-version needs --watch (it resumes a watch from "
           "a version that "
           "one printed)";
  }
  if (options.resume_version && *options.resume_version < 0) {
    return "get nodes: --resume-version must be a version a watch reached (1 "
           "or more; 0 lists "
           "first)";
  }
  if (options.watch && named) {
    return "get node NAME: --watch follows a listing; follow one node with get "
           "nodes --watch "
           "--node=NAME";
  }
  return "";
}

v1::WatchNodesRequest NodeWatchRequest(const Options &options) {
  v1::WatchNodesRequest request;
  request.mutable_filter()->set_pool(options.pool);
  request.mutable_filter()->set_node_name(options.node);
  request.set_resume_version(options.resume_version.value_or(0));
  return request;
}

std::string NodeChangeLabel(const v1::NodeChange &change) {
  switch (change.what()) {
  case v1::NodeChange::WHAT_EXISTING:
    return "EXISTING";
  case v1::NodeChange::WHAT_REGISTERED:
    return "REGISTERED";
  case v1::NodeChange::WHAT_CHANGED:
    return "CHANGED";
  case v1::NodeChange::WHAT_REMOVED:
    return "REMOVED";
  default:
    return "CHANGED"; // a kind newer than this wschedctl
  }
}

NodeWatchPrinter::NodeWatchPrinter(const Options &options, int64_t version)
    : WatchPrinter(options, version,
                   {"CHANGE", "NAME", "POOL", "STATE", "DRIVER", "GPUS",
                    "UNHEALTHY", "VERSION"},
                   Row) {}

int WatchNodes(const Client &client, const std::string &name,
               const Options &options) {
  if (std::string problem = NodeWatchFlagsProblem(options, !name.empty());
      !problem.empty()) {
    std::cerr << problem << " (see wschedctl help get)\n";
    return 2;
  }
  const v1::WatchNodesRequest request = NodeWatchRequest(options);
  auto stub = v1::InventoryService::NewStub(client.channel);
  NodeWatchPrinter printer(options, request.resume_version());
  return RunWatch(
      client, NodesWatched(options), options,
      [&](grpc::ClientContext *context) {
        auto reader = stub->WatchNodes(context, request);
        v1::WatchNodesResponse response;
        while (reader->Read(&response))
          printer.Print(response);
        return reader->Finish();
      },
      [&] { return printer.version(); });
}

} // namespace wsched::cli
