#include "server/grpc/class_service.h"

#include <map>

#include "server/convert/catalog_convert.h"
#include "server/convert/convert.h"
#include "server/grpc/handler.h"

namespace wsched::grpc_api {
namespace {

constexpr char kService[] = "wsched.v1.ClassService";

}  // namespace

grpc::Status ClassServiceImpl::ListClasses(grpc::ServerContext* context,
                                           const v1::ListClassesRequest* request,
                                           v1::ListClassesResponse* response) {
  return Handle(context_, context, kService, "ListClasses", *request,
                [&](const Principal&) -> absl::Status {
    auto page = context_.classes->List(request->page_size(), request->page_token(),
                                       request->include_deprecated());
    if (!page.ok()) return page.status();
    for (const auto& cls : page->items) *response->add_classes() = convert::ToProto(cls);
    response->set_next_page_token(page->next_page_token);
    return absl::OkStatus();
  });
}

grpc::Status ClassServiceImpl::GetClass(grpc::ServerContext* context,
                                        const v1::GetClassRequest* request,
                                        v1::WorkspaceClass* response) {
  return Handle(context_, context, kService, "GetClass", *request,
                [&](const Principal&) -> absl::Status {
    auto cls = context_.classes->Get(request->id());
    if (!cls.ok()) return cls.status();
    *response = convert::ToProto(*cls);
    return absl::OkStatus();
  });
}

grpc::Status ClassServiceImpl::UpdateClass(grpc::ServerContext* context,
                                           const v1::UpdateClassRequest* request,
                                           v1::WorkspaceClass* response) {
  return Handle(context_, context, kService, "UpdateClass", *request,
                [&](const Principal&) -> absl::Status {
    auto stored = context_.classes->Update(convert::FromProto(request->class_()),
                                           request->expected_version());
    if (!stored.ok()) return stored.status();
    *response = convert::ToProto(*stored);
    return absl::OkStatus();
  });
}

grpc::Status ClassServiceImpl::DeleteClass(grpc::ServerContext* context,
                                           const v1::DeleteClassRequest* request,
                                           v1::DeleteClassResponse* response) {
  return Handle(context_, context, kService, "DeleteClass", *request,
                [&](const Principal&) -> absl::Status {
    auto deprecated_instead = context_.classes->Delete(request->id(), request->expected_version());
    if (!deprecated_instead.ok()) return deprecated_instead.status();
    response->set_deprecated_instead(*deprecated_instead);
    return absl::OkStatus();
  });
}

grpc::Status ClassServiceImpl::ApplyCatalog(grpc::ServerContext* context,
                                            const v1::ApplyCatalogRequest* request,
                                            v1::ApplyCatalogResponse* response) {
  return Handle(context_, context, kService, "ApplyCatalog", *request,
                [&](const Principal&) -> absl::Status {
    const std::map<std::string, int64_t> expected_pool_versions(
        request->expected_pool_versions().begin(), request->expected_pool_versions().end());
    auto result = context_.classes->Apply(request->yaml(), request->dry_run(), expected_pool_versions);
    if (!result.ok()) return result.status();
    response->set_dry_run(result->dry_run);
    for (const auto& change : result->changes) *response->add_changes() = convert::ToProto(change);
    return absl::OkStatus();
  });
}

grpc::Status ClassServiceImpl::GetCatalog(grpc::ServerContext* context,
                                          const v1::GetCatalogRequest* request,
                                          v1::GetCatalogResponse* response) {
  return Handle(context_, context, kService, "GetCatalog", *request,
                [&](const Principal&) -> absl::Status {
    auto yaml = context_.classes->CatalogYaml();
    if (!yaml.ok()) return yaml.status();
    response->set_yaml(*yaml);
    return absl::OkStatus();
  });
}

}  // namespace wsched::grpc_api
