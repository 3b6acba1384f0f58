#include "server/grpc/audit_trail.h"

#include <algorithm>
#include <map>
#include <set>

#include <google/protobuf/descriptor.h>
#include <google/protobuf/reflection.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace wsched::grpc_api {
namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;

// Identifying scalars worth keeping; anything else (YAML, descriptions,
// resource figures) would make the trail a copy of the database.
const std::set<std::string>& KeyFieldNames() {
  static const auto* names = new std::set<std::string>{
      "id",         "name",           "node_name",   "pool",    "org_id",
      "project_id", "default_class",  "gpu_uuid",    "kernel_version",
      "success",    "expected_version", "dry_run", "workspace_id"};
  return *names;
}

std::string ScalarText(const Message& message, const FieldDescriptor& field) {
  const auto* reflection = message.GetReflection();
  switch (field.cpp_type()) {
    case FieldDescriptor::CPPTYPE_STRING: return reflection->GetString(message, &field);
    case FieldDescriptor::CPPTYPE_INT64: return absl::StrCat(reflection->GetInt64(message, &field));
    case FieldDescriptor::CPPTYPE_INT32: return absl::StrCat(reflection->GetInt32(message, &field));
    case FieldDescriptor::CPPTYPE_BOOL: return reflection->GetBool(message, &field) ? "true" : "false";
    default: return "";
  }
}

void CollectKeyFields(const Message& message, const std::string& prefix, int depth,
                      std::map<std::string, std::string>& out) {
  const auto* descriptor = message.GetDescriptor();
  const auto* reflection = message.GetReflection();
  for (int i = 0; i < descriptor->field_count(); ++i) {
    const FieldDescriptor& field = *descriptor->field(i);
    if (field.is_repeated()) continue;
    if (field.cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
      if (depth == 0 && reflection->HasField(message, &field)) {
        CollectKeyFields(reflection->GetMessage(message, &field),
                         absl::StrCat(prefix, field.name(), "."), depth + 1, out);
      }
      continue;
    }
    if (KeyFieldNames().count(field.name()) == 0) continue;
    std::string value = ScalarText(message, field);
    if (!value.empty()) out[absl::StrCat(prefix, field.name())] = value;
  }
}

std::string Field(const std::map<std::string, std::string>& fields, const std::string& key) {
  auto it = fields.find(key);
  return it == fields.end() ? "" : it->second;
}

// The one thing a filter by object finds the call under.
std::string ObjectOf(const std::string& method, const std::map<std::string, std::string>& fields) {
  if (absl::EndsWith(method, "/ApplyCatalog")) return "catalog";
  for (const char* key : {"node_name", "node.name"}) {
    if (std::string node = Field(fields, key); !node.empty()) return absl::StrCat("node/", node);
  }
  if (absl::StrContains(method, ".ClassService/")) {
    for (const char* key : {"class.id", "id"}) {
      if (std::string id = Field(fields, key); !id.empty()) return absl::StrCat("class/", id);
    }
  }
  if (std::string workspace = Field(fields, "workspace_id"); !workspace.empty()) {
    return absl::StrCat("workspace/", workspace);
  }
  if (std::string project = Field(fields, "settings.project_id"); !project.empty()) {
    return absl::StrCat("project/", project);
  }
  if (std::string org = Field(fields, "settings.org_id"); !org.empty()) {
    return absl::StrCat("org/", org);
  }
  return "";
}

}  // namespace

const std::vector<std::string>& StateChangingMethods() {
  static const auto* methods = new std::vector<std::string>{
      "/wsched.v1.ClassService/UpdateClass",
      "/wsched.v1.ClassService/DeleteClass",
      "/wsched.v1.ClassService/ApplyCatalog",
      "/wsched.v1.SettingsService/SetProjectSettings",
      "/wsched.v1.SettingsService/SetOrgSettings",
      "/wsched.v1.InventoryService/RegisterNode",
      "/wsched.v1.InventoryService/CordonNode",
      "/wsched.v1.InventoryService/DrainNode",
      "/wsched.v1.InventoryService/UncordonNode",
      "/wsched.v1.InventoryService/RemoveNode",
      "/wsched.v1.InventoryService/ReportDriverInstall",
      "/wsched.v1.InventoryService/SetDriverRolloutPaused",
      "/wsched.v1.InventoryService/ClearGpuHealth",
      "/wsched.v1.InventoryService/RotateNodeCredential",
      "/wsched.v1.InventoryService/RevokeNodeCredential",
      // An admin's ready report by hand; the control plane's are not audited.
      "/wsched.v1.PlacementService/ReportWorkspaceReady",
  };
  return *methods;
}

bool Audited(const std::string& method, const Principal& who) {
  if (!who.Has(Role::kAdmin) && !who.Has(Role::kProjectOwner)) return false;
  const auto& methods = StateChangingMethods();
  return std::find(methods.begin(), methods.end(), method) != methods.end();
}

core::AuditRecord AuditRecordOf(const Principal& who, const std::string& method,
                                const google::protobuf::Message& request,
                                const absl::Status& outcome) {
  core::AuditRecord record;
  record.principal = who.name;
  record.credential = who.credential;
  record.method = method;
  CollectKeyFields(request, "", 0, record.fields);
  record.object = ObjectOf(method, record.fields);
  record.code = absl::StatusCodeToString(outcome.code());
  record.message = std::string(outcome.message().substr(0, 1000));
  return record;
}

}  // namespace wsched::grpc_api
