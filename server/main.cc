// wsched-server: flags in, RunServer out. All wiring lives in server/grpc.
#include <cstdio>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "server/grpc/server.h"
#include "server/log/log.h"

ABSL_FLAG(std::string, listen, "127.0.0.1:50051", "gRPC listen address (port 0 = any free port)");
ABSL_FLAG(std::string, database_url, "",
          "PostgreSQL URL, e.g. postgresql://wsched@127.0.0.1:5432/wsched");
ABSL_FLAG(std::string, metrics_listen, "127.0.0.1:9464",
          "Prometheus /metrics address; empty disables it");
ABSL_FLAG(std::string, catalog, "", "catalog YAML file or directory; applied at start and on SIGHUP");
ABSL_FLAG(std::string, auth_tokens_file, "", "YAML file mapping bearer tokens to roles");
ABSL_FLAG(bool, allow_unauthenticated, false, "development only: every caller is admin");
ABSL_FLAG(std::string, port_file, "", "write the bound gRPC port to this file");
ABSL_FLAG(absl::Duration, shutdown_grace, absl::Seconds(10),
          "how long in-flight RPCs may run after SIGTERM");
ABSL_FLAG(int, database_connections, 8, "PostgreSQL connections kept open");
ABSL_FLAG(absl::Duration, heartbeat_interval, absl::Seconds(10),
          "heartbeat interval the server asks node agents to use");
ABSL_FLAG(absl::Duration, node_lost_after, absl::Seconds(60),
          "a node without heartbeats for this long is marked lost");
ABSL_FLAG(std::vector<std::string>, actuator_command, {},
          "exec actuator: command and arguments, comma-separated (no shell); it gets "
          "WSCHED_POOL, WSCHED_TARGET_SIZE, WSCHED_NODES_TO_REMOVE, ... (deploy/actuators)");
ABSL_FLAG(absl::Duration, actuator_timeout, absl::Minutes(5), "exec actuator: time limit per run");
ABSL_FLAG(absl::Duration, scaling_batching_window, absl::Seconds(2),
          "how long pending work waits to be batched into one scale-up");
ABSL_FLAG(absl::Duration, default_node_start_time, absl::Minutes(5),
          "time-to-GPU estimate for pools without measured node start times");

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage("wsched-server: the workspace-class scheduler service");
  // Abseil's mutex deadlock detector records every lock order in a global
  // graph: a cost on every hot-path lock. Lock discipline is checked at compile
  // time instead (clang -Wthread-safety, tests/lint/thread_safety.py).
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  absl::ParseCommandLine(argc, argv);
  wsched::grpc_api::ServerOptions options;
  options.listen = absl::GetFlag(FLAGS_listen);
  options.database_url = absl::GetFlag(FLAGS_database_url);
  options.metrics_listen = absl::GetFlag(FLAGS_metrics_listen);
  options.catalog_path = absl::GetFlag(FLAGS_catalog);
  options.auth_tokens_file = absl::GetFlag(FLAGS_auth_tokens_file);
  options.allow_unauthenticated = absl::GetFlag(FLAGS_allow_unauthenticated);
  options.port_file = absl::GetFlag(FLAGS_port_file);
  options.shutdown_grace = absl::GetFlag(FLAGS_shutdown_grace);
  options.database_connections = absl::GetFlag(FLAGS_database_connections);
  options.heartbeat_interval = absl::GetFlag(FLAGS_heartbeat_interval);
  options.node_lost_after = absl::GetFlag(FLAGS_node_lost_after);
  options.actuator_command = absl::GetFlag(FLAGS_actuator_command);
  options.actuator_timeout = absl::GetFlag(FLAGS_actuator_timeout);
  options.scaling_batching_window = absl::GetFlag(FLAGS_scaling_batching_window);
  options.default_node_start_time = absl::GetFlag(FLAGS_default_node_start_time);
  absl::Status status = wsched::grpc_api::RunServer(options);
  if (!status.ok()) {
    wsched::log::Error("wsched-server cannot run", {{"error", std::string(status.message())}});
    return 1;
  }
  return 0;
}
