#include "server/grpc/services.h"

#include "server/grpc/audit_service.h"
#include "server/grpc/class_service.h"
#include "server/grpc/inventory_service.h"
#include "server/grpc/placement_service.h"
#include "server/grpc/scaling_service.h"
#include "server/grpc/settings_service.h"
#include "server/grpc/usage_service.h"

#include "wsched/v1/classes.grpc.pb.h"
#include "wsched/v1/inventory.grpc.pb.h"
#include "wsched/v1/placement.grpc.pb.h"
#include "wsched/v1/scaling.grpc.pb.h"
#include "wsched/v1/settings.grpc.pb.h"

namespace wsched::grpc_api {

struct Services::Impl {
  Impl(const ServiceContext& shared, scheduler::ScalingController* controller)
      : context(shared),
        classes(context),
        settings(context),
        inventory(context),
        placement(context),
        scaling(context, controller),
        audit(context),
        usage(context) {}
  ServiceContext context;
  ClassServiceImpl classes;
  SettingsServiceImpl settings;
  InventoryServiceImpl inventory;
  PlacementServiceImpl placement;
  ScalingServiceImpl scaling;
  AuditServiceImpl audit;
  UsageServiceImpl usage;
};

Services::Services(const ServiceContext& context, scheduler::ScalingController* controller)
    : impl_(std::make_unique<Impl>(context, controller)) {}
Services::~Services() = default;

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

std::optional<NodeTokenOwner> Services::FindNodeToken(const TokenDigest& digest) const {
  std::optional<inventory::NodeBinding> binding =
      impl_->context.scheduler->credentials().Find(
          absl::string_view(reinterpret_cast<const char*>(digest.data()), digest.size()));
  if (!binding) return std::nullopt;
  return NodeTokenOwner{binding->node, binding->pool};
}

}  // namespace wsched::grpc_api
