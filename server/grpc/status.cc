#include "server/grpc/status.h"

#include <string>

#include "google/protobuf/duration.pb.h"
#include "google/rpc/error_details.pb.h"
#include "server/core/error_reason.h"

namespace wsched::grpc_api {
namespace {

void AddDetails(const core::ErrorDetails& d, google::rpc::Status* out) {
  google::rpc::ErrorInfo info;
  info.set_reason(std::string(core::ErrorReasonName(d.reason)));
  info.set_domain(kErrorDomain);
  for (const auto& [key, value] : d.metadata) (*info.mutable_metadata())[key] = value;
  out->add_details()->PackFrom(info);
  if (!d.field_violations.empty()) {
    google::rpc::BadRequest bad;
    for (const auto& v : d.field_violations) {
      auto* fv = bad.add_field_violations();
      fv->set_field(v.field);
      fv->set_description(v.description);
    }
    out->add_details()->PackFrom(bad);
  }
  if (!d.quota_violations.empty()) {
    google::rpc::QuotaFailure quota;
    for (const auto& v : d.quota_violations) {
      auto* qv = quota.add_violations();
      qv->set_subject(v.subject);
      qv->set_description(v.description);
    }
    out->add_details()->PackFrom(quota);
  }
  if (!d.precondition_violations.empty()) {
    google::rpc::PreconditionFailure failure;
    for (const auto& v : d.precondition_violations) {
      auto* pv = failure.add_violations();
      pv->set_type(v.type);
      pv->set_subject(v.subject);
      pv->set_description(v.description);
    }
    out->add_details()->PackFrom(failure);
  }
  if (d.resource) {
    google::rpc::ResourceInfo resource;
    resource.set_resource_type(d.resource->type);
    resource.set_resource_name(d.resource->name);
    resource.set_description(d.resource->description);
    out->add_details()->PackFrom(resource);
  }
  if (d.retry_delay) {
    google::rpc::RetryInfo retry;
    int64_t nanos = absl::ToInt64Nanoseconds(*d.retry_delay);
    retry.mutable_retry_delay()->set_seconds(nanos / 1000000000);
    retry.mutable_retry_delay()->set_nanos(static_cast<int32_t>(nanos % 1000000000));
    out->add_details()->PackFrom(retry);
  }
}

}  // namespace

google::rpc::Status ToRpcStatus(const absl::Status& status) {
  google::rpc::Status out;
  out.set_code(static_cast<int32_t>(status.code()));
  if (status.ok()) return out;
  out.set_message(std::string(status.message()));
  core::ErrorDetails details = core::DetailsOf(status).value_or(core::ErrorDetails{});
  if (details.reason == core::ErrorReason::kUnspecified) {
    details.reason = core::GenericReasonFor(status.code());
  }
  AddDetails(details, &out);
  return out;
}

grpc::Status ToGrpc(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()), std::string(status.message()),
                      ToRpcStatus(status).SerializeAsString());
}

}  // namespace wsched::grpc_api
