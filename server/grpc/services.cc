#include "server/grpc/services.h"

#include "absl/strings/str_cat.h"
#include "server/catalog/load.h"
#include "server/grpc/audit_service.h"
#include "server/app/catalog_applier.h"
#include "server/grpc/class_service.h"
#include "server/grpc/inventory_service.h"
#include "server/grpc/placement_service.h"
#include "server/grpc/scaling_service.h"
#include "server/grpc/settings_service.h"
#include "server/grpc/usage_service.h"
#include "server/scheduler/scaling_controller.h"
#include "server/scheduler/scaling_views.h"
#include "server/scheduler/cluster_metrics.h"
#include "server/log/log.h"

#include "wsched/v1/classes.grpc.pb.h"
#include "wsched/v1/inventory.grpc.pb.h"
#include "wsched/v1/placement.grpc.pb.h"
#include "wsched/v1/scaling.grpc.pb.h"
#include "wsched/v1/settings.grpc.pb.h"

namespace wsched::grpc_api {
namespace {

// Services not built yet answer UNIMPLEMENTED through the generated bases.

}  // namespace

struct Services::Impl {
  Impl(std::unique_ptr<scheduler::Scheduler> owned,
       std::unique_ptr<scheduler::ScalingController> owned_controller,
       const ServiceContext& shared)
      : scheduler(std::move(owned)),
        controller(std::move(owned_controller)),
        class_operations(shared.db, shared.catalog_rules, shared.metrics,
                         [s = scheduler.get()] { (void)s->ReloadCatalog(); }),
        settings_operations(shared.db),
        context(WithOperations(shared, &class_operations, &settings_operations)),
        classes(context),
        settings(context),
        inventory(context),
        placement(context),
        scaling(context, controller.get()),
        audit(context),
        usage(context),
        cluster_metrics(std::make_shared<scheduler::ClusterMetrics>(scheduler.get())) {}
  static ServiceContext WithOperations(ServiceContext context, app::ClassOperations* classes,
                                       app::SettingsOperations* settings) {
    context.classes = classes;
    context.settings = settings;
    return context;
  }
  std::unique_ptr<scheduler::Scheduler> scheduler;
  std::unique_ptr<scheduler::ScalingController> controller;
  app::ClassOperations class_operations;
  app::SettingsOperations settings_operations;
  ServiceContext context;
  std::string catalog_path;
  ClassServiceImpl classes;
  SettingsServiceImpl settings;
  InventoryServiceImpl inventory;
  PlacementServiceImpl placement;
  ScalingServiceImpl scaling;
  AuditServiceImpl audit;
  UsageServiceImpl usage;
  std::shared_ptr<scheduler::ClusterMetrics> cluster_metrics;
};

Services::Services(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Services::~Services() = default;

absl::StatusOr<std::unique_ptr<Services>> Services::Create(
    ServiceContext context, const std::string& catalog_path,
    const scheduler::SchedulerOptions& scheduler_options,
    const scheduler::ScalingControllerOptions& scaling_options) {
  auto owned = std::make_unique<scheduler::Scheduler>(context.db, context.metrics, scheduler_options);
  auto controller = std::make_unique<scheduler::ScalingController>(
      context.db, owned.get(), context.metrics, scaling_options);
  owned->SetScalingViews(
      [c = controller.get()] { return scheduler::ScalingViewsOf(c->Current().pools); });
  context.scheduler = owned.get();
  context.heartbeat_interval = scheduler_options.heartbeat_interval;
  auto impl = std::make_unique<Impl>(std::move(owned), std::move(controller), context);
  impl->catalog_path = catalog_path;
  std::unique_ptr<Services> services(new Services(std::move(impl)));
  if (!catalog_path.empty()) {
    if (absl::Status applied = services->ReloadCatalog(); !applied.ok()) return applied;
  }
  // Rebuilds the snapshot (nodes, holds, pending work) from the database.
  if (absl::Status started = services->impl_->scheduler->Start(); !started.ok()) return started;
  if (absl::Status started = services->impl_->controller->Start(); !started.ok()) return started;
  return services;
}

void Services::RegisterAll(grpc::ServerBuilder& builder) {
  builder.RegisterService(&impl_->classes);
  builder.RegisterService(&impl_->settings);
  builder.RegisterService(&impl_->inventory);
  builder.RegisterService(&impl_->placement);
  builder.RegisterService(&impl_->scaling);
  builder.RegisterService(&impl_->audit);
  builder.RegisterService(&impl_->usage);
}

std::vector<std::string> Services::Names() const {
  return {v1::ClassService::service_full_name(), v1::SettingsService::service_full_name(),
          v1::InventoryService::service_full_name(), v1::PlacementService::service_full_name(),
          v1::ScalingService::service_full_name(), v1::AuditService::service_full_name(),
          v1::UsageService::service_full_name()};
}

absl::Status Services::ReloadCatalog() {
  if (impl_->catalog_path.empty()) {
    return absl::FailedPreconditionError("no --catalog file to reload");
  }
  auto result = app::ApplyCheckedCatalog(*impl_->context.db,
                                    catalog::CheckCatalogPath(impl_->catalog_path, impl_->context.catalog_rules),
                                    false);
  impl_->context.metrics->CatalogApplied(result.ok(), /*from_reload=*/true);
  if (!result.ok()) {
    return absl::Status(result.status().code(), absl::StrCat(impl_->catalog_path, ":\n",
                                                             result.status().message()));
  }
  log::Info("catalog applied", {{"path", impl_->catalog_path},
                                {"changes", absl::StrCat(result->changes.size())}});
  return impl_->scheduler->ReloadCatalog();
}

absl::Time Services::FeedCaughtUpAt() const { return impl_->scheduler->FeedCaughtUpAt(); }

std::optional<NodeTokenOwner> Services::FindNodeToken(const TokenDigest& digest) const {
  std::optional<scheduler::NodeBinding> binding = impl_->scheduler->inventory().credentials().Find(
      absl::string_view(reinterpret_cast<const char*>(digest.data()), digest.size()));
  if (!binding) return std::nullopt;
  return NodeTokenOwner{binding->node, binding->pool};
}

std::shared_ptr<prometheus::Collectable> Services::cluster_metrics() const {
  return impl_->cluster_metrics;
}

void Services::Shutdown() {
  impl_->controller->Stop();  // Releases leadership at once for another replica.
  impl_->scheduler->Stop();
}

}  // namespace wsched::grpc_api
