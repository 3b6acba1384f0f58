// wsched.v1.ClassService: workspace classes and the class catalog.
#ifndef WSCHED_SERVER_GRPC_CLASS_SERVICE_H_
#define WSCHED_SERVER_GRPC_CLASS_SERVICE_H_

#include "server/grpc/service_context.h"
#include "wsched/v1/classes.grpc.pb.h"

namespace wsched::grpc_api {

class ClassServiceImpl final : public v1::ClassService::Service {
 public:
  explicit ClassServiceImpl(const ServiceContext& context) : context_(context) {}

  grpc::Status ListClasses(grpc::ServerContext* context, const v1::ListClassesRequest* request,
                           v1::ListClassesResponse* response) override;
  grpc::Status GetClass(grpc::ServerContext* context, const v1::GetClassRequest* request,
                        v1::WorkspaceClass* response) override;
  grpc::Status UpdateClass(grpc::ServerContext* context, const v1::UpdateClassRequest* request,
                           v1::WorkspaceClass* response) override;
  grpc::Status DeleteClass(grpc::ServerContext* context, const v1::DeleteClassRequest* request,
                           v1::DeleteClassResponse* response) override;
  grpc::Status ApplyCatalog(grpc::ServerContext* context, const v1::ApplyCatalogRequest* request,
                            v1::ApplyCatalogResponse* response) override;
  grpc::Status GetCatalog(grpc::ServerContext* context, const v1::GetCatalogRequest* request,
                          v1::GetCatalogResponse* response) override;

 private:
  const ServiceContext context_;
};

}  // namespace wsched::grpc_api

#endif  // WSCHED_SERVER_GRPC_CLASS_SERVICE_H_
