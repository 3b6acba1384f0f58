// wsched-agent: reports this node's GPUs and facts to wsched. Wiring only;
// see README.md in this folder for how to run it.
#include <pthread.h>
#include <signal.h>

#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/marshalling.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "server/agent/agent_loop.h"
#include "server/agent/discovery.h"
#include "server/agent/host_facts.h"
#include "server/agent/inventory_client.h"
#include "server/agent/agent_log.h"
#include "server/agent/node_json.h"
#include "server/agent/nvidia_layout.h"
#include "server/agent/nvidia_proc.h"
#include "server/agent/nvidia_smi.h"
#include "server/agent/rooted_fs.h"
#include "server/core/validation.h"
#include "server/core/vfio_binding.h"

ABSL_FLAG(std::string, root, "/",
          "The node's root filesystem (\"/host\" when the host is mounted into a container)");
ABSL_FLAG(std::string, node_name, "", "Node name; default: the root's hostname");
ABSL_FLAG(std::string, pool, "", "Node pool id this node belongs to (required with --server)");
ABSL_FLAG(std::string, provider_id, "", "Cloud provider id, e.g. aws:///us-east-1a/i-0abc");
ABSL_FLAG(std::string, server, "", "wsched server host:port");
ABSL_FLAG(std::string, token, "", "Bearer token of the agent role (prefer --token_file)");
ABSL_FLAG(std::string, token_file, "", "File holding the bearer token (not visible in ps)");
ABSL_FLAG(std::string, bootstrap_token_file, "",
          "File holding the pool's bootstrap token: registers this node once, with a node token "
          "the agent makes and keeps in --state_dir; every later call presents that one");
ABSL_FLAG(std::string, state_dir, "/var/lib/wsched-agent",
          "Directory of the agent's own state: node-token (mode 0600), made 0700 when missing");
ABSL_FLAG(bool, tls, false, "Connect with TLS");
ABSL_FLAG(std::string, tls_ca_file, "",
          "PEM CA bundle to verify the server with; default: system roots (implies --tls)");
ABSL_FLAG(std::string, tls_cert_file, "",
          "PEM client certificate of this node, for mutual TLS instead of a token (implies --tls)");
ABSL_FLAG(std::string, tls_key_file, "", "PEM private key of --tls_cert_file");
ABSL_FLAG(std::string, tls_server_name, "",
          "Name the server certificate must carry, when --server names it otherwise");
ABSL_FLAG(absl::Duration, heartbeat_interval, absl::Seconds(10),
          "Heartbeat interval until the server suggests one");
ABSL_FLAG(std::string, nvidia_smi, "nvidia-smi",
          "nvidia-smi to sample GPU usage with; empty: do not sample");
ABSL_FLAG(std::string, kmsg, "/dev/kmsg",
          "Kernel log to read NVIDIA XID events from (below --root); empty: do not read XIDs");
ABSL_FLAG(absl::Duration, xid_hold, absl::Minutes(5),
          "How long a GPU is reported unhealthy after an XID that makes it so");
ABSL_FLAG(std::string, cdi_dir, "/var/run/cdi",
          "Directory the node's CDI spec files are written to, as this agent sees it (a container "
          "mounts the host's /var/run/cdi there); empty: write none, answers carry the spec inline");
ABSL_FLAG(std::vector<std::string>, cdi_nvidia_spec_dirs,
          std::vector<std::string>({"/etc/cdi", "/var/run/cdi"}),
          "Directories where NVIDIA's generated CDI spec (kind nvidia.com/gpu) may be, as this agent "
          "sees them; when it is there its names are used and no GPU spec of ours is written");
ABSL_FLAG(std::string, cdi_host_root, "/",
          "How the node's container runtime sees --root: paths in the spec are this plus the path "
          "below --root (\"/\" on a host or with the host mounted at /host)");
ABSL_FLAG(std::string, gpu_binding, "host",
          "The pool's gpu_binding: host leaves drivers alone; vfio binds every GPU's IOMMU group "
          "(not its bridges) to vfio-pci before each report, which needs root (docs/agent.md)");
ABSL_FLAG(std::string, driver_install_runtime, "podman",
          "The command that runs driver installer images (a pool with driver_install node), "
          "split at spaces, e.g. \"podman --root /var/lib/wsched-agent/containers\"");
ABSL_FLAG(std::string, driver_cache, "/var/cache/wsched/driver",
          "The driver cache installers keep built drivers in: a directory on this machine "
          "(shared by the pool's nodes, e.g. NFS), mounted into the installer, or an object-store "
          "URL passed to it as it is");
ABSL_FLAG(absl::Duration, driver_install_timeout, absl::Minutes(30),
          "Longest a driver install may run; its container is then killed and the install "
          "reported failed");
ABSL_FLAG(absl::Duration, driver_install_retry, absl::Minutes(1),
          "Wait before a failed driver install runs again; doubles per failure up to 1h");
ABSL_FLAG(std::vector<std::string>, driver_install_volumes, {},
          "More volumes for the installer's container, HOST:CONTAINER[:OPTIONS], comma-separated");
ABSL_FLAG(bool, once, false, "Discover (and register, with --server) once, then exit");
ABSL_FLAG(bool, print, false, "Print the discovered node as JSON on stdout");

namespace {

using wsched::agent::Log;

constexpr int kExitFailure = 1;
constexpr int kExitUsage = 2;

absl::StatusOr<std::string> ReadLocalFile(const std::string& path) {
  // Agent-side files (the token), not the node's: no root applies.
  return wsched::agent::RootedFs("/").ReadFile(path);
}

void PrintNode(const wsched::core::NodeInfo& node) {
  std::cout << wsched::agent::NodeInfoToJson(node, wsched::agent::ClassifyGpus(node)) << std::endl;
}

sigset_t StopSignals() {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  return signals;
}

// SIGTERM/SIGINT stay blocked in every thread (threads inherit the mask, so
// this runs before any exists) and one thread takes them with sigwait, which
// can safely stop the loop where a signal handler could not take a lock.
void StartSignalThread(wsched::agent::StopSignal& stop) {
  sigset_t signals = StopSignals();
  std::thread([signals, &stop] {
    int number = 0;
    sigwait(&signals, &number);
    Log(absl::StrCat("got signal ", number, "; finishing"));
    stop.Stop();
  }).detach();
}

// A token file's contents, whitespace dropped; an empty one is an error.
absl::StatusOr<std::string> ReadTokenFile(const std::string& flag, const std::string& path) {
  absl::StatusOr<std::string> text = ReadLocalFile(path);
  if (!text.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("--", flag, ": ", text.status().message()));
  }
  std::string token(absl::StripAsciiWhitespace(*text));
  if (token.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("--", flag, ": ", path, " is empty"));
  }
  return token;
}

// Which credential the calls present (server/agent/agent_auth.h).
absl::StatusOr<wsched::agent::AuthOptions> AuthFlags(bool client_certificate) {
  wsched::agent::AuthOptions auth;
  auth.static_token = absl::GetFlag(FLAGS_token);
  const std::string token_file = absl::GetFlag(FLAGS_token_file);
  const std::string bootstrap_file = absl::GetFlag(FLAGS_bootstrap_token_file);
  if (!bootstrap_file.empty() && (!token_file.empty() || !auth.static_token.empty())) {
    return absl::InvalidArgumentError(
        "--bootstrap_token_file: not with --token_file or --token (a static token is the node's "
        "credential already; the bootstrap token makes one)");
  }
  if (!token_file.empty()) {
    absl::StatusOr<std::string> token = ReadTokenFile("token_file", token_file);
    if (!token.ok()) return token.status();
    auth.static_token = *std::move(token);
  }
  if (!bootstrap_file.empty()) {
    absl::StatusOr<std::string> token = ReadTokenFile("bootstrap_token_file", bootstrap_file);
    if (!token.ok()) return token.status();
    auth.bootstrap_token = *std::move(token);
  }
  // The node token is this node's credential with a bootstrap token, or
  // when nothing else is given (a token an admin installed there).
  if (!auth.bootstrap_token.empty() || (auth.static_token.empty() && !client_certificate)) {
    auth.state_dir = absl::GetFlag(FLAGS_state_dir);
    if (!auth.bootstrap_token.empty() && auth.state_dir.empty()) {
      return absl::InvalidArgumentError("--state_dir: required with --bootstrap_token_file");
    }
  }
  return auth;
}

wsched::agent::GrpcClientOptions ClientOptions() {
  wsched::agent::GrpcClientOptions client;
  client.server = absl::GetFlag(FLAGS_server);
  client.tls.tls = absl::GetFlag(FLAGS_tls);
  client.tls.ca_path = absl::GetFlag(FLAGS_tls_ca_file);
  client.tls.cert_path = absl::GetFlag(FLAGS_tls_cert_file);
  client.tls.key_path = absl::GetFlag(FLAGS_tls_key_file);
  client.tls.server_name = absl::GetFlag(FLAGS_tls_server_name);
  return client;
}

// --once --print without a server: show what would be registered.
int PrintOnly(const wsched::agent::AgentOptions& options) {
  wsched::agent::DiscoveryOptions discovery = options.discovery;
  if (!options.nvidia_smi.empty()) {
    absl::StatusOr<std::vector<wsched::agent::GpuUsage>> sample =
        wsched::agent::SampleNvidiaSmi(options.nvidia_smi);
    if (sample.ok()) {
      discovery.nvidia_smi = *std::move(sample);
    } else if (!absl::IsNotFound(sample.status())) {
      Log(absl::StrCat("nvidia-smi: ", sample.status().ToString()));
    }
    // MIG layout and links, as the agent reads them each cycle.
    absl::StatusOr<std::string> driver =
        wsched::agent::ReadDriverVersion(wsched::agent::RootedFs(discovery.root));
    if (!discovery.nvidia_smi.empty() && driver.ok() && !driver->empty()) {
      discovery.nvidia_layout = wsched::agent::NvidiaLayoutReader(options.nvidia_smi).Read();
      for (const std::string& problem : discovery.nvidia_layout.problems) {
        Log(absl::StrCat("nvidia-smi: ", problem, "; reported empty"));
      }
    }
  }
  absl::StatusOr<wsched::core::NodeInfo> node = wsched::agent::DiscoverNode(discovery);
  if (!node.ok()) {
    Log(absl::StrCat("discovery under ", discovery.root, ": ", node.status().ToString()));
    return kExitFailure;
  }
  PrintNode(*node);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "Reports this node's GPUs, IOMMU groups, kernel and driver to wsched.\n"
      "  wsched-agent --once --print                      show what would be reported\n"
      "  wsched-agent --server=HOST:PORT --pool=POOL --bootstrap_token_file=FILE [--state_dir=DIR]\n"
      "  wsched-agent --server=HOST:PORT --pool=POOL --token_file=FILE");
  // Blocked from the start so that a SIGTERM during startup is not lost, and
  // back to default disposition: a shell starts background jobs with SIGINT
  // ignored, and sigwait never sees an ignored signal.
  sigset_t stop_signals = StopSignals();
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  signal(SIGINT, SIG_DFL);
  signal(SIGTERM, SIG_DFL);
  absl::ParseCommandLine(argc, argv);

  wsched::agent::AgentOptions options;
  options.discovery.root = absl::GetFlag(FLAGS_root);
  options.discovery.node_name = absl::GetFlag(FLAGS_node_name);
  if (options.discovery.node_name.empty()) {
    options.discovery.node_name =
        wsched::agent::ReadHostname(wsched::agent::RootedFs(options.discovery.root));
  }
  options.discovery.pool = absl::GetFlag(FLAGS_pool);
  options.discovery.provider_id = absl::GetFlag(FLAGS_provider_id);
  options.nvidia_smi = absl::GetFlag(FLAGS_nvidia_smi);
  options.heartbeat_interval = absl::GetFlag(FLAGS_heartbeat_interval);
  if (std::string kmsg = absl::GetFlag(FLAGS_kmsg); !kmsg.empty()) {
    // Below the root: with --root=/host, the host's /dev/kmsg.
    absl::StatusOr<std::filesystem::path> path =
        wsched::agent::RootedFs(options.discovery.root).Resolve(kmsg);
    if (!path.ok()) {
      Log(absl::StrCat("--kmsg: ", path.status().ToString()));
      return kExitUsage;
    }
    options.kernel_log = path->string();
  }
  options.xid_hold = absl::GetFlag(FLAGS_xid_hold);
  options.cdi.spec_dir = absl::GetFlag(FLAGS_cdi_dir);
  options.cdi.nvidia_spec_dirs = absl::GetFlag(FLAGS_cdi_nvidia_spec_dirs);
  options.cdi.host_root = absl::GetFlag(FLAGS_cdi_host_root);
  if (auto binding = wsched::core::ParseGpuBinding(absl::GetFlag(FLAGS_gpu_binding))) {
    options.gpu_binding = *binding;
  } else {
    Log(absl::StrCat("--gpu_binding must be host or vfio, got \"", absl::GetFlag(FLAGS_gpu_binding),
                     "\""));
    return kExitUsage;
  }
  options.driver_install.podman = absl::StrSplit(absl::GetFlag(FLAGS_driver_install_runtime), ' ',
                                                 absl::SkipWhitespace());
  options.driver_install.host_root = options.discovery.root;
  options.driver_install.cache = absl::GetFlag(FLAGS_driver_cache);
  options.driver_install.timeout = absl::GetFlag(FLAGS_driver_install_timeout);
  options.driver_install.initial_backoff = absl::GetFlag(FLAGS_driver_install_retry);
  options.driver_install.extra_volumes = absl::GetFlag(FLAGS_driver_install_volumes);
  if (options.driver_install.podman.empty()) {
    Log("--driver_install_runtime must name a command");
    return kExitUsage;
  }
  if (options.driver_install.timeout <= absl::ZeroDuration() ||
      options.driver_install.initial_backoff <= absl::ZeroDuration()) {
    Log("--driver_install_timeout and --driver_install_retry must be positive");
    return kExitUsage;
  }
  const bool once = absl::GetFlag(FLAGS_once);
  const bool print = absl::GetFlag(FLAGS_print);
  const std::string server = absl::GetFlag(FLAGS_server);

  if (!wsched::core::IsDnsSubdomain(options.discovery.node_name)) {
    Log(absl::StrCat("node name \"", options.discovery.node_name,
                     "\" is not a DNS name; set --node_name"));
    return kExitUsage;
  }
  if (options.heartbeat_interval <= absl::ZeroDuration()) {
    Log("--heartbeat_interval must be positive");
    return kExitUsage;
  }
  if (!options.cdi.spec_dir.empty() && options.cdi.spec_dir.front() != '/') {
    Log("--cdi_dir must be an absolute path (or empty to write no spec)");
    return kExitUsage;
  }
  if (options.cdi.host_root.empty() || options.cdi.host_root.front() != '/') {
    Log("--cdi_host_root must be an absolute path");
    return kExitUsage;
  }
  if (options.xid_hold < absl::ZeroDuration()) {
    Log("--xid_hold must not be negative");
    return kExitUsage;
  }

  // A one-shot run has nothing to finish cleanly: let signals end it.
  if (once) pthread_sigmask(SIG_UNBLOCK, &stop_signals, nullptr);

  if (server.empty()) {
    if (!once || !print) {
      Log("--server is required (or use --once --print to only show the node)");
      return kExitUsage;
    }
    return PrintOnly(options);
  }
  if (options.discovery.pool.empty()) {
    Log("--pool is required with --server");
    return kExitUsage;
  }
  const wsched::agent::GrpcClientOptions client_options = ClientOptions();
  absl::StatusOr<wsched::agent::AuthOptions> auth =
      AuthFlags(/*client_certificate=*/!client_options.tls.cert_path.empty());
  if (!auth.ok()) {
    Log(auth.status().message());
    return kExitUsage;
  }
  if (!client_options.tls.enabled() &&
      (!auth->static_token.empty() || !auth->bootstrap_token.empty())) {
    Log("warning: sending the bearer token without --tls");
  }
  options.auth = *std::move(auth);
  if (print) options.on_register = PrintNode;

  // Leaked on purpose: the detached signal thread may touch it until exit.
  wsched::agent::StopSignal& stop = *new wsched::agent::StopSignal;
  if (!once) StartSignalThread(stop);
  absl::StatusOr<std::unique_ptr<wsched::agent::InventoryClient>> client =
      wsched::agent::NewGrpcInventoryClient(client_options);
  if (!client.ok()) {
    Log(client.status().ToString());
    return kExitUsage;
  }
  wsched::agent::Agent agent(options, **client, stop);
  if (once) {
    absl::Status status = agent.RunOnce();
    if (!status.ok()) {
      Log(status.ToString());
      return kExitFailure;
    }
    return 0;
  }
  agent.Run();
  return 0;
}
