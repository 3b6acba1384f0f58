#include "server/grpc/class_service.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "server/catalog/load.h"
#include "server/catalog/render.h"
#include "server/catalog/validate.h"
#include "server/convert/convert.h"
#include "server/core/error_reason.h"
#include "server/core/paging.h"
#include "server/grpc/catalog_applier.h"
#include "server/grpc/handler.h"
#include "server/store/unit_of_work.h"

namespace wsched::grpc_api {
namespace {

constexpr char kService[] = "wsched.v1.ClassService";

absl::Status ClassNotFound(const std::string& id) {
  return core::NotFoundError(core::ErrorReason::kClassNotFound, "class", id);
}

v1::CatalogChange::Kind ToProto(catalog::ChangeKind kind) {
  switch (kind) {
    case catalog::ChangeKind::kAdd: return v1::CatalogChange::KIND_ADD;
    case catalog::ChangeKind::kUpdate: return v1::CatalogChange::KIND_UPDATE;
    case catalog::ChangeKind::kRemove: return v1::CatalogChange::KIND_REMOVE;
    case catalog::ChangeKind::kDeprecate: return v1::CatalogChange::KIND_DEPRECATE;
  }
  return v1::CatalogChange::KIND_UNSPECIFIED;
}

// The current catalog with `cls` added or replaced.
core::Catalog WithClass(core::Catalog catalog, const core::WorkspaceClass& cls) {
  bool replaced = false;
  for (auto& existing : catalog.classes) {
    if (cls.is_default) existing.is_default = false;
    if (existing.id == cls.id) {
      existing = cls;
      replaced = true;
    }
  }
  if (!replaced) catalog.classes.push_back(cls);
  return catalog;
}

}  // namespace

grpc::Status ClassServiceImpl::ListClasses(grpc::ServerContext* context,
                                           const v1::ListClassesRequest* request,
                                           v1::ListClassesResponse* response) {
  return Handle(context_, context, kService, "ListClasses", *request, [&](const Principal&) {
    return store::UnitOfWork::Run(*context_.db, "listing classes",
                                  [&](store::UnitOfWork& unit) -> absl::Status {
      auto page = core::ReadPageRequest(request->page_size(), request->page_token(),
                                        request->include_deprecated() ? "deprecated" : "");
      if (!page.ok()) return page.status();
      auto catalog = unit.catalog().Load();
      if (!catalog.ok()) return catalog.status();
      std::vector<core::WorkspaceClass> listed;
      for (const auto& cls : catalog->classes) {
        if (!cls.deprecated || request->include_deprecated()) listed.push_back(cls);
      }
      std::sort(listed.begin(), listed.end(),
                [](const auto& a, const auto& b) { return a.id < b.id; });
      std::string next_page_token;
      for (const auto& cls : core::PageOf(listed, *page, [](const auto& c) { return c.id; },
                                          &next_page_token)) {
        *response->add_classes() = convert::ToProto(cls);
      }
      response->set_next_page_token(next_page_token);
      return absl::OkStatus();
    });
  });
}

grpc::Status ClassServiceImpl::GetClass(grpc::ServerContext* context,
                                        const v1::GetClassRequest* request,
                                        v1::WorkspaceClass* response) {
  return Handle(context_, context, kService, "GetClass", *request,
                [&](const Principal&) -> absl::Status {
    return store::UnitOfWork::Run(*context_.db, "reading class",
                                  [&](store::UnitOfWork& unit) -> absl::Status {
      auto catalog = unit.catalog().Load();
      if (!catalog.ok()) return catalog.status();
      const core::WorkspaceClass* cls = catalog->FindClass(request->id());
      if (cls == nullptr) return ClassNotFound(request->id());
      *response = convert::ToProto(*cls);
      return absl::OkStatus();
    });
  });
}

grpc::Status ClassServiceImpl::UpdateClass(grpc::ServerContext* context,
                                           const v1::UpdateClassRequest* request,
                                           v1::WorkspaceClass* response) {
  return Handle(context_, context, kService, "UpdateClass", *request,
                [&](const Principal&) -> absl::Status {
    core::WorkspaceClass cls = convert::FromProto(request->class_());
    // One unit under the catalog lock: the check, the expected_version guard
    // and the write see the same catalog.
    absl::Status status = store::UnitOfWork::Run(*context_.db, "updating class",
                                                 [&](store::UnitOfWork& unit) -> absl::Status {
      unit.catalog().Lock();
      auto catalog = unit.catalog().Load();
      if (!catalog.ok()) return catalog.status();
      catalog::CatalogCheck check =
          catalog::CheckCatalog(WithClass(*catalog, cls), context_.catalog_rules);
      if (!check.ok()) {
        // The message keeps its heading; each error is a field violation.
        return core::WithDetails(
            absl::InvalidArgumentError(absl::StrCat("class ", cls.id, " breaks the catalog:\n",
                                                    absl::StrJoin(check.errors, "\n"))),
            *core::DetailsOf(core::InvalidFieldLinesError(check.errors)));
      }
      auto stored = unit.catalog().WriteClass(cls, request->expected_version());
      if (!stored.ok()) return stored.status();
      *response = convert::ToProto(*stored);
      return absl::OkStatus();
    });
    if (status.ok()) (void)context_.scheduler->ReloadCatalog();
    return status;
  });
}

grpc::Status ClassServiceImpl::DeleteClass(grpc::ServerContext* context,
                                           const v1::DeleteClassRequest* request,
                                           v1::DeleteClassResponse* response) {
  return Handle(context_, context, kService, "DeleteClass", *request,
                [&](const Principal&) -> absl::Status {
    absl::Status status = store::UnitOfWork::Run(*context_.db, "deleting class",
                                                 [&](store::UnitOfWork& unit) -> absl::Status {
      unit.catalog().Lock();
      auto catalog = unit.catalog().Load();
      if (!catalog.ok()) return catalog.status();
      const core::WorkspaceClass* cls = catalog->FindClass(request->id());
      if (cls == nullptr) return ClassNotFound(request->id());
      if (request->expected_version() != 0 && request->expected_version() != cls->version) {
        return core::VersionMismatchError("class", cls->id, cls->version,
                                          request->expected_version());
      }
      if (cls->is_default) {
        return core::PreconditionError(
            core::ErrorReason::kClassIsDefault, "STATE", absl::StrCat("class/", cls->id),
            absl::StrCat("class ", cls->id,
                         " is the installation default; make another class default first"),
            {{"class", cls->id}});
      }
      core::Catalog target = *catalog;
      std::erase_if(target.classes, [&](const auto& c) { return c.id == cls->id; });
      target = catalog::KeepInUseClasses(*catalog, target, unit.catalog().ClassesInUse());
      response->set_deprecated_instead(target.FindClass(cls->id) != nullptr);
      return unit.catalog().Write(*catalog, target);
    });
    if (status.ok()) (void)context_.scheduler->ReloadCatalog();
    return status;
  });
}

grpc::Status ClassServiceImpl::ApplyCatalog(grpc::ServerContext* context,
                                            const v1::ApplyCatalogRequest* request,
                                            v1::ApplyCatalogResponse* response) {
  return Handle(context_, context, kService, "ApplyCatalog", *request,
                [&](const Principal&) -> absl::Status {
    const std::map<std::string, int64_t> expected_pool_versions(
        request->expected_pool_versions().begin(), request->expected_pool_versions().end());
    auto result = ApplyCheckedCatalog(*context_.db,
                                      catalog::CheckCatalogText(request->yaml(), context_.catalog_rules),
                                      request->dry_run(), expected_pool_versions);
    context_.metrics->CatalogApplied(result.ok(), /*from_reload=*/false);
    if (!result.ok()) return result.status();
    if (!request->dry_run()) (void)context_.scheduler->ReloadCatalog();
    response->set_dry_run(result->dry_run);
    for (const auto& change : result->changes) {
      auto* out = response->add_changes();
      out->set_kind(ToProto(change.kind));
      out->set_object(catalog::ObjectKindName(change.object));
      out->set_id(change.id);
      out->set_detail(change.detail);
    }
    return absl::OkStatus();
  });
}

grpc::Status ClassServiceImpl::GetCatalog(grpc::ServerContext* context,
                                          const v1::GetCatalogRequest* request,
                                          v1::GetCatalogResponse* response) {
  return Handle(context_, context, kService, "GetCatalog", *request, [&](const Principal&) {
    return store::UnitOfWork::Run(*context_.db, "reading catalog",
                                  [&](store::UnitOfWork& unit) -> absl::Status {
      auto catalog = unit.catalog().Load();
      if (!catalog.ok()) return catalog.status();
      response->set_yaml(catalog::RenderCatalogYaml(*catalog));
      return absl::OkStatus();
    });
  });
}

}  // namespace wsched::grpc_api
