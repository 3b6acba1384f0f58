// wsched.v1.AuditService: the audit trail (audit.h), for admins.
#ifndef WSCHED_SERVER_GRPC_AUDIT_SERVICE_H_
#define WSCHED_SERVER_GRPC_AUDIT_SERVICE_H_

#include "server/grpc/service_context.h"
#include "wsched/v1/audit.grpc.pb.h"

namespace wsched::grpc_api {

class AuditServiceImpl final : public v1::AuditService::Service {
 public:
  explicit AuditServiceImpl(const ServiceContext& context) : context_(context) {}

  grpc::Status ListAuditRecords(grpc::ServerContext* context,
                                const v1::ListAuditRecordsRequest* request,
                                v1::ListAuditRecordsResponse* response) override;

 private:
  const ServiceContext context_;
};

}  // namespace wsched::grpc_api

#endif  // WSCHED_SERVER_GRPC_AUDIT_SERVICE_H_
