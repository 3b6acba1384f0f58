#include "server/grpc/settings_service.h"

#include "absl/strings/str_cat.h"
#include "server/convert/convert.h"
#include "server/core/class_resolution.h"
#include "server/core/error_reason.h"
#include "server/grpc/handler.h"
#include "server/store/unit_of_work.h"

namespace wsched::grpc_api {
namespace {

constexpr char kService[] = "wsched.v1.SettingsService";

// Classes a setting refers to must exist; a default must also be choosable.
absl::Status CheckClassReferences(const core::Catalog& catalog, const std::string& default_class,
                                  const google::protobuf::RepeatedPtrField<std::string>& listed,
                                  const std::string& list_field) {
  if (!default_class.empty()) {
    const core::WorkspaceClass* cls = catalog.FindClass(default_class);
    if (cls == nullptr) {
      return core::InvalidFieldError("settings.default_class",
                                     absl::StrCat("class ", default_class, " does not exist"));
    }
    if (cls->deprecated) {
      return core::InvalidFieldError(
          "settings.default_class",
          absl::StrCat("class ", default_class, " is deprecated and cannot be a default"));
    }
  }
  for (int i = 0; i < listed.size(); ++i) {
    if (catalog.FindClass(listed[i]) == nullptr) {
      return core::InvalidFieldError(absl::StrCat(list_field, "[", i, "]"),
                                     absl::StrCat("class ", listed[i], " does not exist"));
    }
  }
  return absl::OkStatus();
}

v1::ClassSource ToProto(core::ClassSource source) {
  switch (source) {
    case core::ClassSource::kRequest: return v1::CLASS_SOURCE_REQUEST;
    case core::ClassSource::kPrevious: return v1::CLASS_SOURCE_PREVIOUS;
    case core::ClassSource::kProjectDefault: return v1::CLASS_SOURCE_PROJECT_DEFAULT;
    case core::ClassSource::kOrgDefault: return v1::CLASS_SOURCE_ORG_DEFAULT;
    case core::ClassSource::kInstallationDefault: return v1::CLASS_SOURCE_INSTALLATION_DEFAULT;
  }
  return v1::CLASS_SOURCE_UNSPECIFIED;
}

absl::Status DenyProject(const Principal& who, const std::string& project_id) {
  return core::ReasonError(absl::StrCat(who.name, " may not access project ", project_id),
                           {.reason = core::ErrorReason::kOutsideTokenScope,
                            .metadata = {{"principal", who.name}, {"project", project_id}}});
}

}  // namespace

grpc::Status SettingsServiceImpl::GetProjectSettings(grpc::ServerContext* context,
                                                     const v1::GetProjectSettingsRequest* request,
                                                     v1::ProjectSettings* response) {
  return Handle(context_, context, kService, "GetProjectSettings", *request,
                [&](const Principal& who) -> absl::Status {
    return store::UnitOfWork::Run(*context_.db, "reading project settings",
                                  [&](store::UnitOfWork& unit) -> absl::Status {
      int64_t version = 0;
      auto settings = unit.settings().LoadProject(request->project_id(), &version);
      if (!settings.ok()) return settings.status();
      if (!who.CoversProject(settings->org_id, settings->project_id)) {
        return DenyProject(who, request->project_id());
      }
      *response = convert::ToProto(*settings);
      response->set_version(version);
      return absl::OkStatus();
    });
  });
}

grpc::Status SettingsServiceImpl::SetProjectSettings(grpc::ServerContext* context,
                                                     const v1::SetProjectSettingsRequest* request,
                                                     v1::ProjectSettings* response) {
  return Handle(context_, context, kService, "SetProjectSettings", *request,
                [&](const Principal& who) -> absl::Status {
    const v1::ProjectSettings& in = request->settings();
    if (!who.CoversProject(in.org_id(), in.project_id())) return DenyProject(who, in.project_id());
    // Read, checked and saved in one transaction; the save itself is
    // guarded by expected_version (settings_repository.h).
    return store::UnitOfWork::Run(*context_.db, "saving project settings",
                                  [&](store::UnitOfWork& unit) -> absl::Status {
      auto stored = unit.settings().LoadProject(in.project_id());
      if (!stored.ok()) return stored.status();
      // A project belongs to one org; only an admin may move it.
      if (!stored->org_id.empty() && stored->org_id != in.org_id() && !who.Has(Role::kAdmin)) {
        return core::ReasonError(
            absl::StrCat("settings.org_id: project ", in.project_id(), " belongs to org ",
                         stored->org_id),
            {.reason = core::ErrorReason::kProjectInOtherOrg,
             .metadata = {{"project", in.project_id()},
                          {"org", in.org_id()},
                          {"stored_org", stored->org_id},
                          {"required_roles", "admin"}}});
      }
      auto catalog = unit.catalog().Load();
      if (!catalog.ok()) return catalog.status();
      if (absl::Status s = CheckClassReferences(*catalog, in.default_class(), in.denied_classes(),
                                                "settings.denied_classes");
          !s.ok()) {
        return s;
      }
      core::ProjectSettings settings = convert::FromProto(in);
      int64_t version = 0;
      if (absl::Status s =
              unit.settings().SaveProject(settings, request->expected_version(), &version);
          !s.ok()) {
        return s;
      }
      *response = convert::ToProto(settings);
      response->set_version(version);
      return absl::OkStatus();
    });
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
    return store::UnitOfWork::Run(*context_.db, "reading org settings",
                                  [&](store::UnitOfWork& unit) -> absl::Status {
      int64_t version = 0;
      auto settings = unit.settings().LoadOrg(request->org_id(), &version);
      if (!settings.ok()) return settings.status();
      *response = convert::ToProto(*settings);
      response->set_version(version);
      return absl::OkStatus();
    });
  });
}

grpc::Status SettingsServiceImpl::SetOrgSettings(grpc::ServerContext* context,
                                                 const v1::SetOrgSettingsRequest* request,
                                                 v1::OrgSettings* response) {
  return Handle(context_, context, kService, "SetOrgSettings", *request,
                [&](const Principal&) -> absl::Status {
    const v1::OrgSettings& in = request->settings();
    return store::UnitOfWork::Run(*context_.db, "saving org settings",
                                  [&](store::UnitOfWork& unit) -> absl::Status {
      auto catalog = unit.catalog().Load();
      if (!catalog.ok()) return catalog.status();
      if (absl::Status s = CheckClassReferences(*catalog, in.default_class(),
                                                in.allowed_classes(), "settings.allowed_classes");
          !s.ok()) {
        return s;
      }
      core::OrgSettings settings = convert::FromProto(in);
      int64_t version = 0;
      if (absl::Status s = unit.settings().SaveOrg(settings, request->expected_version(), &version);
          !s.ok()) {
        return s;
      }
      *response = convert::ToProto(settings);
      response->set_version(version);
      return absl::OkStatus();
    });
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
    return store::UnitOfWork::Run(*context_.db, "resolving class",
                                  [&](store::UnitOfWork& unit) -> absl::Status {
      auto catalog = unit.catalog().Load();
      if (!catalog.ok()) return catalog.status();
      auto project = unit.settings().LoadProject(request->project_id());
      if (!project.ok()) return project.status();
      auto org = unit.settings().LoadOrg(request->org_id());
      if (!org.ok()) return org.status();
      auto resolution = core::ResolveClass(
          {request->org_id(), request->project_id(), request->requested_class(),
           request->previous_class()},
          *catalog, *project, *org);
      if (!resolution.ok()) return resolution.status();
      response->set_class_id(resolution->class_id);
      response->set_source(ToProto(resolution->source));
      response->set_explanation(resolution->explanation);
      for (const auto& skipped : resolution->skipped) response->add_skipped(skipped);
      return absl::OkStatus();
    });
  });
}

}  // namespace wsched::grpc_api
