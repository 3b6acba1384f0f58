#include "server/cli/settings_commands.h"

#include <iostream>

#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "server/cli/output.h"
#include "server/cli/structured_output.h"
#include "wsched/v1/settings.grpc.pb.h"

namespace wsched::cli {
namespace {

constexpr char kProjectUsage[] =
    "usage: wschedctl project get PROJECT\n"
    "       wschedctl project set-default PROJECT --org=O CLASS   (CLASS \"\" clears it)\n"
    "       [--expected-version=N | --force]\n";
constexpr char kOrgUsage[] =
    "usage: wschedctl org get ORG\n"
    "       wschedctl org set ORG [--default=C] [--allow=a,b] [--gpu_quota=N]\n"
    "       [--expected-version=N | --force]\n"
    "       (flags not given keep their value; --default= and --allow= clear;\n"
    "        --gpu_quota=-1 is unlimited, 0 forbids GPUs)\n";

// The version a read-modify-write sends: the one the user read earlier
// (--expected-version), else the one just read; --force: none (0, an
// unconditional write). Settings never stored read as version 0, so their
// first write is unconditional.
int64_t ExpectedVersion(const Options& options, int64_t read_version) {
  if (options.force) return 0;
  return options.expected_version.value_or(read_version);
}

// A failed write; on a version mismatch, what to do about it.
int FailWrite(const std::string& what, const grpc::Status& status) {
  int rc = Fail(what, status);
  if (status.error_code() == grpc::StatusCode::ABORTED) {
    std::cerr << "hint: someone changed these settings since they were read; nothing was "
                 "written. Run the command again (it re-reads), or pass --force to overwrite\n";
  }
  return rc;
}

bool ForceConflicts(const Options& options, const std::string& command) {
  if (!options.force || !options.expected_version) return false;
  std::cerr << command << ": --force and --expected-version contradict each other\n";
  return true;
}

std::string ListText(const google::protobuf::RepeatedPtrField<std::string>& list,
                     const char* empty) {
  return list.empty() ? empty : Join({list.begin(), list.end()}, ",");
}

void PrintProject(const v1::ProjectSettings& settings) {
  std::cout << "project:        " << settings.project_id() << "\n"
            << "org:            " << OrDash(settings.org_id()) << "\n"
            << "default class:  " << OrDash(settings.default_class()) << "\n"
            << "denied classes: " << ListText(settings.denied_classes(), "-") << "\n"
            << "version:        " << settings.version() << "\n";
}

void PrintOrg(const v1::OrgSettings& settings) {
  std::cout << "org:             " << settings.org_id() << "\n"
            << "default class:   " << OrDash(settings.default_class()) << "\n"
            << "allowed classes: " << ListText(settings.allowed_classes(), "all") << "\n"
            << "gpu quota:       "
            << (settings.gpu_quota() < 0 ? std::string("unlimited")
                                         : std::to_string(settings.gpu_quota()) + " GPUs")
            << "\n"
            << "version:         " << settings.version() << "\n";
}

const char* SourceText(v1::ClassSource source) {
  switch (source) {
    case v1::CLASS_SOURCE_REQUEST: return "requested";
    case v1::CLASS_SOURCE_PREVIOUS: return "previous class (restart)";
    case v1::CLASS_SOURCE_PROJECT_DEFAULT: return "project default";
    case v1::CLASS_SOURCE_ORG_DEFAULT: return "org default";
    case v1::CLASS_SOURCE_INSTALLATION_DEFAULT: return "installation default";
    default: return "?";
  }
}

int GetProject(const Client& client, const std::string& project, const Options& options) {
  auto stub = v1::SettingsService::NewStub(client.channel);
  v1::GetProjectSettingsRequest request;
  request.set_project_id(project);
  v1::ProjectSettings settings;
  auto context = client.Context();
  grpc::Status status = stub->GetProjectSettings(context.get(), request, &settings);
  if (!status.ok()) return Fail("project get " + project, status);
  if (options.structured()) return PrintStructured(settings, options);
  PrintProject(settings);
  return 0;
}

// Reads the stored settings first so the deny-list survives, and writes
// against the version read so a concurrent change is not overwritten.
int SetProjectDefault(const Client& client, const std::string& project,
                      const std::string& class_id, const Options& options) {
  if (ForceConflicts(options, "project set-default")) return 2;
  auto stub = v1::SettingsService::NewStub(client.channel);
  v1::GetProjectSettingsRequest get;
  get.set_project_id(project);
  v1::ProjectSettings settings;
  auto get_context = client.Context();
  grpc::Status status = stub->GetProjectSettings(get_context.get(), get, &settings);
  if (!status.ok()) return Fail("project set-default " + project + ": reading settings", status);
  settings.set_project_id(project);
  settings.set_org_id(options.org);
  settings.set_default_class(class_id);
  v1::SetProjectSettingsRequest set;
  set.set_expected_version(ExpectedVersion(options, settings.version()));
  *set.mutable_settings() = settings;
  v1::ProjectSettings saved;
  auto set_context = client.Context();
  status = stub->SetProjectSettings(set_context.get(), set, &saved);
  if (!status.ok()) return FailWrite("project set-default " + project, status);
  if (options.structured()) return PrintStructured(saved, options);
  PrintProject(saved);
  return 0;
}

int GetOrg(const Client& client, const std::string& org, const Options& options) {
  auto stub = v1::SettingsService::NewStub(client.channel);
  v1::GetOrgSettingsRequest request;
  request.set_org_id(org);
  v1::OrgSettings settings;
  auto context = client.Context();
  grpc::Status status = stub->GetOrgSettings(context.get(), request, &settings);
  if (!status.ok()) return Fail("org get " + org, status);
  if (options.structured()) return PrintStructured(settings, options);
  PrintOrg(settings);
  return 0;
}

// Read, change what the flags name, write back against the version read.
int SetOrg(const Client& client, const std::string& org, const Options& options) {
  if (ForceConflicts(options, "org set")) return 2;
  if (!options.default_class && !options.allow && !options.gpu_quota) {
    std::cerr << "org set: nothing to change; give --default, --allow or --gpu_quota\n"
              << kOrgUsage;
    return 2;
  }
  auto stub = v1::SettingsService::NewStub(client.channel);
  v1::GetOrgSettingsRequest get;
  get.set_org_id(org);
  v1::OrgSettings settings;
  auto get_context = client.Context();
  grpc::Status status = stub->GetOrgSettings(get_context.get(), get, &settings);
  if (!status.ok()) return Fail("org set " + org + ": reading settings", status);
  settings.set_org_id(org);
  if (options.default_class) settings.set_default_class(*options.default_class);
  if (options.allow) {
    settings.clear_allowed_classes();
    for (absl::string_view id : absl::StrSplit(*options.allow, ',', absl::SkipWhitespace())) {
      settings.add_allowed_classes(std::string(absl::StripAsciiWhitespace(id)));
    }
  }
  if (options.gpu_quota) settings.set_gpu_quota(*options.gpu_quota);
  v1::SetOrgSettingsRequest set;
  set.set_expected_version(ExpectedVersion(options, settings.version()));
  *set.mutable_settings() = settings;
  v1::OrgSettings saved;
  auto set_context = client.Context();
  status = stub->SetOrgSettings(set_context.get(), set, &saved);
  if (!status.ok()) return FailWrite("org set " + org, status);
  if (options.structured()) return PrintStructured(saved, options);
  PrintOrg(saved);
  return 0;
}

}  // namespace

int ProjectCommand(const Client& client, const std::vector<std::string>& args,
                   const Options& options) {
  const std::string sub = args.empty() ? "" : args[0];
  if (sub == "get" && args.size() == 2) return GetProject(client, args[1], options);
  if (sub == "set-default" && args.size() == 3) {
    if (options.org.empty()) {
      std::cerr << "project set-default needs --org\n" << kProjectUsage;
      return 2;
    }
    return SetProjectDefault(client, args[1], args[2], options);
  }
  if (!sub.empty() && sub != "get" && sub != "set-default") {
    std::cerr << "unknown project command \"" << sub << "\"\n";
  }
  std::cerr << kProjectUsage;
  return 2;
}

int OrgCommand(const Client& client, const std::vector<std::string>& args,
               const Options& options) {
  const std::string sub = args.empty() ? "" : args[0];
  if (sub == "get" && args.size() == 2) return GetOrg(client, args[1], options);
  if (sub == "set" && args.size() == 2) return SetOrg(client, args[1], options);
  if (!sub.empty() && sub != "get" && sub != "set") {
    std::cerr << "unknown org command \"" << sub << "\"\n";
  }
  std::cerr << kOrgUsage;
  return 2;
}

int ResolveCommand(const Client& client, const std::vector<std::string>& args,
                   const Options& options) {
  if (!args.empty() || options.org.empty() || options.project.empty()) {
    std::cerr << "usage: wschedctl resolve --org=O --project=P [--class=C] [--previous=C]\n";
    return 2;
  }
  auto stub = v1::SettingsService::NewStub(client.channel);
  v1::ResolveClassRequest request;
  request.set_org_id(options.org);
  request.set_project_id(options.project);
  request.set_requested_class(options.class_id);
  request.set_previous_class(options.previous);
  v1::ResolveClassResponse response;
  auto context = client.Context();
  grpc::Status status = stub->ResolveClass(context.get(), request, &response);
  if (!status.ok()) return Fail("resolve", status);
  if (options.structured()) return PrintStructured(response, options);
  std::cout << "class:  " << response.class_id() << " (" << SourceText(response.source()) << ")\n"
            << "why:    " << OrDash(response.explanation()) << "\n";
  if (!response.skipped().empty()) {
    std::cout << "skipped:\n";
    for (const auto& skipped : response.skipped()) std::cout << "  - " << skipped << "\n";
  }
  return 0;
}

int ShowProject(const Client& client, const std::string& project, const Options& options) {
  return GetProject(client, project, options);
}

int ShowOrg(const Client& client, const std::string& org, const Options& options) {
  return GetOrg(client, org, options);
}

}  // namespace wsched::cli
