#include "server/cli/workspace_commands.h"

#include <iostream>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "google/protobuf/util/time_util.h"
#include "server/cli/all_pages.h"
#include "server/cli/output.h"
#include "server/cli/quote_table.h"
#include "server/cli/structured_output.h"
#include "server/cli/watch_workspaces_command.h"
#include "wsched/v1/placement.grpc.pb.h"

namespace wsched::cli {
namespace {

std::string StateText(v1::WorkspaceState state) {
  return absl::AsciiStrToUpper(ShortEnumName(v1::WorkspaceState_Name(state), "WORKSPACE_STATE_"));
}

// "0,3" for whole GPUs; "2:1g.18gb" (GPU:profile) for a slice.
std::string GpuIndices(const v1::Workspace& workspace) {
  if (workspace.has_slice()) {
    return absl::StrCat(workspace.slice().gpu().index(), ":", workspace.slice().profile());
  }
  std::vector<std::string> indices;
  for (const auto& gpu : workspace.gpus()) indices.push_back(absl::StrCat(gpu.index()));
  return indices.empty() ? "-" : Join(indices, ",");
}

// "pool_at_max_size" for PENDING_REASON_CODE_POOL_AT_MAX_SIZE.
std::string ReasonCodeText(v1::PendingReasonCode code) {
  return absl::AsciiStrToLower(v1::PendingReasonCode_Name(code).substr(20));
}

// The estimate to whole seconds, e.g. "1m10s".
std::string EstimateText(const v1::Workspace& workspace) {
  const auto& d = workspace.estimated_time_to_place();
  return absl::FormatDuration(absl::Trunc(absl::Seconds(d.seconds()) + absl::Nanoseconds(d.nanos()),
                                          absl::Seconds(1)));
}

std::string DurationText(const google::protobuf::Duration& d) {
  return absl::FormatDuration(
      absl::Trunc(absl::Seconds(d.seconds()) + absl::Nanoseconds(d.nanos()), absl::Seconds(1)));
}

// "node_boot" for KIND_NODE_BOOT.
std::string PhaseKindText(v1::EstimatePhase::Kind kind) {
  return absl::AsciiStrToLower(v1::EstimatePhase::Kind_Name(kind).substr(5));
}

// The phases the estimate is made of, one row each.
void PrintPhases(const v1::Workspace& w) {
  if (w.estimate_phases().empty()) return;
  Table table({"PHASE", "P50", "P90", "SAMPLES", "ELAPSED", "LEFT P50", "LEFT P90"});
  for (const v1::EstimatePhase& phase : w.estimate_phases()) {
    table.Add({PhaseKindText(phase.kind()), DurationText(phase.p50()), DurationText(phase.p90()),
               phase.default_used() ? "default" : absl::StrCat(phase.samples()),
               DurationText(phase.elapsed()), DurationText(phase.remaining_p50()),
               DurationText(phase.remaining_p90())});
  }
  table.Print();
}

// "#3 ~1m10s [pool_at_max_size] pool gpu-h100 is at its max size".
std::string PendingText(const v1::Workspace& workspace) {
  std::vector<std::string> parts;
  // A watched workspace has no position: the server computes it live for
  // Get and List only.
  if (workspace.queue_position() > 0) {
    parts.push_back(absl::StrCat("#", workspace.queue_position()));
  }
  if (workspace.has_estimated_time_to_place()) parts.push_back("~" + EstimateText(workspace));
  if (workspace.has_pending()) {
    parts.push_back(absl::StrCat("[", ReasonCodeText(workspace.pending().code()), "]"));
  }
  if (!workspace.pending_reason().empty()) parts.push_back(workspace.pending_reason());
  return parts.empty() ? "-" : Join(parts, " ");
}

void PrintDeviceSpec(const v1::DeviceSpec& spec) {
  if (spec.has_cdi()) {
    std::cout << "\ncontainer devices (CDI):\n";
    const v1::CdiSpec& cdi = spec.cdi();
    for (const auto& name : cdi.device_names()) std::cout << "  " << name << "\n";
    if (!cdi.spec_json().empty()) {
      std::cout << "CDI spec:\n" << PrettyJson(cdi.spec_json()) << "\n";
    }
    if (!cdi.env().empty()) {
      std::cout << "env: " << Join({cdi.env().begin(), cdi.env().end()}, " ") << "\n";
    }
    if (!cdi.podman_args().empty()) {
      std::cout << "podman run " << Join({cdi.podman_args().begin(), cdi.podman_args().end()}, " ")
                << " IMAGE\n";
    }
    if (cdi.has_kubernetes()) {
      std::cout << "kubernetes pod: spec.nodeName: " << cdi.kubernetes().node_name() << "\n";
      for (const auto& [key, value] : cdi.kubernetes().annotations()) {
        std::cout << "  annotation " << key << ": " << value << "\n";
      }
    }
  } else if (spec.has_vfio()) {
    const v1::VfioSpec& vfio = spec.vfio();
    std::cout << "\nVM passthrough (VFIO):\n"
              << "  pci addresses: "
              << Join({vfio.pci_addresses().begin(), vfio.pci_addresses().end()}, " ") << "\n"
              << "  devices:       "
              << Join({vfio.device_paths().begin(), vfio.device_paths().end()}, " ") << "\n"
              << "  cloud-hypervisor "
              << Join({vfio.cloud_hypervisor_args().begin(), vfio.cloud_hypervisor_args().end()},
                      " ")
              << "\n";
  }
  if (!spec.extra_devices().empty()) {
    std::vector<std::string> devices;
    for (const auto& device : spec.extra_devices()) {
      devices.push_back(absl::StrCat(device.path(), " ", device.type(), " ", device.major(), ":",
                                     device.minor(), " ", device.permissions()));
    }
    std::cout << "extra devices: " << Join(devices, ", ") << "\n";
  }
}

// "since 09:12:20Z, stopped at 09:42:20Z unless a GPU is used" (docs/catalog.md "Idle GPUs").
std::string IdleText(const v1::WorkspaceEvent& event) {
  std::string text = absl::StrCat("GPUs idle since ", TimeText(event.idle_since()));
  if (event.has_stops_at()) {
    absl::StrAppend(&text, "; stopped at ", TimeText(event.stops_at()), " unless a GPU is used");
  }
  return text;
}

// "org:o-1 at 80% of its spending limit (8.000000 of 10.000000 GPU-seconds)",
// and for a warning "; stopped at <time> unless spending goes back under it".
std::string BudgetText(const v1::WorkspaceEvent& event) {
  const bool warning = event.kind() == v1::WorkspaceEvent::KIND_BUDGET_WARNING;
  std::string text = absl::StrCat(
      event.budget_scope(), warning ? " reached" : absl::StrCat(" at ", event.percent(), "% of"),
      " its spending limit (", event.spent_gpu_seconds(), " of ", event.limit_gpu_seconds(),
      " GPU-seconds; the period ends ", TimeText(event.period_end()), ")");
  if (warning) {
    absl::StrAppend(&text, "; stopped at ", TimeText(event.stops_at()),
                    " unless spending goes back under the limit");
  }
  return text;
}

bool IsBudgetEvent(const v1::WorkspaceEvent& event) {
  return event.kind() == v1::WorkspaceEvent::KIND_BUDGET_WARNING ||
         event.kind() == v1::WorkspaceEvent::KIND_BUDGET_THRESHOLD;
}

// "fixes:     1. raise the GPU quota of org o-1 from 8 to 9 (+1): ... [org_admin]",
// least change first; only those the caller's role may apply come back.
void PrintFixes(const v1::Workspace& w) {
  for (int i = 0; i < w.fixes_size(); ++i) {
    const v1::PendingFix& fix = w.fixes(i);
    std::cout << (i == 0 ? "fixes:     " : "           ") << i + 1 << ". " << fix.detail() << " ["
              << absl::AsciiStrToLower(
                     ShortEnumName(v1::PendingFix::Applier_Name(fix.applier()), "APPLIER_"))
              << "]\n";
  }
}

void PrintWorkspace(const v1::Workspace& w) {
  std::cout << "workspace: " << w.id() << "\n"
            << "state:     " << StateText(w.state()) << "\n"
            << "class:     " << OrDash(w.class_id())
            << (w.class_explanation().empty() ? "" : " (" + w.class_explanation() + ")") << "\n"
            << "org:       " << OrDash(w.org_id()) << "  project: " << OrDash(w.project_id())
            << "  user: " << OrDash(w.user_id()) << "\n"
            << "created:   " << TimeText(w.created_at()) << "\n";
  if (w.state() == v1::WORKSPACE_STATE_PENDING) {
    std::cout << "pending:   " << OrDash(w.pending_reason()) << "\n";
    if (w.has_pending()) {
      const v1::PendingReason& p = w.pending();
      std::cout << "reason:    " << ReasonCodeText(p.code());
      if (!p.pool().empty()) std::cout << " pool=" << p.pool();
      if (!p.node().empty()) std::cout << " node=" << p.node();
      if (!p.kernel_version().empty()) std::cout << " kernel=" << p.kernel_version();
      if (!p.installer_image().empty()) std::cout << " image=" << p.installer_image();
      if (p.has_since()) std::cout << " since=" << TimeText(p.since());
      if (p.has_until()) std::cout << " until=" << TimeText(p.until());
      std::cout << "\n";
    }
    std::cout << "position:  " << w.queue_position() << " in queue";
    if (w.has_estimated_time_to_place()) {
      std::cout << " (about " << EstimateText(w) << " to place"
                << (w.estimate_basis().empty() ? "" : ": " + w.estimate_basis()) << ")";
    }
    std::cout << "\n";
    PrintPhases(w);
    PrintFixes(w);
  }
  if (!w.node_name().empty()) {
    std::cout << "node:      " << w.node_name() << " (pool " << OrDash(w.pool()) << ")\n"
              << "placed:    " << TimeText(w.placed_at()) << "\n";
    if (w.has_ready_time()) std::cout << "ready:     " << TimeText(w.ready_time()) << "\n";
  }
  if (w.event().kind() == v1::WorkspaceEvent::KIND_IDLE) {
    std::cout << "idle:      " << IdleText(w.event()) << "\n";
  }
  if (IsBudgetEvent(w.event())) std::cout << "budget:    " << BudgetText(w.event()) << "\n";
  if (!w.gpus().empty()) {
    std::cout << "\n";
    Table table({"GPU", "UUID", "PCI", "MODEL"});
    for (const auto& gpu : w.gpus()) {
      table.Add({absl::StrCat(gpu.index()), OrDash(gpu.uuid()), OrDash(gpu.pci_address()),
                 OrDash(gpu.model())});
    }
    table.Print();
  }
  if (w.has_slice()) {
    const v1::AssignedSlice& s = w.slice();
    std::cout << "\n";
    Table table({"GPU", "SLICE", "PROFILE", "SHARE", "MIG-UUID", "MODEL"});
    table.Add({absl::StrCat(s.gpu().index()),
               absl::StrCat("gi ", s.gpu_instance(), " ci ", s.compute_instance()), s.profile(),
               absl::StrCat(s.compute_slices(), "/7"), s.uuid(), OrDash(s.gpu().model())});
    table.Print();
  }
  if (w.state() == v1::WORKSPACE_STATE_PLACED) PrintDeviceSpec(w.device_spec());
}

constexpr char kWorkspacesUsage[] =
    "usage: wschedctl workspaces [--node=N] [--pool=P] [--state=pending|placed|stopped|lost] "
    "[-w]\n";

grpc::Status GetOne(const Client& client, const std::string& id, v1::Workspace* workspace,
                    v1::WorkspaceView view = v1::WORKSPACE_VIEW_BASIC) {
  auto stub = v1::PlacementService::NewStub(client.channel);
  v1::GetWorkspaceRequest request;
  request.set_workspace_id(id);
  request.set_view(view);
  auto context = client.Context();
  return stub->GetWorkspace(context.get(), request, workspace);
}

bool OneId(const std::vector<std::string>& args, const char* usage) {
  if (args.size() == 1 && !args[0].empty()) return true;
  std::cerr << "usage: " << usage << "\n";
  return false;
}

}  // namespace

bool ParseWorkspaceState(const std::string& text, v1::WorkspaceState* state) {
  std::string name = absl::AsciiStrToUpper(text);
  if (name.rfind("WORKSPACE_STATE_", 0) != 0) name = "WORKSPACE_STATE_" + name;
  return v1::WorkspaceState_Parse(name, state) && *state != v1::WORKSPACE_STATE_UNSPECIFIED;
}

std::vector<std::string> WorkspaceTableHeader(const Options& options) {
  std::vector<std::string> header = {"ID", "STATE", "CLASS", "ORG", "PROJECT",
                                     "NODE", "GPUS", "AGE", "PENDING"};
  if (options.wide()) header.insert(header.end(), {"POOL", "USER", "PLACED"});
  return header;
}

std::vector<std::string> WorkspaceTableRow(const v1::Workspace& w, const Options& options) {
  std::vector<std::string> row = {w.id(), StateText(w.state()), OrDash(w.class_id()),
                                  OrDash(w.org_id()), OrDash(w.project_id()),
                                  OrDash(w.node_name()), GpuIndices(w), Age(w.created_at()),
                                  w.state() == v1::WORKSPACE_STATE_PENDING ? PendingText(w) : "-"};
  if (options.wide()) {
    row.insert(row.end(), {OrDash(w.pool()), OrDash(w.user_id()), TimeText(w.placed_at())});
  }
  return row;
}

namespace {

// A dry run: every way to serve the request, best first, and the token
// that places as the first one said.
void PrintQuotes(const v1::Workspace& workspace, const Options& options) {
  Table table(QuoteHeader());
  for (const v1::PlacementQuote& quote : workspace.quotes()) table.Add(QuoteRow(quote));
  table.Print("nothing can serve it now or after a scale-up or driver install; nothing placed",
              !options.no_headers);
  if (!workspace.quote_token().empty()) {
    std::cerr << "nothing placed; to place as the first row: --quote-token="
              << workspace.quote_token() << "\n";
  }
}

}  // namespace

int PlaceCommand(const Client& client, const std::vector<std::string>& args,
                 const Options& options) {
  static const char kUsage[] =
      "wschedctl place WORKSPACE_ID --org=O --project=P --user=U [--class=C] [--restart] "
      "[--priority=N] [--dry-run | --quote-token=T]";
  if (!OneId(args, kUsage)) return 2;
  if (options.org.empty() || options.project.empty() || options.user.empty()) {
    std::cerr << "place needs --org, --project and --user\nusage: " << kUsage << "\n";
    return 2;
  }
  auto stub = v1::PlacementService::NewStub(client.channel);
  v1::PlaceWorkspaceRequest request;
  request.set_workspace_id(args[0]);
  request.set_org_id(options.org);
  request.set_project_id(options.project);
  request.set_user_id(options.user);
  request.set_class_id(options.class_id);
  request.set_restart(options.restart);
  request.set_priority(options.priority);
  request.set_validate_only(options.dry_run);
  request.set_quote_token(options.quote_token);
  v1::Workspace workspace;
  auto context = client.Context();
  grpc::Status status = stub->PlaceWorkspace(context.get(), request, &workspace);
  if (!status.ok()) return Fail("place " + args[0], status);
  if (options.structured()) return PrintStructured(workspace, options);
  if (options.dry_run) {
    PrintQuotes(workspace, options);
    return 0;
  }
  PrintWorkspace(workspace);
  return 0;
}

int StopCommand(const Client& client, const std::vector<std::string>& args,
                const Options& options) {
  if (!OneId(args, "wschedctl stop WORKSPACE_ID")) return 2;
  auto stub = v1::PlacementService::NewStub(client.channel);
  v1::StopWorkspaceRequest request;
  request.set_workspace_id(args[0]);
  v1::Workspace workspace;
  auto context = client.Context();
  grpc::Status status = stub->StopWorkspace(context.get(), request, &workspace);
  if (!status.ok()) return Fail("stop " + args[0], status);
  if (options.structured()) return PrintStructured(workspace, options);
  std::cout << "workspace " << workspace.id() << ": " << StateText(workspace.state()) << "\n";
  return 0;
}

namespace {

int ReportReady(const Client& client, const std::string& id, const Options& options) {
  v1::ReportWorkspaceReadyRequest request;
  request.set_workspace_id(id);
  if (!options.at_text.empty() &&
      !google::protobuf::util::TimeUtil::FromString(options.at_text,
                                                    request.mutable_ready_time())) {
    std::cerr << "wschedctl workspace ready: --at: not an RFC 3339 time, as "
                 "2026-12-05T10:00:00Z\n";
    return 2;
  }
  auto stub = v1::PlacementService::NewStub(client.channel);
  v1::Workspace workspace;
  auto context = client.Context();
  grpc::Status status = stub->ReportWorkspaceReady(context.get(), request, &workspace);
  if (!status.ok()) return Fail("workspace ready " + id, status);
  if (options.structured()) return PrintStructured(workspace, options);
  std::cout << "workspace " << workspace.id() << ": ready at " << TimeText(workspace.ready_time())
            << "\n";
  return 0;
}

}  // namespace

int WorkspaceCommand(const Client& client, const std::vector<std::string>& args,
                     const Options& options) {
  if (args.size() == 2 && args[0] == "get") return DescribeWorkspace(client, args[1], options);
  if (args.size() == 2 && args[0] == "ready") return ReportReady(client, args[1], options);
  std::cerr << "usage: wschedctl workspace get ID\n"
               "       wschedctl workspace ready ID [--at=T]\n";
  return 2;
}

int DescribeWorkspace(const Client& client, const std::string& id, const Options& options) {
  v1::Workspace workspace;
  // A person reads one workspace: with what would let it go.
  grpc::Status status = GetOne(client, id, &workspace, v1::WORKSPACE_VIEW_FULL);
  if (!status.ok()) return Fail("workspace get " + id, status);
  if (options.structured()) return PrintStructured(workspace, options);
  PrintWorkspace(workspace);
  return 0;
}

int WorkspacesCommand(const Client& client, const std::vector<std::string>& args,
                      const Options& options) {
  if (!args.empty()) {
    std::cerr << kWorkspacesUsage;
    return 2;
  }
  return GetWorkspaces(client, "", options);
}

int GetWorkspaces(const Client& client, const std::string& id, const Options& options) {
  if (std::string problem = WatchFlagsProblem(options, /*named=*/!id.empty()); !problem.empty()) {
    std::cerr << problem << " (see wschedctl help get)\n";
    return 2;
  }
  if (options.watch) return WatchWorkspaces(client, options);
  v1::ListWorkspacesResponse response;
  grpc::Status status;
  if (id.empty()) {
    v1::ListWorkspacesRequest request;
    request.set_node_name(options.node);
    request.set_pool(options.pool);
    if (!options.state.empty()) {
      v1::WorkspaceState state;
      if (!ParseWorkspaceState(options.state, &state)) {
        std::cerr << "unknown --state \"" << options.state << "\"\n" << kWorkspacesUsage;
        return 2;
      }
      request.set_state(state);
    }
    auto stub = v1::PlacementService::NewStub(client.channel);
    status = ListAllPages(client, request, &response,
                          [&](grpc::ClientContext* context, const auto& page_request, auto* page) {
                            return stub->ListWorkspaces(context, page_request, page);
                          });
    if (!status.ok()) return Fail("get workspaces", status);
    if (options.structured()) return PrintStructured(response, options);
  } else {
    status = GetOne(client, id, response.add_workspaces());
    if (!status.ok()) return Fail("get workspace " + id, status);
    if (options.structured()) return PrintStructured(response.workspaces(0), options);
  }
  Table table(WorkspaceTableHeader(options));
  for (const auto& w : response.workspaces()) table.Add(WorkspaceTableRow(w, options));
  table.Print("no workspaces", !options.no_headers);
  return 0;
}

int WatchCommand(const Client& client, const std::vector<std::string>& args,
                 const Options& options) {
  if (!OneId(args, "wschedctl watch WORKSPACE_ID")) return 2;
  auto stub = v1::PlacementService::NewStub(client.channel);
  v1::WatchWorkspaceRequest request;
  request.set_workspace_id(args[0]);
  auto context = client.StreamContext();
  auto reader = stub->WatchWorkspace(context.get(), request);
  v1::Workspace workspace;
  while (reader->Read(&workspace)) {
    if (options.structured()) {
      PrintStructured(workspace, options, /*stream=*/true);
      continue;
    }
    std::string line = absl::StrCat(StateText(workspace.state()), " class=",
                                    OrDash(workspace.class_id()));
    if (!workspace.node_name().empty()) {
      absl::StrAppend(&line, " node=", workspace.node_name(), " gpus=", GpuIndices(workspace));
    }
    if (workspace.state() == v1::WORKSPACE_STATE_PENDING) {
      absl::StrAppend(&line, " pending ", PendingText(workspace));
    }
    if (workspace.event().kind() == v1::WorkspaceEvent::KIND_IDLE) {
      absl::StrAppend(&line, " idle: ", IdleText(workspace.event()));
    }
    if (IsBudgetEvent(workspace.event())) {
      absl::StrAppend(&line, " budget: ", BudgetText(workspace.event()));
    }
    std::cout << workspace.id() << " " << line << std::endl;
  }
  grpc::Status status = reader->Finish();
  if (!status.ok()) return Fail("watch " + args[0], status);
  return 0;
}

}  // namespace wsched::cli
