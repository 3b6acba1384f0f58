#include "server/grpc/audit_service.h"

#include <google/protobuf/util/time_util.h>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "server/core/error_reason.h"
#include "server/core/paging.h"
#include "server/grpc/handler.h"
#include "server/store/unit_of_work.h"

namespace wsched::grpc_api {
namespace {

constexpr char kService[] = "wsched.v1.AuditService";

absl::Time FromProto(const google::protobuf::Timestamp& t) {
  return absl::FromUnixSeconds(t.seconds()) + absl::Nanoseconds(t.nanos());
}

void ToProto(const store::AuditRecord& record, v1::AuditRecord* out) {
  out->set_id(record.id);
  *out->mutable_time() =
      google::protobuf::util::TimeUtil::MicrosecondsToTimestamp(absl::ToUnixMicros(record.at));
  out->set_principal(record.principal);
  out->set_credential(record.credential);
  out->set_method(record.method);
  out->set_object(record.object);
  for (const auto& [key, value] : record.fields) (*out->mutable_fields())[key] = value;
  out->set_code(record.code);
  out->set_message(record.message);
}

absl::StatusOr<store::AuditFilter> FilterOf(const v1::ListAuditRecordsRequest& request) {
  store::AuditFilter filter;
  filter.principal = request.principal();
  filter.object = request.object();
  if (request.has_start_time()) filter.since = FromProto(request.start_time());
  if (request.has_end_time()) filter.before = FromProto(request.end_time());
  if (filter.since && filter.before && *filter.before <= *filter.since) {
    return core::InvalidFieldError("end_time", "must be after start_time");
  }
  return filter;
}

// The page token's filter part: a token only continues the listing it
// came from.
std::string CanonicalFilter(const v1::ListAuditRecordsRequest& request) {
  return absl::StrCat("principal=", request.principal(), ";object=", request.object(),
                      ";start=", request.start_time().seconds(), ".", request.start_time().nanos(),
                      ";end=", request.end_time().seconds(), ".", request.end_time().nanos());
}

}  // namespace

grpc::Status AuditServiceImpl::ListAuditRecords(grpc::ServerContext* context,
                                                const v1::ListAuditRecordsRequest* request,
                                                v1::ListAuditRecordsResponse* response) {
  return Handle(context_, context, kService, "ListAuditRecords", *request,
                [&](const Principal&) -> absl::Status {
    auto filter = FilterOf(*request);
    if (!filter.ok()) return filter.status();
    auto page = core::ReadPageRequest(request->page_size(), request->page_token(),
                                      CanonicalFilter(*request));
    if (!page.ok()) return page.status();
    int64_t before_id = 0;
    if (!page->after.empty() && !absl::SimpleAtoi(page->after, &before_id)) {
      return core::InvalidFieldError("page_token", "is not a token of this listing");
    }
    std::vector<store::AuditRecord> rows;
    absl::Status read = store::UnitOfWork::Run(*context_.db, "listing audit records",
                                               [&](store::UnitOfWork& unit) -> absl::Status {
      rows = unit.audit().List(*filter, before_id, page->size + 1);
      return absl::OkStatus();
    }, store::UnitOfWork::Mode::kSnapshot);
    if (!read.ok()) return read;
    // Newest first: the key that continues is the last (smallest) id.
    auto records = core::PageFromRows(std::move(rows), *page, [](const store::AuditRecord& r) {
      return absl::StrCat(r.id);
    });
    for (const auto& record : records.items) ToProto(record, response->add_records());
    response->set_next_page_token(records.next_page_token);
    return absl::OkStatus();
  });
}

}  // namespace wsched::grpc_api
