// wsched.v1.SettingsService: project/org class settings and class resolution.
#ifndef WSCHED_SERVER_GRPC_SETTINGS_SERVICE_H_
#define WSCHED_SERVER_GRPC_SETTINGS_SERVICE_H_

#include "server/grpc/service_context.h"
#include "wsched/v1/settings.grpc.pb.h"

namespace wsched::grpc_api {

class SettingsServiceImpl final : public v1::SettingsService::Service {
 public:
  explicit SettingsServiceImpl(const ServiceContext& context) : context_(context) {}

  grpc::Status GetProjectSettings(grpc::ServerContext* context,
                                  const v1::GetProjectSettingsRequest* request,
                                  v1::ProjectSettings* response) override;
  grpc::Status SetProjectSettings(grpc::ServerContext* context,
                                  const v1::SetProjectSettingsRequest* request,
                                  v1::ProjectSettings* response) override;
  grpc::Status GetOrgSettings(grpc::ServerContext* context,
                              const v1::GetOrgSettingsRequest* request,
                              v1::OrgSettings* response) override;
  grpc::Status SetOrgSettings(grpc::ServerContext* context,
                              const v1::SetOrgSettingsRequest* request,
                              v1::OrgSettings* response) override;
  grpc::Status ResolveClass(grpc::ServerContext* context, const v1::ResolveClassRequest* request,
                            v1::ResolveClassResponse* response) override;

 private:
  const ServiceContext context_;
};

}  // namespace wsched::grpc_api

#endif  // WSCHED_SERVER_GRPC_SETTINGS_SERVICE_H_
