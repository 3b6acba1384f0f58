// wschedctl: the admin/operator CLI. Thin: each command group lives in its own
// file; this file parses flags and dispatches.
#include <cstdlib>
#include <iostream>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/reflection.h"
#include "absl/flags/usage.h"
#include "server/cli/catalog_commands.h"
#include "server/cli/client.h"
#include "server/cli/inventory_commands.h"
#include "server/cli/options.h"
#include "server/cli/scaling_commands.h"
#include "server/cli/server_info.h"
#include "server/cli/settings_commands.h"
#include "server/cli/token_commands.h"
#include "server/cli/workspace_commands.h"
#include "server/grpc/channel_credentials.h"

ABSL_FLAG(std::string, server, "127.0.0.1:50051", "wsched-server gRPC address");
ABSL_FLAG(std::string, token, "", "bearer token (default: $WSCHED_TOKEN)");
ABSL_FLAG(bool, tls, false, "connect with TLS (verifying the server against --tls_ca or system roots)");
ABSL_FLAG(std::string, tls_ca, "", "PEM CA bundle to verify the server with (implies --tls)");
ABSL_FLAG(std::string, tls_cert, "", "PEM client certificate for mutual TLS (implies --tls)");
ABSL_FLAG(std::string, tls_key, "", "PEM private key of --tls_cert");
ABSL_FLAG(std::string, tls_server_name, "",
          "name the server certificate must carry, when --server is an IP or another name");
ABSL_FLAG(bool, dry_run, false, "catalog apply: validate and print the diff, change nothing");
ABSL_FLAG(std::string, output, "table", "table (for people) or json (the response, for scripts)");
ABSL_FLAG(std::string, pool, "", "nodes, workspaces: only this pool");
ABSL_FLAG(std::string, node, "", "workspaces: only this node");
ABSL_FLAG(std::string, state, "", "workspaces: only this state (pending|placed|stopped|lost)");
ABSL_FLAG(std::string, org, "", "place, resolve, project set-default: the org id");
ABSL_FLAG(std::string, project, "", "place, resolve: the project id");
ABSL_FLAG(std::string, user, "", "place: the user id");
ABSL_FLAG(std::string, class, "", "place, resolve: an explicitly requested class");
ABSL_FLAG(std::string, previous, "", "resolve: the class the workspace ran with before");
ABSL_FLAG(bool, restart, false, "place: a restart (the previous class comes before defaults)");
ABSL_FLAG(int, priority, 0, "place: queue priority 0..100, higher first");
ABSL_FLAG(std::string, default, "", "org set: the org's default class (empty clears it)");
ABSL_FLAG(std::string, allow, "", "org set: comma-separated allowed classes (empty = all)");
ABSL_FLAG(int64_t, gpu_quota, -1, "org set: max GPUs the org holds at once; -1 = unlimited");
ABSL_FLAG(std::string, role, "", "token create|hash: admin, control-plane, project-owner, agent, actuator");
ABSL_FLAG(std::string, name, "", "token create|hash: the entry's name (default: ROLE-<hash prefix>)");
ABSL_FLAG(std::vector<std::string>, orgs, {}, "token create|hash: project-owner orgs, comma-separated");
ABSL_FLAG(std::vector<std::string>, projects, {},
          "token create|hash: project-owner projects, comma-separated");
ABSL_FLAG(std::vector<std::string>, pools, {}, "token create|hash: agent pools, comma-separated");

namespace {

constexpr char kUsage[] = R"(wschedctl COMMAND [ARGS] [--server=HOST:PORT] [--token=T] [--output=json]
          [--tls] [--tls_ca=CA.pem] [--tls_cert=CERT.pem --tls_key=KEY.pem]

Server:
  health                      health check of the server (SERVING or not)
  rpcs                        list the server's services and RPCs (server reflection)

Catalog (admin):
  catalog validate FILE       check a catalog file or directory offline; prints every error
  catalog diff FILE           what applying FILE would change (server-side dry run)
  catalog apply FILE          apply FILE atomically (all or nothing); --dry_run = diff
  catalog show                the stored catalog as YAML
  classes                     list workspace classes with versions (etags)

Inventory:
  pools                       pools: GPU model, size range, nodes by state, GPUs held/total
  nodes [--pool=P]            nodes: state, driver state, GPUs held/total, heartbeat age
  node get NAME               one node in full, with every GPU and its IOMMU group
  node cordon NAME            no new placements on NAME; running workspaces stay
  node drain NAME             no new placements; workspaces are moved off
  node uncordon NAME          take placements again
  node remove NAME            forget NAME; its workspaces are reported lost
  driver-work                 pending driver installs (node, kernel, image), nodes without policy
  driver-report NODE KERNEL ok|failed [DETAIL]
                              report an installer job's result
  clear-gpu-health NODE GPU_UUID
                              return an unhealthy GPU to service now (admin)

Workspaces (control plane):
  place ID --org=O --project=P --user=U [--class=C] [--restart] [--priority=N]
                              place (or queue) a workspace; prints node, GPUs, device spec
  stop ID                     stop a workspace and free its GPUs
  workspace get ID            one workspace in full
  workspaces [--node=N] [--pool=P] [--state=S]
                              list workspaces
  watch ID                    stream a workspace's state changes (until stopped or Ctrl-C)

Class settings:
  project get PROJECT         a project's default class and denied classes
  project set-default PROJECT --org=O CLASS
                              set the project's default class ("" clears it)
  org get ORG                 an org's default class, allow-list and GPU quota
  org set ORG [--default=C] [--allow=a,b] [--gpu_quota=N]
                              change only the given settings (-1 = unlimited GPUs)
  resolve --org=O --project=P [--class=C] [--previous=C]
                              which class a new workspace would get, and why

Scaling:
  scaling                     per pool: current -> target size, reasons, nodes to remove
  scaling watch [POOL...]     stream the scaling signals

Tokens (local, no server):
  token create --role=R [--name=N] [--orgs=..] [--projects=..] [--pools=..]
                              a new random token (line 1) and its sha256 entry for
                              the tokens file (line 2)
  token hash --role=R [--name=N] [scopes] < FILE
                              the sha256 entry for an existing token read from stdin

  help, --help, -h            this text

Exit status: 0 ok, 1 the call failed, 2 bad usage.
)";

// absl exits 1 on an unknown flag; a usage error is 2 here, so check first.
// Collects the names of the flags given, so `org set` changes only those.
bool CheckFlags(int argc, char** argv, std::set<std::string>* given) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--") break;
    if (arg.size() < 2 || arg[0] != '-') continue;
    std::string name = arg.substr(arg[1] == '-' ? 2 : 1);
    name = name.substr(0, name.find('='));
    if (absl::FindCommandLineFlag(name) != nullptr) {
      given->insert(name);
      continue;
    }
    if (name.rfind("no", 0) == 0 && absl::FindCommandLineFlag(name.substr(2)) != nullptr) {
      given->insert(name.substr(2));
      continue;
    }
    std::cerr << "unknown flag " << arg << " (see wschedctl --help)\n";
    return false;
  }
  return true;
}

// `--help`, `-h` or the command `help`: the usage on stdout, exit 0, since
// asking for it is not a usage error. Checked before CheckFlags, which
// refuses every flag wschedctl does not define.
bool WantsHelp(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--") break;
    if (arg == "--help" || arg == "-help" || arg == "-h" || arg == "--h") return true;
  }
  return false;
}

template <typename T>
std::optional<T> IfGiven(const std::set<std::string>& given, const absl::Flag<T>& flag,
                         const char* name) {
  if (given.count(name) == 0) return std::nullopt;
  return absl::GetFlag(flag);
}

}  // namespace

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(kUsage);
  std::set<std::string> given;
  if (WantsHelp(argc, argv)) {
    std::cout << kUsage;
    return 0;
  }
  if (!CheckFlags(argc, argv, &given)) return 2;
  std::vector<char*> positional = absl::ParseCommandLine(argc, argv);
  if (positional.size() >= 2 && std::string(positional[1]) == "help") {
    std::cout << kUsage;
    return 0;
  }
  if (positional.size() < 2) {
    std::cerr << kUsage;
    return 2;
  }
  const std::string output = absl::GetFlag(FLAGS_output);
  if (output != "table" && output != "json") {
    std::cerr << "--output must be table or json, not \"" << output << "\"\n";
    return 2;
  }
  wsched::grpc_api::ClientTlsOptions tls;
  tls.tls = absl::GetFlag(FLAGS_tls);
  tls.ca_path = absl::GetFlag(FLAGS_tls_ca);
  tls.cert_path = absl::GetFlag(FLAGS_tls_cert);
  tls.key_path = absl::GetFlag(FLAGS_tls_key);
  tls.server_name = absl::GetFlag(FLAGS_tls_server_name);
  auto channel = wsched::grpc_api::CreateClientChannel(absl::GetFlag(FLAGS_server), tls);
  if (!channel.ok()) {
    std::cerr << "--tls_*: " << channel.status().message() << "\n";
    return 2;
  }
  wsched::cli::Client client;
  client.channel = *std::move(channel);
  client.token = absl::GetFlag(FLAGS_token);
  if (client.token.empty() && std::getenv("WSCHED_TOKEN") != nullptr) {
    client.token = std::getenv("WSCHED_TOKEN");
  }

  wsched::cli::Options options;
  options.json = output == "json";
  options.dry_run = absl::GetFlag(FLAGS_dry_run);
  options.pool = absl::GetFlag(FLAGS_pool);
  options.node = absl::GetFlag(FLAGS_node);
  options.state = absl::GetFlag(FLAGS_state);
  options.org = absl::GetFlag(FLAGS_org);
  options.project = absl::GetFlag(FLAGS_project);
  options.user = absl::GetFlag(FLAGS_user);
  options.class_id = absl::GetFlag(FLAGS_class);
  options.previous = absl::GetFlag(FLAGS_previous);
  options.restart = absl::GetFlag(FLAGS_restart);
  options.priority = absl::GetFlag(FLAGS_priority);
  options.default_class = IfGiven(given, FLAGS_default, "default");
  options.allow = IfGiven(given, FLAGS_allow, "allow");
  options.gpu_quota = IfGiven(given, FLAGS_gpu_quota, "gpu_quota");
  options.role = absl::GetFlag(FLAGS_role);
  options.name = absl::GetFlag(FLAGS_name);
  options.orgs = absl::GetFlag(FLAGS_orgs);
  options.projects = absl::GetFlag(FLAGS_projects);
  options.pools = absl::GetFlag(FLAGS_pools);

  namespace cli = wsched::cli;
  const std::string command = positional[1];
  const std::vector<std::string> args(positional.begin() + 2, positional.end());
  if (command == "token") return cli::TokenCommand(args, options, std::cin);
  if (command == "health") return cli::Health(client);
  if (command == "rpcs") return cli::ListRpcs(client);
  if (command == "catalog") return cli::CatalogCommand(client, args, options.dry_run);
  if (command == "classes") return cli::ClassesCommand(client, args, options);
  if (command == "pools") return cli::PoolsCommand(client, args, options);
  if (command == "nodes") return cli::NodesCommand(client, args, options);
  if (command == "node") return cli::NodeCommand(client, args, options);
  if (command == "driver-work") return cli::DriverWorkCommand(client, args, options);
  if (command == "driver-report") return cli::DriverReportCommand(client, args, options);
  if (command == "clear-gpu-health") return cli::ClearGpuHealthCommand(client, args, options);
  if (command == "place") return cli::PlaceCommand(client, args, options);
  if (command == "stop") return cli::StopCommand(client, args, options);
  if (command == "workspace") return cli::WorkspaceCommand(client, args, options);
  if (command == "workspaces") return cli::WorkspacesCommand(client, args, options);
  if (command == "watch") return cli::WatchCommand(client, args, options);
  if (command == "project") return cli::ProjectCommand(client, args, options);
  if (command == "org") return cli::OrgCommand(client, args, options);
  if (command == "resolve") return cli::ResolveCommand(client, args, options);
  if (command == "scaling") return cli::ScalingCommand(client, args, options);
  std::cerr << "unknown command \"" << command << "\"\n" << kUsage;
  return 2;
}
