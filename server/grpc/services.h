// Owns every gRPC service implementation and what they share.
#ifndef WSCHED_SERVER_GRPC_SERVICES_H_
#define WSCHED_SERVER_GRPC_SERVICES_H_

#include <memory>
#include <string>
#include <vector>

#include <grpcpp/grpcpp.h>
#include <prometheus/collectable.h>

#include "absl/status/statusor.h"
#include "server/grpc/live_authenticator.h"
#include "server/grpc/service_context.h"
#include "server/metrics/metrics.h"
#include "server/scheduler/scaling_controller.h"
#include "server/scheduler/scheduler.h"
#include "server/store/database.h"

namespace wsched::grpc_api {

class Services {
 public:
  // Builds every service; applies the catalog file first when one is given
  // (a bad file keeps the server from starting).
  static absl::StatusOr<std::unique_ptr<Services>> Create(
      ServiceContext context, const std::string& catalog_path,
      const scheduler::SchedulerOptions& scheduler_options,
      const scheduler::ScalingControllerOptions& scaling_options);
  ~Services();
  Services(const Services&) = delete;
  Services& operator=(const Services&) = delete;

  void RegisterAll(grpc::ServerBuilder& builder);
  // Full names of the services served ("wsched.v1.ClassService").
  std::vector<std::string> Names() const;
  // Re-applies the catalog file (SIGHUP); a bad file changes nothing.
  absl::Status ReloadCatalog();
  // Stops background work (watch streams, loops) before the server stops.
  void Shutdown();
  // When this replica last had every committed change applied (health).
  absl::Time FeedCaughtUpAt() const;
  // The node of a per-node token (LiveAuthenticator::SetNodeTokens).
  std::optional<NodeTokenOwner> FindNodeToken(const TokenDigest& digest) const;
  // Cluster gauges computed at scrape time (register with the exposer).
  std::shared_ptr<prometheus::Collectable> cluster_metrics() const;

 private:
  struct Impl;
  explicit Services(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace wsched::grpc_api

#endif  // WSCHED_SERVER_GRPC_SERVICES_H_
