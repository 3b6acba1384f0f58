#include "server/grpc/request_validation.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "wsched/v1/classes.grpc.pb.h"
#include "wsched/v1/inventory.grpc.pb.h"
#include "wsched/v1/placement.grpc.pb.h"
#include "wsched/v1/scaling.grpc.pb.h"
#include "wsched/v1/settings.grpc.pb.h"

namespace wsched::grpc_api {
namespace {

using ::testing::HasSubstr;

std::string ErrorOf(const google::protobuf::Message& request) {
  absl::Status status = ValidateAnyRequest(request);
  if (status.ok()) return "OK";
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  return std::string(status.message());
}

v1::NodeInfo ValidNode() {
  v1::NodeInfo node;
  node.set_name("node-1");
  node.set_pool("gpu-h100");
  node.set_kernel_version("6.1.0-18-amd64");
  v1::Gpu* gpu = node.add_gpus();
  gpu->set_index(0);
  gpu->set_uuid("GPU-0");
  gpu->set_pci_address("0000:3b:00.0");
  gpu->set_model("NVIDIA H100 80GB HBM3");
  return node;
}

TEST(RequestValidation, EveryServedRpcHasAValidator) {
  EXPECT_TRUE(CheckValidatorsCover({v1::ClassService::service_full_name(),
                                    v1::SettingsService::service_full_name(),
                                    v1::InventoryService::service_full_name(),
                                    v1::PlacementService::service_full_name(),
                                    v1::ScalingService::service_full_name()})
                  .ok());
  EXPECT_EQ(ValidateAnyRequest(v1::Workspace()).code(), absl::StatusCode::kUnimplemented);
}

TEST(RequestValidation, AValidPlacementPasses) {
  v1::PlaceWorkspaceRequest place;
  place.set_workspace_id("ws-1");
  place.set_org_id("o-1");
  place.set_project_id("p-42");
  place.set_user_id("u-1");
  place.set_class_id("gpu-h100-1");
  EXPECT_EQ(ErrorOf(place), "OK");
  place.set_priority(101);
  EXPECT_THAT(ErrorOf(place), HasSubstr("priority: must be 0..100"));
  place.set_priority(0);
  place.set_user_id(std::string(200, 'u'));
  EXPECT_THAT(ErrorOf(place), HasSubstr("user_id: must be 1..128"));
  place.set_user_id("u-1");
  place.set_validate_only(true);
  EXPECT_EQ(ErrorOf(place), "OK");
  place.set_quote_token("cTE");
  EXPECT_THAT(ErrorOf(place), HasSubstr("quote_token: must be empty with validate_only"));
  place.set_validate_only(false);
  EXPECT_EQ(ErrorOf(place), "OK");
  place.set_quote_token(std::string(2049, 'q'));
  EXPECT_THAT(ErrorOf(place), HasSubstr("quote_token: must be <= 2048 bytes"));
}

// Regression: an unknown state reached WorkspaceState_Name(...).substr(16),
// which threw, and the caller saw UNKNOWN instead of a named field.
TEST(RequestValidation, ListWorkspacesWithAnUnknownStateNamesTheField) {
  v1::ListWorkspacesRequest list;
  list.set_state(static_cast<v1::WorkspaceState>(99));
  EXPECT_THAT(ErrorOf(list), HasSubstr("state: unknown value 99"));
  list.set_state(v1::WORKSPACE_STATE_PLACED);
  list.set_node_name("Not A Node");
  EXPECT_THAT(ErrorOf(list), HasSubstr("node_name: must be a node name"));
  list.set_node_name("");
  list.set_pool(std::string(5000, 'p'));
  EXPECT_THAT(ErrorOf(list), HasSubstr("pool: must be a pool id"));
}

TEST(RequestValidation, GetWorkspaceWithAnUnknownViewNamesTheField) {
  v1::GetWorkspaceRequest get;
  get.set_workspace_id("w-1");
  get.set_view(static_cast<v1::WorkspaceView>(7));
  EXPECT_THAT(ErrorOf(get), HasSubstr("view: unknown value 7"));
  get.set_view(v1::WORKSPACE_VIEW_FULL);
  EXPECT_EQ(ErrorOf(get), "OK");
}

TEST(RequestValidation, WatchNodesNamesTheFieldAndTheRule) {
  v1::WatchNodesRequest watch;
  EXPECT_EQ(ErrorOf(watch), "OK");
  watch.mutable_filter()->set_pool("Not A Pool");
  EXPECT_THAT(ErrorOf(watch), HasSubstr("filter.pool: must be a pool id"));
  watch.mutable_filter()->set_pool("gpu-h100");
  watch.mutable_filter()->set_node_name("Not A Node");
  EXPECT_THAT(ErrorOf(watch),
              HasSubstr("filter.node_name: must be a node name"));
  watch.mutable_filter()->set_node_name("node-1");
  EXPECT_EQ(ErrorOf(watch), "OK");
  watch.set_resume_version(-1);
  EXPECT_THAT(ErrorOf(watch),
              HasSubstr("resume_version: must be 0 (list first)"));
}

TEST(RequestValidation, HeartbeatStringsAndMapsAreBounded) {
  v1::HeartbeatRequest beat;
  beat.set_node_name("node-1");
  EXPECT_EQ(ErrorOf(beat), "OK");
  beat.set_kernel_version(std::string(1 << 20, 'k'));
  EXPECT_THAT(ErrorOf(beat), HasSubstr("kernel_version: at most 128"));
  beat.clear_kernel_version();
  (*beat.mutable_gpu_health_by_uuid())[std::string(300, 'g')] = v1::GPU_HEALTH_HEALTHY;
  EXPECT_THAT(ErrorOf(beat), HasSubstr("gpu_health_by_uuid key: at most 128"));
  beat.clear_gpu_health_by_uuid();
  (*beat.mutable_gpu_health_by_uuid())["GPU-0"] = static_cast<v1::GpuHealth>(7);
  EXPECT_THAT(ErrorOf(beat), HasSubstr("gpu_health_by_uuid[GPU-0]: unknown value 7"));
  beat.clear_gpu_health_by_uuid();
  beat.add_gpu_usage()->set_uuid(std::string(300, 'g'));
  EXPECT_THAT(ErrorOf(beat), HasSubstr("gpu_usage[0].uuid"));
}

TEST(RequestValidation, RegisterNodeBoundsEveryReportedString) {
  v1::RegisterNodeRequest request;
  *request.mutable_node() = ValidNode();
  EXPECT_EQ(ErrorOf(request), "OK");

  auto* member = request.mutable_node()->mutable_gpus(0)->add_iommu_group_members();
  member->set_pci_address("0000:3b:00.1");
  member->set_pci_class(std::string(100000, 'c'));
  EXPECT_THAT(ErrorOf(request),
              HasSubstr("node.gpus[0].iommu_group_members[0].pci_class: must be at most 16"));
  member->set_pci_class("0x040300");
  member->set_vendor(std::string(100, 'v'));
  EXPECT_THAT(ErrorOf(request), HasSubstr("iommu_group_members[0].vendor"));
  member->set_vendor("0x10de");

  auto* device = request.mutable_node()->add_control_devices();
  device->set_path("/dev/nvidiactl");
  device->set_type("c");
  device->set_permissions(std::string(10000, 'r'));
  EXPECT_THAT(ErrorOf(request), HasSubstr("node.control_devices[0].permissions"));
  device->set_permissions("rwx");
  EXPECT_THAT(ErrorOf(request), HasSubstr("node.control_devices[0].permissions"));
  device->set_permissions("rw");
  device->set_type("character");
  EXPECT_THAT(ErrorOf(request), HasSubstr("node.control_devices[0].type"));
  device->set_type("c");
  EXPECT_EQ(ErrorOf(request), "OK");

  request.mutable_node()->mutable_gpus(0)->set_held_by_workspace(std::string(10000, 'w'));
  EXPECT_THAT(ErrorOf(request), HasSubstr("node.gpus[0].held_by_workspace"));
}

TEST(RequestValidation, UpdateClassBoundsTheClassBeforeTheCatalogCheck) {
  v1::UpdateClassRequest update;
  update.mutable_class_()->set_id("standard");
  EXPECT_EQ(ErrorOf(update), "OK");
  update.mutable_class_()->set_description(std::string(2000, 'd'));
  EXPECT_THAT(ErrorOf(update), HasSubstr("class.description: at most 1024"));
  update.mutable_class_()->clear_description();
  for (int i = 0; i < 40; ++i) update.mutable_class_()->mutable_gpu()->add_models("H100");
  EXPECT_THAT(ErrorOf(update), HasSubstr("class.gpu.models: at most 32"));
  update.mutable_class_()->mutable_gpu()->clear_models();
  for (int i = 0; i < 40; ++i) update.mutable_class_()->mutable_gpu()->add_mig_profiles("1g.18gb");
  EXPECT_THAT(ErrorOf(update), HasSubstr("class.gpu.mig_profiles: at most 32"));
  update.mutable_class_()->mutable_gpu()->clear_mig_profiles();
  update.mutable_class_()->mutable_gpu()->add_mig_profiles(std::string(100, 'g'));
  EXPECT_THAT(ErrorOf(update), HasSubstr("class.gpu.mig_profiles[0]: at most 64"));
  update.mutable_class_()->mutable_gpu()->clear_mig_profiles();
  (*update.mutable_class_()->mutable_pool_selector())["gpu"] = std::string(100, 'x');
  EXPECT_THAT(ErrorOf(update), HasSubstr("class.pool_selector[gpu]"));
  update.mutable_class_()->clear_pool_selector();
  update.set_expected_version(-1);
  EXPECT_THAT(ErrorOf(update), HasSubstr("expected_version: must be >= 0"));
}

TEST(RequestValidation, ScalingAndCatalogRequestsAreBounded) {
  v1::WatchScalingSignalsRequest watch;
  watch.add_pools("gpu-h100");
  EXPECT_EQ(ErrorOf(watch), "OK");
  watch.add_pools("Not/A/Pool");
  EXPECT_THAT(ErrorOf(watch), HasSubstr("pools[1]: must be a pool id"));

  v1::ActuatorReport report;
  report.set_pool("gpu-h100");
  EXPECT_THAT(ErrorOf(report), HasSubstr("state: must be CREATING"));
  report.set_state(v1::ActuatorReport::INSTANCE_STATE_RUNNING);
  EXPECT_EQ(ErrorOf(report), "OK");

  v1::ApplyCatalogRequest apply;
  apply.set_yaml(std::string(kMaxCatalogBytes + 1, '#'));
  EXPECT_THAT(ErrorOf(apply), HasSubstr("yaml: at most"));

  v1::SetOrgSettingsRequest org;
  org.mutable_settings()->set_org_id("o-1");
  org.mutable_settings()->set_gpu_quota(-2);
  EXPECT_THAT(ErrorOf(org), HasSubstr("settings.gpu_quota"));
}

}  // namespace
}  // namespace wsched::grpc_api
