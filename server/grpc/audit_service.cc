#include "server/grpc/audit_service.h"

#include "server/app/audit_operations.h"
#include "server/convert/audit_convert.h"
#include "server/convert/time_convert.h"
#include "server/grpc/handler.h"

namespace wsched::grpc_api {
namespace {

constexpr char kService[] = "wsched.v1.AuditService";

app::AuditQuery QueryOf(const v1::ListAuditRecordsRequest& request) {
  app::AuditQuery query;
  query.principal = request.principal();
  query.object = request.object();
  if (request.has_start_time()) query.since = convert::TimeFromProto(request.start_time());
  if (request.has_end_time()) query.before = convert::TimeFromProto(request.end_time());
  return query;
}

}  // namespace

grpc::Status AuditServiceImpl::ListAuditRecords(grpc::ServerContext* context,
                                                const v1::ListAuditRecordsRequest* request,
                                                v1::ListAuditRecordsResponse* response) {
  return Handle(context_, context, kService, "ListAuditRecords", *request,
                [&](const Principal&) -> absl::Status {
    auto page = context_.audit->List(QueryOf(*request), request->page_size(),
                                     request->page_token());
    if (!page.ok()) return page.status();
    for (const auto& record : page->items) *response->add_records() = convert::ToProto(record);
    response->set_next_page_token(page->next_page_token);
    return absl::OkStatus();
  });
}

}  // namespace wsched::grpc_api
