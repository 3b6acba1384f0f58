// wsched-server: flags in, RunServer out. All wiring lives in server/app (server.h).
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "server/root/server.h"
#include "server/log/log.h"

// Every default is ServerOptions' (root/server.h), written once there.
const wsched::root::ServerOptions kDefaults;

ABSL_FLAG(std::string, listen, kDefaults.listen, "gRPC listen address (port 0 = any free port)");
ABSL_FLAG(std::string, database_url, "",
          "PostgreSQL URL, e.g. postgresql://wsched@127.0.0.1:5432/wsched; with a password, "
          "prefer --database_url_file or --fromenv=database_url (argv is world-readable)");
ABSL_FLAG(std::string, database_url_file, "",
          "file holding the PostgreSQL URL (surrounding whitespace ignored), e.g. a systemd "
          "credential: ${CREDENTIALS_DIRECTORY}/database-url; instead of --database_url");
ABSL_FLAG(std::string, metrics_listen, kDefaults.metrics_listen,
          "Prometheus /metrics address; empty disables it");
ABSL_FLAG(std::string, catalog, "", "catalog YAML file or directory; applied at start and on SIGHUP");
ABSL_FLAG(std::string, auth_tokens_file, "",
          "YAML file mapping bearer-token hashes and client-certificate identities to roles; "
          "re-read on SIGHUP and when it changes");
ABSL_FLAG(bool, require_hashed_tokens, kDefaults.require_hashed_tokens,
          "refuse clear-text token: entries in the tokens file (default: warn about them)");
ABSL_FLAG(bool, allow_shared_agent_credentials, kDefaults.allow_shared_agent_credentials,
          "accept agent entries in the tokens file that speak for every node of their pools "
          "(weaker: one stolen credential can report for any of those nodes); by default each "
          "agent credential names its node, is an identity pattern with {node}, or is a "
          "bootstrap token");
ABSL_FLAG(absl::Duration, auth_reload_interval, kDefaults.auth_reload_interval,
          "how often the tokens file is checked for changes; 0 = only on SIGHUP");
ABSL_FLAG(std::string, tls_cert, "", "PEM certificate chain to serve TLS with (with --tls_key)");
ABSL_FLAG(std::string, tls_key, "", "PEM private key of --tls_cert");
ABSL_FLAG(std::string, tls_client_ca, "",
          "PEM CA bundle for client certificates (mutual TLS); their identities map to roles "
          "through the identities: list of the tokens file");
ABSL_FLAG(bool, tls_require_client_cert, kDefaults.tls.require_client_cert,
          "with --tls_client_ca: refuse connections without a client certificate");
ABSL_FLAG(absl::Duration, tls_reload_interval, kDefaults.tls.reload_interval,
          "how often the TLS certificate, key and client CA files are re-read");
ABSL_FLAG(int, max_receive_message_size, kDefaults.max_receive_message_bytes,
          "largest request in bytes; larger ones fail with RESOURCE_EXHAUSTED");
ABSL_FLAG(int, max_concurrent_calls_per_principal, kDefaults.max_concurrent_calls_per_principal,
          "in-flight calls one agent or project-owner principal may have; 0 = unlimited");
ABSL_FLAG(std::vector<std::string>, rate_limits, {},
          "calls per second per principal by role, comma-separated ROLE=RATE/BURST (RATE 0 = "
          "unlimited; BURST defaults to RATE); a principal gets its most generous role's limit. "
          "Roles not named keep their defaults: control-plane=0, agent=5000/10000, "
          "admin=1000/2000, project-owner=50/200, actuator=50/200");
ABSL_FLAG(bool, allow_unauthenticated, kDefaults.allow_unauthenticated, "development only: every caller is admin");
ABSL_FLAG(std::string, port_file, "", "write the bound gRPC port to this file");
ABSL_FLAG(std::string, advertise_host, "",
          "host or IP the other replicas reach this one on (with the bound gRPC port): the "
          "replica holding the placement lock places, the others forward placements and stops "
          "to it (docs/architecture.md); empty: this replica places every call it receives");
ABSL_FLAG(absl::Duration, placer_poll_interval, kDefaults.placer_poll_interval,
          "how often the placement lock is polled: the longest a vanished placer stays placer");
ABSL_FLAG(std::string, peer_tls_ca, "",
          "with TLS and --advertise_host: CA of the replicas' serving certificates (empty: the "
          "system's roots)");
ABSL_FLAG(std::string, peer_tls_server_name, "",
          "with TLS and --advertise_host: name the replicas' certificates are verified against "
          "(empty: the advertised host)");
ABSL_FLAG(absl::Duration, shutdown_grace, kDefaults.shutdown_grace,
          "how long in-flight RPCs may run after SIGTERM");
ABSL_FLAG(int, database_connections, kDefaults.database_connections, "PostgreSQL connections kept open");
ABSL_FLAG(absl::Duration, database_call_timeout, kDefaults.database_call_timeout,
          "the longest one transaction of a call, or one group-commit batch, waits on "
          "PostgreSQL: past it the connection is abandoned and the call answers UNAVAILABLE "
          "(DATABASE_UNAVAILABLE); also the sessions' statement_timeout");
ABSL_FLAG(absl::Duration, database_sweep_timeout, kDefaults.database_sweep_timeout,
          "the same bound for one batch of a retention sweep, and for the migrations at start");
ABSL_FLAG(absl::Duration, database_probe_timeout, kDefaults.database_probe_timeout,
          "the bound of the health check's query and of each probe of a lock session (scaling "
          "leader, placer)");
ABSL_FLAG(absl::Duration, leader_lease, kDefaults.leader_lease,
          "the scaling leader's and the placer's lease: a replica acts on its lock only within "
          "half of it after its session last answered; PostgreSQL ends a session silent for "
          "all of it");
ABSL_FLAG(absl::Duration, commit_wait, kDefaults.commit_wait,
          "how long a group commit's first write may wait for company when the writer is idle "
          "(0: batches form only from writes that arrive during a commit)");
ABSL_FLAG(absl::Duration, budget_interval, kDefaults.budget_interval,
          "what a new GPU placement commits to against its org's and project's spending limits: "
          "its GPUs for this long, counted as spent from its placement until it has run that long; "
          "a workspace that stops sooner frees the rest (docs/billing.md \"Spending limits\")");
ABSL_FLAG(absl::Duration, feed_gap, kDefaults.feed_gap,
          "the least time between two background reads of the change log: other replicas' "
          "commits in between are read together, and this replica's view of them lags by "
          "up to this much more (0: read on every notification)");
ABSL_FLAG(int, watch_buffer, kDefaults.watch_buffer,
          "how many messages a WatchWorkspaces or WatchNodes stream may fall "
          "behind before it is ended with "
          "WATCH_TOO_SLOW (it then resumes from its last version), 10..100000");
ABSL_FLAG(absl::Duration, watch_bookmark_interval,
          kDefaults.watch_bookmark_interval,
          "a WatchWorkspaces or WatchNodes stream sent nothing for this long "
          "gets a bookmark with the current "
          "version, 1s..1h");
ABSL_FLAG(absl::Duration, max_connection_age, kDefaults.max_connection_age,
          "ask clients to reconnect once their connection is this old (GOAWAY, then 30s for "
          "calls in flight), so long-lived clients spread over replicas added later; watch "
          "streams resume from their last version (0: never; at least 1m)");
ABSL_FLAG(absl::Duration, heartbeat_interval, kDefaults.heartbeat_interval,
          "heartbeat interval the server asks node agents to use");
ABSL_FLAG(absl::Duration, node_lost_after, kDefaults.node_lost_after,
          "a node without heartbeats for this long is marked lost");
ABSL_FLAG(absl::Duration, gpu_healthy_for, kDefaults.gpu_healthy_for,
          "an unhealthy GPU returns to service once its agent has reported it healthy for "
          "this long (or an admin runs wschedctl clear-gpu-health)");
ABSL_FLAG(absl::Duration, min_idle_for, kDefaults.min_idle_for,
          "the shortest idle `for` a class's idle-GPU policy may give (docs/catalog.md "
          "\"Idle GPUs\")");
ABSL_FLAG(std::vector<std::string>, actuator_command, {},
          "exec actuator: command and arguments, comma-separated (no shell); it gets "
          "WSCHED_POOL, WSCHED_TARGET_SIZE, WSCHED_NODES_TO_REMOVE, ... (deploy/actuators)");
ABSL_FLAG(absl::Duration, actuator_timeout, kDefaults.actuator_timeout, "exec actuator: time limit per run");
ABSL_FLAG(std::vector<std::string>, driver_install_command, {},
          "driver installs of `driver_install: cluster` pools: command and arguments, "
          "comma-separated (no shell), run by the scaling leader once per node with the "
          "installer contract's WSCHED_* environment (deploy/actuators/"
          "driver-install-kubernetes-job.sh); empty: such pools are handled as manual");
ABSL_FLAG(absl::Duration, driver_install_timeout, kDefaults.driver_install_timeout,
          "driver installs of cluster pools: time limit per run (WSCHED_TIMEOUT_SECONDS)");
ABSL_FLAG(std::string, driver_install_cache, kDefaults.driver_install_cache,
          "driver installs of cluster pools: WSCHED_DRIVER_CACHE, the build cache on the "
          "nodes (a directory) or an object-store URL");
ABSL_FLAG(absl::Duration, scaling_batching_window, kDefaults.scaling_batching_window,
          "how long pending work waits to be batched into one scale-up");
ABSL_FLAG(absl::Duration, default_node_start_time, kDefaults.default_node_start_time,
          "time-to-GPU estimate for pools without measured node start times");
ABSL_FLAG(absl::Duration, default_driver_install_time, kDefaults.default_driver_install_time,
          "time-to-GPU estimate of a driver install on a kernel without measured installs");
ABSL_FLAG(absl::Duration, estimate_accuracy_window, kDefaults.estimate_accuracy_window,
          "window of wsched_estimate_within_p90_ratio: the share of queued workspaces placed "
          "within their p90 estimate");

ABSL_FLAG(absl::Duration, stopped_workspace_retention, kDefaults.stopped_workspace_retention,
          "stopped workspaces are deleted this long after they stopped (0 = kept forever)");
ABSL_FLAG(absl::Duration, stopped_workspace_sweep_interval, kDefaults.stopped_workspace_sweep_interval,
          "how often the scaling leader deletes stopped workspaces past the retention");
ABSL_FLAG(absl::Duration, audit_retention, kDefaults.audit_retention,
          "audit records (wschedctl audit) are deleted this long after they were written, by "
          "the same sweep as stopped workspaces (0 = kept forever)");
ABSL_FLAG(absl::Duration, usage_retention, kDefaults.usage_retention,
          "usage records (the billing ledger: wschedctl usage) are deleted this long after the "
          "placement ended, by the same sweep as stopped workspaces (0 = kept forever)");
ABSL_FLAG(absl::Duration, health_check_interval, kDefaults.health_check_interval,
          "how often grpc.health.v1 is re-checked (database reachable, migrations complete, "
          "change feed followed)");
ABSL_FLAG(absl::Duration, health_max_feed_lag, kDefaults.health_max_feed_lag,
          "health reports NOT_SERVING while this replica has not caught up with the change "
          "feed for longer than this");

namespace {

// --database_url or the contents of --database_url_file (one of them).
absl::StatusOr<std::string> DatabaseUrl() {
  std::string url = absl::GetFlag(FLAGS_database_url);
  const std::string path = absl::GetFlag(FLAGS_database_url_file);
  if (path.empty()) return url;
  if (!url.empty()) {
    return absl::InvalidArgumentError("--database_url and --database_url_file: give only one");
  }
  std::ifstream file(path);
  std::stringstream contents;
  contents << file.rdbuf();
  if (!file) {
    return absl::InvalidArgumentError(
        absl::StrCat("--database_url_file: cannot read ", path, ": ", std::strerror(errno)));
  }
  url = std::string(absl::StripAsciiWhitespace(contents.str()));
  if (url.empty()) return absl::InvalidArgumentError(absl::StrCat("--database_url_file: ", path, " is empty"));
  return url;
}

}  // namespace

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage("wsched-server: the workspace-class scheduler service");
  // Abseil's mutex deadlock detector records every lock order in a global
  // graph: a cost on every hot-path lock. Lock discipline is checked at compile
  // time instead (clang -Wthread-safety, tests/lint/thread_safety.py).
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  absl::ParseCommandLine(argc, argv);
  wsched::root::ServerOptions options;
  options.listen = absl::GetFlag(FLAGS_listen);
  absl::StatusOr<std::string> database_url = DatabaseUrl();
  if (!database_url.ok()) {
    wsched::log::Error(std::string(database_url.status().message()));
    return 1;
  }
  options.database_url = *database_url;
  options.metrics_listen = absl::GetFlag(FLAGS_metrics_listen);
  options.catalog_path = absl::GetFlag(FLAGS_catalog);
  options.auth_tokens_file = absl::GetFlag(FLAGS_auth_tokens_file);
  options.require_hashed_tokens = absl::GetFlag(FLAGS_require_hashed_tokens);
  options.allow_shared_agent_credentials = absl::GetFlag(FLAGS_allow_shared_agent_credentials);
  options.auth_reload_interval = absl::GetFlag(FLAGS_auth_reload_interval);
  options.allow_unauthenticated = absl::GetFlag(FLAGS_allow_unauthenticated);
  options.tls.cert_path = absl::GetFlag(FLAGS_tls_cert);
  options.tls.key_path = absl::GetFlag(FLAGS_tls_key);
  options.tls.client_ca_path = absl::GetFlag(FLAGS_tls_client_ca);
  options.tls.require_client_cert = absl::GetFlag(FLAGS_tls_require_client_cert);
  options.tls.reload_interval = absl::GetFlag(FLAGS_tls_reload_interval);
  options.max_receive_message_bytes = absl::GetFlag(FLAGS_max_receive_message_size);
  options.max_concurrent_calls_per_principal =
      absl::GetFlag(FLAGS_max_concurrent_calls_per_principal);
  absl::StatusOr<wsched::grpc_api::RateLimits> rate_limits =
      wsched::grpc_api::ParseRateLimits(absl::GetFlag(FLAGS_rate_limits));
  if (!rate_limits.ok()) {
    wsched::log::Error(std::string(rate_limits.status().message()));
    return 1;
  }
  options.rate_limits = *rate_limits;
  options.port_file = absl::GetFlag(FLAGS_port_file);
  options.advertise_host = absl::GetFlag(FLAGS_advertise_host);
  options.placer_poll_interval = absl::GetFlag(FLAGS_placer_poll_interval);
  if (options.placer_poll_interval < absl::Milliseconds(10) ||
      options.placer_poll_interval > absl::Seconds(10)) {
    wsched::log::Error("--placer_poll_interval must be between 10ms and 10s");
    return 1;
  }
  options.peer_tls_ca = absl::GetFlag(FLAGS_peer_tls_ca);
  options.peer_tls_server_name = absl::GetFlag(FLAGS_peer_tls_server_name);
  options.shutdown_grace = absl::GetFlag(FLAGS_shutdown_grace);
  options.database_connections = absl::GetFlag(FLAGS_database_connections);
  options.database_call_timeout = absl::GetFlag(FLAGS_database_call_timeout);
  options.database_sweep_timeout = absl::GetFlag(FLAGS_database_sweep_timeout);
  options.database_probe_timeout = absl::GetFlag(FLAGS_database_probe_timeout);
  for (const auto& [flag, value] :
       {std::pair{"--database_call_timeout", options.database_call_timeout},
        std::pair{"--database_sweep_timeout", options.database_sweep_timeout},
        std::pair{"--database_probe_timeout", options.database_probe_timeout}}) {
    if (value < absl::Milliseconds(100) || value > absl::Hours(24)) {
      wsched::log::Error(absl::StrCat(flag, " must be between 100ms and 24h"));
      return 1;
    }
  }
  // Checked against the probe intervals when the server starts.
  options.leader_lease = absl::GetFlag(FLAGS_leader_lease);
  options.commit_wait = absl::GetFlag(FLAGS_commit_wait);
  options.budget_interval = absl::GetFlag(FLAGS_budget_interval);
  if (options.budget_interval < absl::ZeroDuration() || options.budget_interval > absl::Hours(24)) {
    wsched::log::Error("--budget_interval must be between 0 and 24h");
    return 1;
  }
  if (options.commit_wait < absl::ZeroDuration() || options.commit_wait > absl::Milliseconds(100)) {
    wsched::log::Error("--commit_wait must be between 0 and 100ms");
    return 1;
  }
  options.feed_gap = absl::GetFlag(FLAGS_feed_gap);
  if (options.feed_gap < absl::ZeroDuration() || options.feed_gap > absl::Milliseconds(100)) {
    wsched::log::Error("--feed_gap must be between 0 and 100ms");
    return 1;
  }
  options.watch_buffer = absl::GetFlag(FLAGS_watch_buffer);
  if (options.watch_buffer < 10 || options.watch_buffer > 100000) {
    wsched::log::Error("--watch_buffer must be between 10 and 100000");
    return 1;
  }
  options.max_connection_age = absl::GetFlag(FLAGS_max_connection_age);
  if (options.max_connection_age != absl::ZeroDuration() &&
      (options.max_connection_age < absl::Minutes(1) ||
       options.max_connection_age > absl::Hours(24 * 24))) {
    wsched::log::Error("--max_connection_age must be 0 or between 1m and 24 days");
    return 1;
  }
  options.watch_bookmark_interval = absl::GetFlag(FLAGS_watch_bookmark_interval);
  if (options.watch_bookmark_interval < absl::Seconds(1) ||
      options.watch_bookmark_interval > absl::Hours(1)) {
    wsched::log::Error("--watch_bookmark_interval must be between 1s and 1h");
    return 1;
  }
  options.heartbeat_interval = absl::GetFlag(FLAGS_heartbeat_interval);
  options.node_lost_after = absl::GetFlag(FLAGS_node_lost_after);
  options.gpu_healthy_for = absl::GetFlag(FLAGS_gpu_healthy_for);
  if (options.gpu_healthy_for < absl::ZeroDuration()) {
    wsched::log::Error("--gpu_healthy_for must not be negative");
    return 1;
  }
  options.min_idle_for = absl::GetFlag(FLAGS_min_idle_for);
  if (options.min_idle_for < absl::Seconds(1)) {
    wsched::log::Error("--min_idle_for must be at least 1s");
    return 1;
  }
  options.actuator_command = absl::GetFlag(FLAGS_actuator_command);
  options.actuator_timeout = absl::GetFlag(FLAGS_actuator_timeout);
  options.driver_install_command = absl::GetFlag(FLAGS_driver_install_command);
  options.driver_install_timeout = absl::GetFlag(FLAGS_driver_install_timeout);
  options.driver_install_cache = absl::GetFlag(FLAGS_driver_install_cache);
  options.scaling_batching_window = absl::GetFlag(FLAGS_scaling_batching_window);
  options.default_node_start_time = absl::GetFlag(FLAGS_default_node_start_time);
  options.default_driver_install_time = absl::GetFlag(FLAGS_default_driver_install_time);
  options.estimate_accuracy_window = absl::GetFlag(FLAGS_estimate_accuracy_window);
  options.stopped_workspace_retention = absl::GetFlag(FLAGS_stopped_workspace_retention);
  options.stopped_workspace_sweep_interval = absl::GetFlag(FLAGS_stopped_workspace_sweep_interval);
  if (options.stopped_workspace_retention < absl::ZeroDuration() ||
      options.stopped_workspace_sweep_interval <= absl::ZeroDuration()) {
    wsched::log::Error("--stopped_workspace_retention must not be negative and "
                       "--stopped_workspace_sweep_interval must be positive");
    return 1;
  }
  options.audit_retention = absl::GetFlag(FLAGS_audit_retention);
  if (options.audit_retention < absl::ZeroDuration()) {
    wsched::log::Error("--audit_retention must not be negative");
    return 1;
  }
  options.usage_retention = absl::GetFlag(FLAGS_usage_retention);
  if (options.usage_retention < absl::ZeroDuration()) {
    wsched::log::Error("--usage_retention must not be negative");
    return 1;
  }
  options.health_check_interval = absl::GetFlag(FLAGS_health_check_interval);
  options.health_max_feed_lag = absl::GetFlag(FLAGS_health_max_feed_lag);
  if (options.health_check_interval <= absl::ZeroDuration() ||
      options.health_max_feed_lag <= absl::ZeroDuration()) {
    wsched::log::Error("--health_check_interval and --health_max_feed_lag must be positive");
    return 1;
  }
  absl::Status status = wsched::root::RunServer(options);
  if (!status.ok()) {
    wsched::log::Error("wsched-server cannot run", {{"error", std::string(status.message())}});
    return 1;
  }
  return 0;
}
