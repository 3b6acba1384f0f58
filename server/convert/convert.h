// Core domain types <-> wsched.v1 API messages. The API messages double as
// the stored form (JSON columns), so this is the one mapping in the system.
#ifndef WSCHED_SERVER_CONVERT_CONVERT_H_
#define WSCHED_SERVER_CONVERT_CONVERT_H_

#include <string>

#include "absl/status/statusor.h"
#include "server/core/catalog.h"
#include "server/core/node.h"
#include "server/core/settings.h"
#include "wsched/v1/classes.pb.h"
#include "wsched/v1/inventory.pb.h"
#include "wsched/v1/settings.pb.h"

namespace wsched::convert {

v1::WorkspaceClass ToProto(const core::WorkspaceClass& cls);
core::WorkspaceClass FromProto(const v1::WorkspaceClass& cls);

v1::Pool ToProto(const core::NodePool& pool);
core::NodePool FromProto(const v1::Pool& pool);

v1::ProjectSettings ToProto(const core::ProjectSettings& settings);
core::ProjectSettings FromProto(const v1::ProjectSettings& settings);
v1::OrgSettings ToProto(const core::OrgSettings& settings);
core::OrgSettings FromProto(const v1::OrgSettings& settings);

v1::NodeInfo ToProto(const core::NodeInfo& node);
core::NodeInfo FromProto(const v1::NodeInfo& node);
v1::CdiMode ToProto(core::CdiMode mode);
core::CdiMode FromProto(v1::CdiMode mode);
v1::NodeCdi ToProto(const core::NodeCdi& cdi);
core::NodeCdi FromProto(const v1::NodeCdi& cdi);

// Proto <-> JSON for storage (proto3 JSON mapping, field names preserved).
std::string ToJson(const google::protobuf::Message& message);
absl::Status FromJson(const std::string& json, google::protobuf::Message* message);

// Pools and driver-policy entries have no API message of their own with all
// settings, so they are stored as JSON objects written here.
std::string PoolToJson(const core::NodePool& pool);
absl::StatusOr<core::NodePool> PoolFromJson(const std::string& json);
std::string DriverPolicyToJson(const core::DriverPolicyEntry& entry);
absl::StatusOr<core::DriverPolicyEntry> DriverPolicyFromJson(const std::string& json);

}  // namespace wsched::convert

#endif  // WSCHED_SERVER_CONVERT_CONVERT_H_
