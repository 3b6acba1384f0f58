#include "server/cli/gpu_topology_text.h"
#include "server/cli/inventory_commands.h"

#include <algorithm>
#include <iostream>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "server/cli/all_pages.h"
#include "server/cli/output.h"
#include "server/cli/structured_output.h"
#include "server/cli/watch_nodes_command.h"
#include "server/core/quantity.h"
#include "wsched/v1/inventory.grpc.pb.h"

namespace wsched::cli {

std::string NodeStateText(v1::NodeState state) {
  return ShortEnumName(v1::NodeState_Name(state), "NODE_STATE_");
}

std::string DriverStateText(v1::DriverState state) {
  return ShortEnumName(v1::DriverState_Name(state), "DRIVER_STATE_");
}

namespace {

std::string HealthText(v1::GpuHealth health) {
  return ShortEnumName(v1::GpuHealth_Name(health), "GPU_HEALTH_");
}

int GpusHeld(const v1::Node& node) {
  int held = 0;
  for (const auto& gpu : node.info().gpus()) held += gpu.held_by_workspace().empty() ? 0 : 1;
  return held;
}

int GpusUnsafe(const v1::Node& node) {
  int unsafe = 0;
  for (const auto& gpu : node.info().gpus()) unsafe += gpu.passthrough_safe() ? 0 : 1;
  return unsafe;
}

std::string ResourcesText(const v1::Resources& r) {
  return absl::StrCat("cpu ", core::FormatCpuMillis(r.cpu_millis()), ", memory ",
                      core::FormatBytes(r.memory_bytes()), ", ephemeral ",
                      core::FormatBytes(r.ephemeral_storage_bytes()), ", disk ",
                      core::FormatBytes(r.disk_bytes()));
}

// Out-of-service GPUs: why, since when, and whether the wait to return runs.
void PrintUnhealthyGpus(const v1::NodeInfo& info) {
  bool first = true;
  for (const auto& gpu : info.gpus()) {
    if (gpu.health() != v1::GPU_HEALTH_UNHEALTHY) continue;
    if (first) std::cout << "\n";
    first = false;
    std::cout << "gpu " << gpu.index() << " unhealthy: " << OrDash(gpu.health_reason());
    if (gpu.has_unhealthy_since()) std::cout << " (since " << TimeText(gpu.unhealthy_since()) << ")";
    std::cout << "\n";
    if (gpu.has_reported_healthy_since()) {
      std::cout << "  reported healthy again since " << TimeText(gpu.reported_healthy_since())
                << "; returns after --gpu_healthy_for, or: wschedctl clear-gpu-health "
                << info.name() << " " << gpu.uuid() << "\n";
    }
  }
}

// The node's CDI mode: which spec container runtimes resolve its GPUs through.
void PrintCdi(const v1::NodeCdi& cdi) {
  if (cdi.mode() == v1::CDI_MODE_UNSPECIFIED) {
    std::cout << "cdi:            inline (the node reports no spec; answers carry one)\n";
    return;
  }
  std::cout << "cdi:            "
            << (cdi.mode() == v1::CDI_MODE_NVIDIA ? "nvidia (NVIDIA's spec, kind nvidia.com/gpu)"
                                                  : "wsched (wsched's spec, kind wsched.io/gpu)")
            << " in " << cdi.spec_dir() << "\n";
  std::vector<std::string> devices;
  for (const auto& device : cdi.extra_devices()) devices.push_back(device.name());
  if (!devices.empty()) std::cout << "cdi devices:    " << Join(devices, ", ") << "\n";
  for (const auto& problem : cdi.problems()) std::cout << "cdi problem:    " << problem << "\n";
}

void PrintNodeDetail(const v1::Node& node) {
  const v1::NodeInfo& info = node.info();
  std::cout << "name:           " << info.name() << "\n"
            << "pool:           " << info.pool() << "\n"
            << "provider id:    " << OrDash(info.provider_id()) << "\n"
            << "state:          " << NodeStateText(node.state()) << "\n"
            << "driver state:   " << DriverStateText(node.driver_state())
            << (node.driver_detail().empty() ? "" : " (" + node.driver_detail() + ")") << "\n"
            << "kernel:         " << OrDash(info.kernel_version()) << "\n"
            << "os:             " << OrDash(info.os_id()) << " " << info.os_version() << "\n"
            << "driver:         " << OrDash(info.driver_version()) << "\n"
            << "allocatable:    " << ResourcesText(info.allocatable()) << "\n"
            << "held:           " << ResourcesText(node.held()) << "\n"
            << "workspaces:     " << node.workspace_count() << "\n"
            << "version:        " << node.version() << "\n"
            << "gpus held:      " << GpusHeld(node) << "/" << info.gpus_size() << "\n"
            << "registered:     " << TimeText(node.registered_at()) << "\n"
            << "last heartbeat: " << TimeText(node.last_heartbeat()) << " ("
            << Age(node.last_heartbeat()) << " ago)\n";
  if (!info.control_devices().empty()) {
    std::vector<std::string> devices;
    for (const auto& device : info.control_devices()) {
      devices.push_back(absl::StrCat(device.path(), " ", device.major(), ":", device.minor()));
    }
    std::cout << "control devices: " << Join(devices, ", ") << "\n";
  }
  PrintCdi(info.cdi());
  if (info.gpus().empty()) {
    std::cout << "gpus:           none\n";
    return;
  }
  std::cout << "\n";
  Table table({"IDX", "UUID", "PCI", "MODEL", "MEMORY", "NUMA", "HEALTH", "IOMMU", "PASSTHROUGH",
               "HELD-BY"});
  for (const auto& gpu : info.gpus()) {
    table.Add({absl::StrCat(gpu.index()), OrDash(gpu.uuid()), OrDash(gpu.pci_address()),
               OrDash(gpu.model()),
               gpu.memory_bytes() > 0 ? core::FormatBytes(gpu.memory_bytes()) : "-",
               gpu.numa_node() < 0 ? "-" : absl::StrCat(gpu.numa_node()),
               HealthText(gpu.health()),
               gpu.iommu_group() < 0 ? "off" : absl::StrCat(gpu.iommu_group()),
               gpu.passthrough_safe() ? "safe" : "UNSAFE", OrDash(gpu.held_by_workspace())});
  }
  table.Print();
  std::vector<std::string> topology = GpuLinkLines(info);
  for (std::string& line : GpuMigLines(info)) topology.push_back(std::move(line));
  if (!topology.empty()) std::cout << "\n" << Join(topology, "\n") << "\n";
  PrintUnhealthyGpus(info);
  // Unsafe GPUs: why, and what shares the group (the JSON output has every group).
  bool first = true;
  for (const auto& gpu : info.gpus()) {
    if (gpu.passthrough_safe()) continue;
    if (first) std::cout << "\n";
    first = false;
    std::cout << "gpu " << gpu.index() << " unsafe for passthrough: "
              << OrDash(gpu.passthrough_unsafe_reason()) << "\n";
    std::vector<std::string> members;
    for (const auto& member : gpu.iommu_group_members()) {
      members.push_back(absl::StrCat(
          member.pci_address(), " (class ", member.pci_class(), ", vendor ", member.vendor(),
          member.has_driver() ? absl::StrCat(", driver ", OrDash(member.driver())) : "", ")"));
    }
    if (!members.empty()) std::cout << "  iommu group " << gpu.iommu_group() << ": "
                                    << Join(members, ", ") << "\n";
  }
  // GPUs not bound as the pool needs (docs/placement.md "VFIO binding").
  for (const auto& gpu : info.gpus()) {
    if (gpu.binding_problem().empty()) continue;
    std::cout << "gpu " << gpu.index() << " not handed out: " << gpu.binding_problem() << "\n";
  }
}

int NodeAction(const Client& client, const std::string& action, const std::string& name,
               const Options& options) {
  auto stub = v1::InventoryService::NewStub(client.channel);
  v1::NodeNameRequest request;
  request.set_node_name(name);
  const bool guarded = action == "cordon" || action == "drain" || action == "uncordon";
  if (options.expected_version && !guarded) {
    std::cerr << "node " << action << ": --expected-version is for cordon, drain and uncordon\n";
    return 2;
  }
  // A state change checks the version only when the caller names the one it
  // decided on: re-reading it here would guard nothing.
  if (guarded) request.set_expected_version(options.expected_version.value_or(0));
  auto context = client.Context();
  if (action == "remove") {
    v1::Empty response;
    grpc::Status status = stub->RemoveNode(context.get(), request, &response);
    if (!status.ok()) return Fail("node remove " + name, status);
    if (options.structured()) return PrintStructured(response, options);
    std::cout << "node " << name << " removed; its workspaces are reported lost\n";
    return 0;
  }
  v1::Node node;
  grpc::Status status;
  if (action == "get") {
    status = stub->GetNode(context.get(), request, &node);
  } else if (action == "cordon") {
    status = stub->CordonNode(context.get(), request, &node);
  } else if (action == "drain") {
    status = stub->DrainNode(context.get(), request, &node);
  } else {
    status = stub->UncordonNode(context.get(), request, &node);
  }
  if (!status.ok()) {
    int rc = Fail("node " + action + " " + name, status);
    if (status.error_code() == grpc::StatusCode::ABORTED) {
      std::cerr << "hint: the node changed since you read it; nothing was changed. Look again "
                   "(wschedctl node get "
                << name << ") and retry with its new version, or without --expected-version\n";
    }
    return rc;
  }
  if (options.structured()) return PrintStructured(node, options);
  if (action == "get") {
    PrintNodeDetail(node);
  } else {
    std::cout << "node " << name << ": " << NodeStateText(node.state()) << " ("
              << node.workspace_count() << " workspaces, version " << node.version() << ")\n";
  }
  return 0;
}

} // namespace

int NodesCommand(const Client& client, const std::vector<std::string>& args,
                 const Options& options) {
  if (!args.empty()) {
    std::cerr << "usage: wschedctl nodes [--pool=P] [--output=json]\n";
    return 2;
  }
  return GetNodes(client, "", options);
}

int GetNodes(const Client& client, const std::string& name, const Options& options) {
  if (options.watch || options.resume_version)
    return WatchNodes(client, name, options);
  auto stub = v1::InventoryService::NewStub(client.channel);
  v1::ListNodesResponse response;
  grpc::Status status;
  if (name.empty()) {
    v1::ListNodesRequest request;
    request.set_pool(options.pool);
    status = ListAllPages(client, request, &response,
                          [&](grpc::ClientContext* context, const auto& page_request, auto* page) {
                            return stub->ListNodes(context, page_request, page);
                          });
    if (!status.ok()) return Fail("get nodes", status);
    if (options.structured()) return PrintStructured(response, options);
  } else {
    v1::NodeNameRequest request;
    request.set_node_name(name);
    auto context = client.Context();
    status = stub->GetNode(context.get(), request, response.add_nodes());
    if (!status.ok()) return Fail("get node " + name, status);
    if (options.structured()) return PrintStructured(response.nodes(0), options);
  }
  std::vector<std::string> header = {"NAME", "POOL",   "STATE",      "DRIVER",
                                     "GPUS", "UNSAFE", "WORKSPACES", "HEARTBEAT"};
  if (options.wide()) header.insert(header.end(), {"KERNEL", "DRIVER-VERSION", "PROVIDER-ID"});
  Table table(header);
  for (const auto& node : response.nodes()) {
    std::vector<std::string> row = {node.info().name(), node.info().pool(),
                                    NodeStateText(node.state()),
                                    DriverStateText(node.driver_state()),
                                    absl::StrCat(GpusHeld(node), "/", node.info().gpus_size()),
                                    absl::StrCat(GpusUnsafe(node)),
                                    absl::StrCat(node.workspace_count()),
                                    Age(node.last_heartbeat())};
    if (options.wide()) {
      row.insert(row.end(), {OrDash(node.info().kernel_version()),
                             OrDash(node.info().driver_version()),
                             OrDash(node.info().provider_id())});
    }
    table.Add(std::move(row));
  }
  table.Print(options.pool.empty() ? "no nodes" : "no nodes in pool " + options.pool,
              !options.no_headers);
  return 0;
}

// The node's credential (docs/security.md, "Node identity"). rotate prints
// the new token alone on stdout, so `> node-token` captures it.
int NodeCredentialAction(const Client& client, const std::string& action, const std::string& name,
                         const Options& options) {
  auto stub = v1::InventoryService::NewStub(client.channel);
  auto context = client.Context();
  if (action == "rotate-credential") {
    v1::RotateNodeCredentialRequest request;
    request.set_node_name(name);
    v1::RotateNodeCredentialResponse response;
    grpc::Status status = stub->RotateNodeCredential(context.get(), request, &response);
    if (!status.ok()) return Fail("node rotate-credential " + name, status);
    if (options.structured()) return PrintStructured(response, options);
    std::cout << response.node_token() << "\n";
    std::cerr << "node " << name << ": new credential issued; the previous one no longer works. "
              << "Install the token as the agent's <state_dir>/node-token (mode 0600).\n";
    return 0;
  }
  v1::RevokeNodeCredentialRequest request;
  request.set_node_name(name);
  v1::RevokeNodeCredentialResponse response;
  grpc::Status status = stub->RevokeNodeCredential(context.get(), request, &response);
  if (!status.ok()) return Fail("node revoke-credential " + name, status);
  if (options.structured()) return PrintStructured(response, options);
  std::cout << "node " << name
            << (response.revoked() ? ": credential revoked; its next call is refused\n"
                                   : ": had no node credential; nothing changed\n");
  return 0;
}

int DescribeNode(const Client& client, const std::string& name, const Options& options) {
  return NodeAction(client, "get", name, options);
}

int NodeCommand(const Client& client, const std::vector<std::string>& args,
                const Options& options) {
  static const char kUsage[] =
      "usage: wschedctl node get|cordon|drain|uncordon|remove|rotate-credential|revoke-credential "
      "NAME\n";
  if (args.size() != 2) {
    std::cerr << kUsage;
    return 2;
  }
  const std::string& action = args[0];
  if (action == "rotate-credential" || action == "revoke-credential") {
    return NodeCredentialAction(client, action, args[1], options);
  }
  if (action != "get" && action != "cordon" && action != "drain" && action != "uncordon" &&
      action != "remove") {
    std::cerr << "unknown node command \"" << action << "\"\n" << kUsage;
    return 2;
  }
  return NodeAction(client, action, args[1], options);
}

namespace {

// "4m (median of 5)", or "5m (default)" before any start was measured.
std::string DurationText(const google::protobuf::Duration& d) {
  return absl::FormatDuration(absl::Seconds(d.seconds()) + absl::Nanoseconds(d.nanos()));
}

std::string NodeStartText(const v1::PoolTimings& timings) {
  if (timings.has_node_start_median()) {
    return absl::StrCat(DurationText(timings.node_start_median()), " (median of ",
                        timings.node_start_samples(), ")");
  }
  return absl::StrCat(DurationText(timings.default_node_start()), " (default)");
}

}  // namespace

int PoolsCommand(const Client& client, const std::vector<std::string>& args,
                 const Options& options) {
  if (!args.empty()) {
    std::cerr << "usage: wschedctl pools [--output=json]\n";
    return 2;
  }
  return GetPools(client, "", options);
}

int GetPools(const Client& client, const std::string& name, const Options& options) {
  auto stub = v1::InventoryService::NewStub(client.channel);
  v1::ListPoolsResponse response;
  grpc::Status status = ListAllPages(
      client, v1::ListPoolsRequest(), &response,
      [&](grpc::ClientContext* context, const auto& page_request, auto* page) {
        return stub->ListPools(context, page_request, page);
      });
  if (!status.ok()) return Fail("get pools", status);
  // There is no GetPool RPC: one pool is picked out of the list.
  if (!name.empty()) {
    auto& pools = *response.mutable_pools();
    auto it = std::find_if(pools.begin(), pools.end(),
                           [&](const v1::Pool& pool) { return pool.id() == name; });
    if (it == pools.end()) {
      return Fail("get pool " + name, grpc::Status(grpc::StatusCode::NOT_FOUND,
                                                  "no pool \"" + name + "\" in the catalog"));
    }
    v1::Pool pool = *it;
    if (options.structured()) return PrintStructured(pool, options);
    pools.Clear();
    *pools.Add() = std::move(pool);
  }
  if (options.structured()) return PrintStructured(response, options);
  Table table({"POOL", "GPU-MODEL", "GPUS/NODE", "SIZE", "NODES", "GPUS-HELD", "UNHEALTHY",
               "NODE-START"});
  for (const auto& pool : response.pools()) {
    // Sorted, so the column reads the same every time.
    std::map<std::string, int> by_state(pool.nodes_by_state().begin(),
                                        pool.nodes_by_state().end());
    std::vector<std::string> states;
    for (const auto& [state, count] : by_state) states.push_back(absl::StrCat(state, "=", count));
    table.Add({pool.id(), OrDash(pool.gpu_model()), absl::StrCat(pool.gpus_per_node()),
               absl::StrCat(pool.min_size(), "..", pool.max_size()),
               states.empty() ? "0" : Join(states, " "),
               absl::StrCat(pool.gpus_held(), "/", pool.gpus_total()),
               absl::StrCat(pool.gpus_unhealthy()), NodeStartText(pool.timings())});
  }
  table.Print("no pools (apply a catalog with pools first)", !options.no_headers);
  return 0;
}

int DriverWorkCommand(const Client& client, const std::vector<std::string>& args,
                      const Options& options) {
  if (!args.empty()) {
    std::cerr << "usage: wschedctl driver-work [--output=json]\n";
    return 2;
  }
  auto stub = v1::InventoryService::NewStub(client.channel);
  v1::ListDriverWorkResponse response;
  grpc::Status status = ListAllPages(
      client, v1::ListDriverWorkRequest(), &response,
      [&](grpc::ClientContext* context, const auto& page_request, auto* page) {
        return stub->ListDriverWork(context, page_request, page);
      });
  if (!status.ok()) return Fail("driver-work", status);
  if (options.structured()) return PrintStructured(response, options);
  Table table({"NODE", "KERNEL", "OS", "DRIVER", "INSTALLER-IMAGE"});
  for (const auto& work : response.work()) {
    table.Add({work.node_name(), work.kernel_version(),
               absl::StrCat(work.os_id(), " ", work.os_version()), work.driver_version(),
               work.installer_image()});
  }
  table.Print("no pending driver work", !options.no_headers);
  if (!response.nodes_without_policy().empty()) {
    std::vector<std::string> nodes(response.nodes_without_policy().begin(),
                                   response.nodes_without_policy().end());
    std::cout << "\nno driver policy matches these GPU nodes (add a driver_policy entry): "
              << Join(nodes, ", ") << "\n";
  }
  return 0;
}

int DriverReportCommand(const Client& client, const std::vector<std::string>& args,
                        const Options& options) {
  if ((args.size() != 3 && args.size() != 4) || (args[2] != "ok" && args[2] != "failed")) {
    std::cerr << "usage: wschedctl driver-report NODE KERNEL ok|failed [DETAIL]\n";
    return 2;
  }
  auto stub = v1::InventoryService::NewStub(client.channel);
  v1::ReportDriverInstallRequest request;
  request.set_node_name(args[0]);
  request.set_kernel_version(args[1]);
  request.set_success(args[2] == "ok");
  if (args.size() == 4) request.set_detail(args[3]);
  v1::Node node;
  auto context = client.Context();
  grpc::Status status = stub->ReportDriverInstall(context.get(), request, &node);
  if (!status.ok()) return Fail("driver-report " + args[0], status);
  if (options.structured()) return PrintStructured(node, options);
  std::cout << "node " << node.info().name() << ": driver " << DriverStateText(node.driver_state())
            << (node.driver_detail().empty() ? "" : " (" + node.driver_detail() + ")") << "\n";
  return 0;
}

int ClearGpuHealthCommand(const Client& client, const std::vector<std::string>& args,
                          const Options& options) {
  if (args.size() != 2) {
    std::cerr << "usage: wschedctl clear-gpu-health NODE GPU_UUID\n";
    return 2;
  }
  auto stub = v1::InventoryService::NewStub(client.channel);
  v1::ClearGpuHealthRequest request;
  request.set_node_name(args[0]);
  request.set_gpu_uuid(args[1]);
  v1::Node node;
  auto context = client.Context();
  grpc::Status status = stub->ClearGpuHealth(context.get(), request, &node);
  if (!status.ok()) return Fail("clear-gpu-health " + args[0] + " " + args[1], status);
  if (options.structured()) return PrintStructured(node, options);
  std::cout << "node " << node.info().name() << ": GPU " << args[1]
            << " is in service; it goes out again if its agent reports it unhealthy\n";
  return 0;
}

}  // namespace wsched::cli
