// The composition root of wsched-server: its options (every flag's
// default is written here, or in the options of the part it configures,
// once) and the wiring of store, scheduler, services, metrics and signals.
#ifndef WSCHED_SERVER_ROOT_SERVER_H_
#define WSCHED_SERVER_ROOT_SERVER_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "server/grpc/rate_limiter.h"
#include "server/grpc/tls_server.h"
#include "server/scheduler/scheduler_options.h"

namespace wsched::root {

struct ServerOptions {
  // The scheduler's own defaults, where a flag sets one of its options.
  static inline const scheduler::SchedulerOptions kScheduler{};

  std::string listen = "127.0.0.1:50051";
  std::string database_url;
  std::string metrics_listen = "127.0.0.1:9464";  // Empty: no metrics endpoint.
  std::string catalog_path;                       // Applied at start and on SIGHUP.
  std::string auth_tokens_file;
  // Refuse clear-text `token:` entries instead of warning about them.
  bool require_hashed_tokens = false;
  // Accept agent entries bound to no node (docs/security.md, "Node identity").
  bool allow_shared_agent_credentials = false;
  // How often the tokens file is checked for changes (0: only on SIGHUP).
  absl::Duration auth_reload_interval = absl::Seconds(5);
  bool allow_unauthenticated = false;
  // Plaintext when tls.cert_path is empty.
  grpc_api::TlsServerOptions tls;
  // Larger requests are refused with RESOURCE_EXHAUSTED, MESSAGE_TOO_LARGE.
  int max_receive_message_bytes = 4 << 20;
  // In-flight calls per agent or project-owner principal; 0: unlimited.
  int max_concurrent_calls_per_principal = 64;
  // Calls per second per principal, by role (rate_limiter.h).
  grpc_api::RateLimits rate_limits = grpc_api::DefaultRateLimits();
  // One placer, many front doors (docs/architecture.md): the host or IP
  // the other replicas reach this one on (with the bound gRPC port). Empty:
  // this replica takes no part and places every call it receives.
  std::string advertise_host;
  absl::Duration placer_poll_interval = absl::Milliseconds(200);
  // TLS between replicas, when this server serves TLS: the CA that signed
  // the replicas' serving certificates (empty: the system's roots) and the
  // name to verify them against (empty: the advertised host).
  std::string peer_tls_ca;
  std::string peer_tls_server_name;
  std::string port_file;  // Receives the bound gRPC port (for --listen=...:0).
  absl::Duration shutdown_grace = absl::Seconds(10);
  int database_connections = 8;
  // Bounded waits on PostgreSQL (store::DatabaseBounds, docs/operations.md
  // "Bounded waits"): one transaction of a call or one group-commit batch;
  // one retention-sweep batch (and the migrations); the health check's and
  // the lock sessions' probes.
  absl::Duration database_call_timeout = absl::Seconds(5);
  absl::Duration database_sweep_timeout = absl::Minutes(5);
  absl::Duration database_probe_timeout = absl::Seconds(1);
  // The scaling leader's and the placer's lease (store/lock_lease.h,
  // docs/architecture.md "Leases").
  absl::Duration leader_lease = absl::Seconds(6);
  absl::Duration heartbeat_interval = kScheduler.heartbeat_interval;  // Told to agents.
  absl::Duration node_lost_after = kScheduler.node_lost_after;  // No heartbeat: lost.
  // An unhealthy GPU returns to service after reporting healthy this long.
  absl::Duration gpu_healthy_for = kScheduler.gpu_healthy_for;
  // The shortest idle `for` a class's idle-GPU policy may give.
  absl::Duration min_idle_for = absl::Minutes(1);
  absl::Duration commit_wait = kScheduler.max_commit_wait;  // store::CommitBatcher::Options::max_wait.
  // A new GPU placement's first interval against spending limits.
  absl::Duration budget_interval = kScheduler.budget_interval;
  absl::Duration feed_gap = kScheduler.feed_gap;
  // WatchWorkspaces and WatchNodes (docs/api.md "Following every workspace"):
  // how many messages a stream may fall behind before it is ended, and how long
  // a quiet stream waits for a bookmark.
  int watch_buffer = 1000;
  // Connections older than this are asked to reconnect (0: never).
  absl::Duration max_connection_age = absl::ZeroDuration();
  absl::Duration watch_bookmark_interval = kScheduler.watch_bookmark_interval;
  // Scaling: the exec actuator's command (argv, no shell); empty = none.
  std::vector<std::string> actuator_command;
  absl::Duration actuator_timeout = absl::Minutes(5);
  // The `cluster` face of driver installs (scheduler/cluster_driver_installs.h):
  // the command run per node (argv, no shell; empty = none), its time limit
  // and the cache it is handed (WSCHED_DRIVER_CACHE).
  std::vector<std::string> driver_install_command;
  absl::Duration driver_install_timeout = absl::Minutes(30);
  std::string driver_install_cache = "/var/cache/wsched/driver";
  absl::Duration scaling_batching_window = absl::Seconds(2);
  // Used for "time to GPU" until a pool has measured node start times.
  absl::Duration default_node_start_time = kScheduler.default_node_start;
  // Used until a pool has measured driver installs on a kernel.
  absl::Duration default_driver_install_time = kScheduler.default_driver_install;
  // wsched_estimate_within_p90_ratio is over this window.
  absl::Duration estimate_accuracy_window = kScheduler.estimate_accuracy_window;
  // Stopped workspace rows are deleted this long after they stopped; zero
  // keeps them. The scaling leader sweeps every sweep interval.
  absl::Duration stopped_workspace_retention = absl::Hours(168);
  absl::Duration stopped_workspace_sweep_interval = absl::Minutes(1);
  // Audit records are deleted this long after they were written (same
  // sweep); zero keeps them.
  absl::Duration audit_retention = absl::Hours(24 * 90);
  // Usage records (the billing ledger) are deleted this long after they
  // ended (same sweep); zero keeps them.
  absl::Duration usage_retention = absl::Hours(24 * 400);
  // grpc.health.v1: how often the database, schema and feed are checked,
  // and how far behind the change feed may be before NOT_SERVING.
  absl::Duration health_check_interval = absl::Seconds(1);
  absl::Duration health_max_feed_lag = absl::Seconds(30);
};

// Runs until SIGTERM/SIGINT, then lets in-flight RPCs finish (up to
// shutdown_grace) and returns OK. Returns an error for bad configuration or
// an unusable database, before serving anything.
absl::Status RunServer(const ServerOptions& options);

}  // namespace wsched::root

#endif  // WSCHED_SERVER_ROOT_SERVER_H_
