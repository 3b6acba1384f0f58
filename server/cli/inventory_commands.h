// `wschedctl nodes|node|pools|driver-work|driver-report|clear-gpu-health`:
// the inventory.
#ifndef WSCHED_SERVER_CLI_INVENTORY_COMMANDS_H_
#define WSCHED_SERVER_CLI_INVENTORY_COMMANDS_H_

#include <string>
#include <vector>

#include "server/cli/client.h"
#include "server/cli/options.h"
#include "wsched/v1/inventory.pb.h"

namespace wsched::cli {

// "READY", "NEEDS_DRIVER": the enums as the tables show them.
std::string NodeStateText(v1::NodeState state);
std::string DriverStateText(v1::DriverState state);

// nodes [--pool=P]
int NodesCommand(const Client& client, const std::vector<std::string>& args, const Options& options);
// get nodes [--pool=P] (name empty) or get node NAME: the table row(s);
// get nodes --watch: WatchNodes (watch_nodes_command.h).
int GetNodes(const Client& client, const std::string& name, const Options& options);
// describe node NAME: every GPU and its IOMMU group.
int DescribeNode(const Client& client, const std::string& name, const Options& options);
// get pools [NAME]; describe pool NAME is the same with -o yaml.
int GetPools(const Client& client, const std::string& name, const Options& options);
// node get|cordon|drain|uncordon|remove NAME
int NodeCommand(const Client& client, const std::vector<std::string>& args, const Options& options);
// pools
int PoolsCommand(const Client& client, const std::vector<std::string>& args, const Options& options);
// driver-work
int DriverWorkCommand(const Client& client, const std::vector<std::string>& args,
                      const Options& options);
// driver-report NODE KERNEL ok|failed [DETAIL]
int DriverReportCommand(const Client& client, const std::vector<std::string>& args,
                        const Options& options);
// clear-gpu-health NODE GPU_UUID
int ClearGpuHealthCommand(const Client& client, const std::vector<std::string>& args,
                          const Options& options);

}  // namespace wsched::cli

#endif  // WSCHED_SERVER_CLI_INVENTORY_COMMANDS_H_
