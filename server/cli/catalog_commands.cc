#include "server/cli/catalog_commands.h"

#include <fstream>
#include <iostream>
#include <sstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "server/catalog/load.h"
#include "server/cli/output.h"
#include "server/cli/structured_output.h"
#include "server/cli/all_pages.h"
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

grpc::Status GetOneClass(const Client& client, const std::string& id, v1::WorkspaceClass* cls) {
  auto stub = v1::ClassService::NewStub(client.channel);
  v1::GetClassRequest request;
  request.set_id(id);
  auto context = client.Context();
  return stub->GetClass(context.get(), request, cls);
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

// --pool-versions=POOL=V,...: the pools' versions the caller read.
bool ParsePoolVersions(const std::vector<std::string>& items, v1::ApplyCatalogRequest* request) {
  for (const std::string& item : items) {
    std::pair<std::string, std::string> parts = absl::StrSplit(item, absl::MaxSplits('=', 1));
    int64_t version = 0;
    if (parts.first.empty() || !absl::SimpleAtoi(parts.second, &version) || version < 1) {
      std::cerr << "--pool-versions: \"" << item << "\" is not POOL=VERSION (VERSION >= 1)\n";
      return false;
    }
    (*request->mutable_expected_pool_versions())[parts.first] = version;
  }
  return true;
}

int Apply(const Client& client, const std::string& path, bool dry_run,
          const std::vector<std::string>& pool_versions) {
  std::string text;
  if (!ReadCatalogText(path, &text)) {
    std::cerr << "cannot read " << path << " (apply takes one YAML file)\n";
    return 1;
  }
  auto stub = v1::ClassService::NewStub(client.channel);
  v1::ApplyCatalogRequest request;
  request.set_yaml(text);
  request.set_dry_run(dry_run);
  if (!ParsePoolVersions(pool_versions, &request)) return 2;
  v1::ApplyCatalogResponse response;
  auto context = client.Context();
  grpc::Status status = stub->ApplyCatalog(context.get(), request, &response);
  if (status.error_code() == grpc::StatusCode::ABORTED) {
    std::cerr << "catalog not applied; nothing changed: " << status.error_message() << "\n"
              << "hint: a pool changed since you read it: read `wschedctl get pools -o json`, "
                 "merge, and apply again with the new versions\n";
    return 1;
  }
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

int CatalogCommand(const Client& client, const std::vector<std::string>& args,
                   const Options& options) {
  const std::string sub = args.empty() ? "" : args[0];
  if (sub == "show") return Show(client);
  if (args.size() != 2) {
    std::cerr << "usage: wschedctl catalog validate|diff|apply [--dry_run] FILE | catalog show\n";
    return 2;
  }
  if (sub == "validate") return Validate(args[1]);
  if (sub == "diff") return Apply(client, args[1], /*dry_run=*/true, options.pool_versions);
  if (sub == "apply") return Apply(client, args[1], options.dry_run, options.pool_versions);
  std::cerr << "unknown catalog command \"" << sub << "\"\n";
  return 2;
}

int ClassesCommand(const Client& client, const std::vector<std::string>& args,
                   const Options& options) {
  if (!args.empty()) {
    std::cerr << "usage: wschedctl classes [--output=json]\n";
    return 2;
  }
  return GetClasses(client, "", options);
}

int GetClasses(const Client& client, const std::string& id, const Options& options) {
  auto stub = v1::ClassService::NewStub(client.channel);
  v1::ListClassesResponse response;
  grpc::Status status;
  if (id.empty()) {
    v1::ListClassesRequest request;
    request.set_include_deprecated(true);
    status = ListAllPages(client, request, &response,
                          [&](grpc::ClientContext* context, const auto& page_request, auto* page) {
                            return stub->ListClasses(context, page_request, page);
                          });
    if (!status.ok()) return Fail("get classes", status);
    if (options.structured()) return PrintStructured(response, options);
  } else {
    status = GetOneClass(client, id, response.add_classes());
    if (!status.ok()) return Fail("get class " + id, status);
    if (options.structured()) return PrintStructured(response.classes(0), options);
  }
  Table table({"CLASS", "VER", "CPU", "GPUS", "MODELS", "ISOLATION", "FLAGS"});
  for (const auto& cls : response.classes()) {
    std::vector<std::string> models(cls.gpu().models().begin(), cls.gpu().models().end());
    std::vector<std::string> profiles(cls.gpu().mig_profiles().begin(),
                                      cls.gpu().mig_profiles().end());
    std::string flags = std::string(cls.is_default() ? "default " : "") +
                        (cls.deprecated() ? "deprecated" : "");
    table.Add({cls.id(), absl::StrCat(cls.version()),
               core::FormatCpuMillis(cls.resources().cpu_request_millis()),
               profiles.empty() ? absl::StrCat(cls.gpu().count()) : "mig " + Join(profiles),
               models.empty() ? "-" : Join(models),
               cls.gpu().isolation() == v1::ISOLATION_VM ? "vm" : "container", flags});
  }
  table.Print("no classes", !options.no_headers);
  return 0;
}

int DescribeClass(const Client& client, const std::string& id, const Options& options) {
  v1::WorkspaceClass cls;
  grpc::Status status = GetOneClass(client, id, &cls);
  if (!status.ok()) return Fail("describe class " + id, status);
  // The class has too many fields for a table: its YAML is the detail view.
  Options structured = options;
  if (!structured.structured()) structured.output = OutputFormat::kYaml;
  return PrintStructured(cls, structured);
}

}  // namespace wsched::cli
