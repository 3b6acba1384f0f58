#include "server/grpc/settings_service.h"

#include "absl/strings/str_cat.h"
#include "server/convert/catalog_convert.h"
#include "server/convert/convert.h"
#include "server/core/error_reason.h"
#include "server/grpc/handler.h"

namespace wsched::grpc_api {
namespace {

constexpr char kService[] = "wsched.v1.SettingsService";

absl::Status DenyProject(const Principal& who, const std::string& project_id) {
  return core::ReasonError(absl::StrCat(who.name, " may not access project ", project_id),
                           {.reason = core::ErrorReason::kOutsideTokenScope,
                            .metadata = {{"principal", who.name}, {"project", project_id}}});
}

template <typename Message, typename Settings>
void Encode(const app::Versioned<Settings>& read, Message* response) {
  *response = convert::ToProto(read.settings);
  response->set_version(read.version);
}

}  // namespace

grpc::Status SettingsServiceImpl::GetProjectSettings(grpc::ServerContext* context,
                                                     const v1::GetProjectSettingsRequest* request,
                                                     v1::ProjectSettings* response) {
  return Handle(context_, context, kService, "GetProjectSettings", *request,
                [&](const Principal& who) -> absl::Status {
    auto read = context_.settings->GetProject(request->project_id());
    if (!read.ok()) return read.status();
    if (!who.CoversProject(read->settings.org_id, read->settings.project_id)) {
      return DenyProject(who, request->project_id());
    }
    Encode(*read, response);
    return absl::OkStatus();
  });
}

grpc::Status SettingsServiceImpl::SetProjectSettings(grpc::ServerContext* context,
                                                     const v1::SetProjectSettingsRequest* request,
                                                     v1::ProjectSettings* response) {
  return Handle(context_, context, kService, "SetProjectSettings", *request,
                [&](const Principal& who) -> absl::Status {
    const v1::ProjectSettings& in = request->settings();
    if (!who.CoversProject(in.org_id(), in.project_id())) return DenyProject(who, in.project_id());
    auto saved = context_.settings->SetProject(convert::FromProto(in), request->expected_version(),
                                               /*may_move_org=*/who.Has(Role::kAdmin));
    if (!saved.ok()) return saved.status();
    Encode(*saved, response);
    return absl::OkStatus();
  });
}

grpc::Status SettingsServiceImpl::GetOrgSettings(grpc::ServerContext* context,
                                                 const v1::GetOrgSettingsRequest* request,
                                                 v1::OrgSettings* response) {
  return Handle(context_, context, kService, "GetOrgSettings", *request,
                [&](const Principal& who) -> absl::Status {
    if (!who.CoversOrg(request->org_id())) {
      return core::ReasonError(absl::StrCat(who.name, " may not access org ", request->org_id()),
                               {.reason = core::ErrorReason::kOutsideTokenScope,
                                .metadata = {{"principal", who.name}, {"org", request->org_id()}}});
    }
    auto read = context_.settings->GetOrg(request->org_id());
    if (!read.ok()) return read.status();
    Encode(*read, response);
    return absl::OkStatus();
  });
}

grpc::Status SettingsServiceImpl::SetOrgSettings(grpc::ServerContext* context,
                                                 const v1::SetOrgSettingsRequest* request,
                                                 v1::OrgSettings* response) {
  return Handle(context_, context, kService, "SetOrgSettings", *request,
                [&](const Principal&) -> absl::Status {
    auto saved = context_.settings->SetOrg(convert::FromProto(request->settings()),
                                           request->expected_version());
    if (!saved.ok()) return saved.status();
    Encode(*saved, response);
    return absl::OkStatus();
  });
}

grpc::Status SettingsServiceImpl::ResolveClass(grpc::ServerContext* context,
                                               const v1::ResolveClassRequest* request,
                                               v1::ResolveClassResponse* response) {
  return Handle(context_, context, kService, "ResolveClass", *request,
                [&](const Principal& who) -> absl::Status {
    if (!who.CoversProject(request->org_id(), request->project_id())) {
      return DenyProject(who, request->project_id());
    }
    auto resolution = context_.settings->Resolve({request->org_id(), request->project_id(),
                                                  request->requested_class(),
                                                  request->previous_class()});
    if (!resolution.ok()) return resolution.status();
    *response = convert::ToProto(*resolution);
    return absl::OkStatus();
  });
}

}  // namespace wsched::grpc_api
