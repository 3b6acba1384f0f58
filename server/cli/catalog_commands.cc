#include "server/cli/catalog_commands.h"

#include <fstream>
#include <iostream>
#include <sstream>

#include "server/catalog/load.h"
#include "server/cli/output.h"
#include "server/cli/paging.h"
#include "server/core/quantity.h"
#include "wsched/v1/classes.grpc.pb.h"

namespace wsched::cli {
namespace {

int Validate(const std::string& path) {
  catalog::CatalogCheck check = catalog::CheckCatalogPath(path);
  for (const auto& warning : check.warnings) std::cerr << "warning: " << warning << "\n";
  if (!check.ok()) {
    for (const auto& error : check.errors) std::cerr << error << "\n";
    std::cerr << path << ": " << check.errors.size() << " error(s)\n";
    return 1;
  }
  std::cout << path << ": OK (" << check.catalog.classes.size() << " classes, "
            << check.catalog.pools.size() << " pools, " << check.catalog.driver_policy.size()
            << " driver policy entries)\n";
  return 0;
}

// The file's text: one YAML file, or every *.yaml of a directory merged by
// the server the same way `validate` merges them locally.
bool ReadCatalogText(const std::string& path, std::string* text) {
  std::ifstream in(path);
  if (!in) return false;
  std::stringstream buffer;
  buffer << in.rdbuf();
  *text = buffer.str();
  return true;
}

const char* KindName(v1::CatalogChange::Kind kind) {
  switch (kind) {
    case v1::CatalogChange::KIND_ADD: return "add";
    case v1::CatalogChange::KIND_UPDATE: return "update";
    case v1::CatalogChange::KIND_REMOVE: return "remove";
    case v1::CatalogChange::KIND_DEPRECATE: return "deprecate";
    default: return "?";
  }
}

int Apply(const Client& client, const std::string& path, bool dry_run) {
  std::string text;
  if (!ReadCatalogText(path, &text)) {
    std::cerr << "cannot read " << path << " (apply takes one YAML file)\n";
    return 1;
  }
  auto stub = v1::ClassService::NewStub(client.channel);
  v1::ApplyCatalogRequest request;
  request.set_yaml(text);
  request.set_dry_run(dry_run);
  v1::ApplyCatalogResponse response;
  auto context = client.Context(30);
  grpc::Status status = stub->ApplyCatalog(context.get(), request, &response);
  if (!status.ok()) {
    std::cerr << "catalog rejected; nothing changed:\n" << status.error_message() << "\n";
    return 1;
  }
  for (const auto& change : response.changes()) {
    std::cout << KindName(change.kind()) << " " << change.object() << " " << change.id()
              << (change.detail().empty() ? "" : ": " + change.detail()) << "\n";
  }
  std::cout << (response.changes().empty() ? "no changes" : "")
            << (response.dry_run() ? (response.changes().empty() ? " (dry run)\n" : "(dry run: nothing written)\n")
                                   : (response.changes().empty() ? "\n" : "applied\n"));
  return 0;
}

int Show(const Client& client) {
  auto stub = v1::ClassService::NewStub(client.channel);
  v1::GetCatalogResponse response;
  auto context = client.Context();
  grpc::Status status = stub->GetCatalog(context.get(), v1::GetCatalogRequest(), &response);
  if (!status.ok()) {
    std::cerr << Describe(status) << "\n";
    return 1;
  }
  std::cout << response.yaml();
  return 0;
}

}  // namespace

int CatalogCommand(const Client& client, const std::vector<std::string>& args, bool dry_run) {
  const std::string sub = args.empty() ? "" : args[0];
  if (sub == "show") return Show(client);
  if (args.size() != 2) {
    std::cerr << "usage: wschedctl catalog validate|diff|apply [--dry_run] FILE | catalog show\n";
    return 2;
  }
  if (sub == "validate") return Validate(args[1]);
  if (sub == "diff") return Apply(client, args[1], /*dry_run=*/true);
  if (sub == "apply") return Apply(client, args[1], dry_run);
  std::cerr << "unknown catalog command \"" << sub << "\"\n";
  return 2;
}

int ClassesCommand(const Client& client, const std::vector<std::string>& args,
                   const Options& options) {
  if (!args.empty()) {
    std::cerr << "usage: wschedctl classes [--output=json]\n";
    return 2;
  }
  auto stub = v1::ClassService::NewStub(client.channel);
  v1::ListClassesRequest request;
  request.set_include_deprecated(true);
  v1::ListClassesResponse response;
  grpc::Status status = ListAllPages(
      client, request, &response,
      [&](grpc::ClientContext* context, const auto& page_request, auto* page) {
        return stub->ListClasses(context, page_request, page);
      });
  if (!status.ok()) return Fail("classes", status);
  if (options.json) return PrintJson(response);
  std::printf("%-14s %-4s %-8s %-4s %-18s %-9s %s\n", "CLASS", "VER", "CPU", "GPUS", "MODELS",
              "ISOLATION", "FLAGS");
  for (const auto& cls : response.classes()) {
    std::string models;
    for (const auto& model : cls.gpu().models()) models += (models.empty() ? "" : ",") + model;
    std::string flags = std::string(cls.is_default() ? "default " : "") +
                        (cls.deprecated() ? "deprecated" : "");
    std::printf("%-14s %-4lld %-8s %-4d %-18s %-9s %s\n", cls.id().c_str(),
                static_cast<long long>(cls.version()),
                core::FormatCpuMillis(cls.resources().cpu_request_millis()).c_str(),
                cls.gpu().count(), models.empty() ? "-" : models.c_str(),
                cls.gpu().isolation() == v1::ISOLATION_VM ? "vm" : "container", flags.c_str());
  }
  return 0;
}

}  // namespace wsched::cli
