#include "server/grpc/services.h"

#include "wsched/v1/classes.grpc.pb.h"
#include "wsched/v1/inventory.grpc.pb.h"
#include "wsched/v1/placement.grpc.pb.h"
#include "wsched/v1/scaling.grpc.pb.h"
#include "wsched/v1/settings.grpc.pb.h"

namespace wsched::grpc_api {
namespace {

// Services not built yet answer UNIMPLEMENTED through the generated bases.
class ClassServiceImpl final : public v1::ClassService::Service {};
class SettingsServiceImpl final : public v1::SettingsService::Service {};
class InventoryServiceImpl final : public v1::InventoryService::Service {};
class PlacementServiceImpl final : public v1::PlacementService::Service {};
class ScalingServiceImpl final : public v1::ScalingService::Service {};

}  // namespace

struct Services::Impl {
  ServiceContext context;
  std::string catalog_path;
  ClassServiceImpl classes;
  SettingsServiceImpl settings;
  InventoryServiceImpl inventory;
  PlacementServiceImpl placement;
  ScalingServiceImpl scaling;
};

Services::Services(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Services::~Services() = default;

absl::StatusOr<std::unique_ptr<Services>> Services::Create(const ServiceContext& context,
                                                           const std::string& catalog_path) {
  auto impl = std::make_unique<Impl>();
  impl->context = context;
  impl->catalog_path = catalog_path;
  return std::unique_ptr<Services>(new Services(std::move(impl)));
}

void Services::RegisterAll(grpc::ServerBuilder& builder) {
  builder.RegisterService(&impl_->classes);
  builder.RegisterService(&impl_->settings);
  builder.RegisterService(&impl_->inventory);
  builder.RegisterService(&impl_->placement);
  builder.RegisterService(&impl_->scaling);
}

std::vector<std::string> Services::Names() const {
  return {v1::ClassService::service_full_name(), v1::SettingsService::service_full_name(),
          v1::InventoryService::service_full_name(), v1::PlacementService::service_full_name(),
          v1::ScalingService::service_full_name()};
}

absl::Status Services::ReloadCatalog() { return absl::OkStatus(); }

void Services::Shutdown() {}

}  // namespace wsched::grpc_api
