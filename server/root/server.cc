#include "server/root/server.h"

#include <algorithm>
#include <csignal>
#include <cstdint>
#include <fstream>
#include <memory>
#include <optional>
#include <thread>

#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/grpcpp.h>
#include <grpcpp/health_check_service_interface.h>
#include <prometheus/exposer.h>

#include "absl/strings/str_cat.h"
#include "server/app/application.h"
#include "server/app/placer_election.h"
#include "server/grpc/concurrency_limiter.h"
#include "server/grpc/health_reporter.h"
#include "server/grpc/live_authenticator.h"
#include "server/grpc/tls_server.h"
#include "server/grpc/metrics_interceptor.h"
#include "server/grpc/placement_forwarder.h"
#include "server/grpc/reflection_v1.h"
#include "server/grpc/services.h"
#include "server/log/log.h"
#include "server/metrics/metrics.h"
#include "server/store/call_watchdog.h"
#include "server/store/database.h"
#include "server/store/lock_lease.h"
#include "server/store/migrations.h"
#include "server/store/schema_probe.h"

namespace wsched::root {
namespace {

// The transport's parts this root wires.
using app::Application;
using app::ApplicationOptions;
using grpc_api::CheckMethodTableCovers;
using grpc_api::ClientTlsOptions;
using grpc_api::ConcurrencyLimiter;
using grpc_api::DescribeCertificate;
using grpc_api::HealthProbes;
using grpc_api::HealthReporter;
using grpc_api::HealthReporterOptions;
using grpc_api::LiveAuthenticator;
using grpc_api::MetricsInterceptorFactory;
using grpc_api::PlacementForwarder;
using grpc_api::RateLimiter;
using grpc_api::ReflectionV1Service;
using grpc_api::Role;
using grpc_api::RoleName;
using grpc_api::ServiceContext;
using grpc_api::Services;
using grpc_api::TokenDigest;

absl::StatusOr<std::unique_ptr<LiveAuthenticator>> LoadAuth(const ServerOptions& options) {
  if (!options.auth_tokens_file.empty()) {
    return LiveAuthenticator::Open(options.auth_tokens_file,
                                   {.require_hashed_tokens = options.require_hashed_tokens,
                                    .allow_shared_agent_credentials =
                                        options.allow_shared_agent_credentials},
                                   options.auth_reload_interval);
  }
  if (options.allow_unauthenticated) {
    log::Warning("authentication disabled (--allow_unauthenticated): every caller is admin");
    return LiveAuthenticator::AllowAll();
  }
  return absl::InvalidArgumentError(
      "--auth_tokens_file is required (or --allow_unauthenticated for local development)");
}

absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> ListenCredentials(
    const ServerOptions& options) {
  auto credentials = MakeServerCredentials(options.tls);
  if (!credentials.ok()) return credentials.status();
  if (!TlsEnabled(options.tls)) {
    log::Warning("serving plaintext gRPC: tokens cross the network in clear text; "
                 "use --tls_cert/--tls_key (docs/security.md)");
    return credentials;
  }
  auto served = DescribeCertificate(options.tls.cert_path);
  log::Info("serving TLS",
            {{"certificate", served.ok() ? *served : std::string(served.status().message())},
             {"client_certificates", options.tls.client_ca_path.empty() ? "not requested"
                                     : options.tls.require_client_cert ? "required"
                                                                       : "verified when sent"},
             {"reload_interval", absl::FormatDuration(options.tls.reload_interval)}});
  return credentials;
}

absl::Status Migrate(store::Database& db) {
  auto report = store::ApplyEmbeddedMigrations(db);
  if (!report.ok()) return report.status();
  log::Info("schema ready", {{"version_before", absl::StrCat(report->schema_version_before)},
                             {"version", absl::StrCat(report->schema_version_after)},
                             {"applied", absl::StrCat(report->applied.size())}});
  return absl::OkStatus();
}

// Every name list_services answers with: ours, health and both reflections.
std::vector<std::string> ServedNames(const Services& services) {
  std::vector<std::string> names = services.Names();
  names.push_back("grpc.health.v1.Health");
  names.push_back("grpc.reflection.v1.ServerReflection");
  names.push_back("grpc.reflection.v1alpha.ServerReflection");
  return names;
}

std::unique_ptr<HealthReporter> StartHealthReporter(const ServerOptions& options,
                                                    grpc::Server& server, store::Database& db,
                                                    const Services& services,
                                                    Application& application,
                                                    metrics::Metrics& metrics) {
  HealthProbes probes{
      .schema_version = [&db] { return store::ReadSchemaVersion(db); },
      .feed_caught_up_at = [&application] { return application.scheduler().FeedCaughtUpAt(); },
      .last_abandoned_call = [] { return store::CallWatchdog::Global().last_abandoned(); },
      .writer_failing_since = [&db] { return db.writer_failing_since(); }};
  HealthReporterOptions health_options{.services = services.Names(),
                                       .required_schema_version = store::EmbeddedSchemaVersion(),
                                       .max_feed_lag = options.health_max_feed_lag,
                                       .interval = options.health_check_interval};
  auto reporter = std::make_unique<HealthReporter>(server.GetHealthCheckService(),
                                                   std::move(probes), std::move(health_options),
                                                   &metrics, [] { return absl::Now(); });
  reporter->CheckNow();  // Before the first probe can ask.
  reporter->Start();
  return reporter;
}

// Blocks the signals we handle in every thread; a dedicated thread sigwaits.
sigset_t HandledSignals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGHUP);
  return set;
}

// How this replica reaches its peers: as the server is reached. It shows
// its own certificate only where client certificates are required; a
// forwarded call is authorized by the caller's bearer token.
ClientTlsOptions PeerTls(const ServerOptions& options) {
  ClientTlsOptions peer;
  if (!TlsEnabled(options.tls)) return peer;
  peer.tls = true;
  peer.ca_path = options.peer_tls_ca;
  peer.server_name = options.peer_tls_server_name;
  if (options.tls.require_client_cert) {
    peer.cert_path = options.tls.cert_path;
    peer.key_path = options.tls.key_path;
  }
  return peer;
}

}  // namespace

absl::Status RunServer(const ServerOptions& options) {
  sigset_t signals = HandledSignals();
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);  // Before any thread starts.

  auto auth = LoadAuth(options);
  if (!auth.ok()) return auth.status();
  auto credentials = ListenCredentials(options);
  if (!credentials.ok()) return credentials.status();
  if (options.max_receive_message_bytes < 64 << 10) {
    return absl::InvalidArgumentError("--max_receive_message_size: must be >= 65536 bytes");
  }
  if (options.database_url.empty()) {
    return absl::InvalidArgumentError(
        "--database_url or --database_url_file is required (postgresql://...)");
  }
  const store::DatabaseBounds bounds{.call = options.database_call_timeout,
                                     .sweep = options.database_sweep_timeout,
                                     .probe = options.database_probe_timeout};
  const store::LeaseOptions lease{.probe = options.database_probe_timeout,
                                  .lease = options.leader_lease};
  // Both leases are probed at their own interval: the placer's poll and
  // the scaling tick.
  scheduler::ScalingControllerOptions scaling_options;
  for (absl::Duration interval : {options.placer_poll_interval, scaling_options.tick}) {
    if (absl::Status checked = store::CheckLeaseOptions(lease, interval); !checked.ok()) {
      return checked;
    }
  }
  auto db = store::Database::Connect(options.database_url, options.database_connections, bounds);
  if (!db.ok()) return db.status();
  if (absl::Status migrated = Migrate(**db); !migrated.ok()) return migrated;

  metrics::Metrics metrics;
  std::unique_ptr<prometheus::Exposer> exposer;
  if (!options.metrics_listen.empty()) {
    try {
      exposer = std::make_unique<prometheus::Exposer>(options.metrics_listen);
    } catch (const std::exception& e) {
      return absl::InvalidArgumentError(
          absl::StrCat("cannot serve metrics on ", options.metrics_listen, ": ", e.what()));
    }
    exposer->RegisterCollectable(metrics.registry());
  }

  ServiceContext context;
  context.auth = auth->get();
  ConcurrencyLimiter limiter(options.max_concurrent_calls_per_principal);
  context.limiter = &limiter;
  RateLimiter rate_limiter(
      options.rate_limits, [] { return absl::Now(); },
      [&metrics](Role role) { metrics.RateLimited(RoleName(role)); });
  context.rate_limiter = &rate_limiter;
  context.metrics = &metrics;
  context.max_request_bytes = options.max_receive_message_bytes;
  context.watch_buffer = static_cast<size_t>(options.watch_buffer);
  std::unique_ptr<app::PlacerElection> placer;
  std::unique_ptr<PlacementForwarder> forwarder;
  if (!options.advertise_host.empty()) {
    placer = std::make_unique<app::PlacerElection>(
        (*db)->url(),
        app::PlacerElectionOptions{.interval = options.placer_poll_interval, .lease = lease}, &metrics);
    forwarder = std::make_unique<PlacementForwarder>(placer.get(), PeerTls(options), &metrics);
    context.forwarder = forwarder.get();
  }
  scheduler::SchedulerOptions scheduler_options;
  scheduler_options.heartbeat_interval = options.heartbeat_interval;
  scheduler_options.node_lost_after = options.node_lost_after;
  scheduler_options.gpu_healthy_for = options.gpu_healthy_for;
  scheduler_options.max_commit_wait = options.commit_wait;
  scheduler_options.budget_interval = options.budget_interval;
  scheduler_options.feed_gap = options.feed_gap;
  scheduler_options.watch_bookmark_interval = options.watch_bookmark_interval;
  scheduler_options.default_node_start = options.default_node_start_time;
  scheduler_options.default_driver_install = options.default_driver_install_time;
  scheduler_options.estimate_accuracy_window = options.estimate_accuracy_window;
  scheduler_options.scaling_batching_window = options.scaling_batching_window;
  if (placer != nullptr) {
    scheduler_options.drains_queue = [placer = placer.get()] { return placer->Current().self; };
  }
  scaling_options.lease = lease;
  scaling_options.actuator_command = options.actuator_command;
  scaling_options.actuator_timeout = options.actuator_timeout;
  scaling_options.cluster_installs = {options.driver_install_command,
                                      options.driver_install_timeout,
                                      options.driver_install_cache};
  scaling_options.scaler.batching_window = options.scaling_batching_window;
  scaling_options.scaler.default_time_to_ready = options.default_node_start_time;
  scaling_options.retention.retention = options.stopped_workspace_retention;
  scaling_options.retention.sweep_interval = options.stopped_workspace_sweep_interval;
  scaling_options.retention.audit_retention = options.audit_retention;
  scaling_options.retention.usage_retention = options.usage_retention;
  ApplicationOptions application_options{.catalog_path = options.catalog_path,
                                         .scheduler = scheduler_options,
                                         .scaling = scaling_options};
  application_options.catalog_rules.min_idle_for = options.min_idle_for;
  auto application = Application::Create(db->get(), &metrics, std::move(application_options));
  if (!application.ok()) return application.status();
  if (exposer) exposer->RegisterCollectable((*application)->cluster_metrics());
  context.scheduler = &(*application)->scheduler();
  context.heartbeat_interval = scheduler_options.heartbeat_interval;
  context.classes = &(*application)->classes();
  context.settings = &(*application)->settings();
  context.usage = &(*application)->usage();
  context.audit = &(*application)->audit();
  auto services = std::make_unique<Services>(context, &(*application)->scaling());
  // Node tokens live in the store the application opened; before any call.
  (*auth)->SetNodeTokens([services = services.get()](const TokenDigest& digest) {
    return services->FindNodeToken(digest);
  });
  if (absl::Status covered = CheckMethodTableCovers(services->Names()); !covered.ok()) {
    return covered;
  }

  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  ReflectionV1Service reflection_v1(ServedNames(*services));
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort(options.listen, *credentials, &port);
  // Peers' forwarding channels keep themselves alive with pings
  // (placement_forwarder.cc); allow them.
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS, 5'000);
  // A watch stream's client that vanished (a half-open connection) is found
  // within a minute and a half, not gRPC's default two hours, and its
  // stream leaves the fanout.
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIME_MS, 60'000);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 20'000);
  if (options.max_connection_age > absl::ZeroDuration()) {
    // Spreads long-lived clients over replicas added since they connected:
    // a GOAWAY, and a grace for calls in flight; watch streams resume.
    builder.AddChannelArgument(GRPC_ARG_MAX_CONNECTION_AGE_MS,
                               static_cast<int>(absl::ToInt64Milliseconds(
                                   options.max_connection_age)));
    builder.AddChannelArgument(GRPC_ARG_MAX_CONNECTION_AGE_GRACE_MS, 30'000);
  }
  // Twice the limit at the transport: a request up to that reaches a handler
  // and gets a MESSAGE_TOO_LARGE with the sizes; only a larger one gets
  // gRPC's own RESOURCE_EXHAUSTED, without details.
  builder.SetMaxReceiveMessageSize(static_cast<int>(
      std::min<int64_t>(2 * int64_t{options.max_receive_message_bytes}, INT32_MAX)));
  services->RegisterAll(builder);
  builder.RegisterService(&reflection_v1);
  std::vector<std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>> interceptors;
  interceptors.push_back(std::make_unique<MetricsInterceptorFactory>(&metrics));
  builder.experimental().SetInterceptorCreators(std::move(interceptors));
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr || port == 0) {
    return absl::UnavailableError(absl::StrCat("cannot listen on ", options.listen));
  }
  std::unique_ptr<HealthReporter> health =
      StartHealthReporter(options, *server, **db, *services, **application, metrics);
  if (placer != nullptr) placer->Start(absl::StrCat(options.advertise_host, ":", port));
  if (!options.port_file.empty()) {
    std::ofstream(options.port_file) << port << "\n";
  }
  log::Info("serving", {{"grpc_port", absl::StrCat(port)}, {"metrics", options.metrics_listen}});

  while (true) {
    int signal = 0;
    sigwait(&signals, &signal);
    if (signal == SIGHUP) {
      // The tokens file logs its own outcome; a bad one keeps the old one.
      (void)(*auth)->Reload();
      if (options.catalog_path.empty()) continue;
      absl::Status reloaded = (*application)->ReloadCatalog();
      if (!reloaded.ok()) {
        log::Error("catalog reload rejected; the running catalog stays",
                   {{"error", std::string(reloaded.message())}});
      }
      continue;
    }
    log::Info("shutting down", {{"signal", strsignal(signal)}});
    break;
  }
  // NOT_SERVING for every name at once, so balancers move away during the
  // grace period; the reporter must not set anything after that.
  health->Stop();
  // Another replica places from its next poll on; calls forwarded here
  // during the grace period are still served.
  if (placer != nullptr) placer->Stop();
  server->GetHealthCheckService()->Shutdown();
  (*application)->Stop();
  server->Shutdown(std::chrono::system_clock::now() +
                   absl::ToChronoMicroseconds(options.shutdown_grace));
  server->Wait();
  log::Info("stopped");
  return absl::OkStatus();
}

}  // namespace wsched::root
