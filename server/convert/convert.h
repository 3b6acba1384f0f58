// Core domain types <-> wsched.v1 API messages: the API mapping, and only
// that. What the store keeps is its own schema (server/store/documents/), so
// an API field can change without a data migration.
#ifndef WSCHED_SERVER_CONVERT_CONVERT_H_
#define WSCHED_SERVER_CONVERT_CONVERT_H_

#include <string>

#include "absl/status/statusor.h"
#include "server/core/catalog.h"
#include "server/core/hand_off.h"
#include "server/core/node.h"
#include "server/core/settings.h"
#include "wsched/v1/classes.pb.h"
#include "wsched/v1/inventory.pb.h"
#include "wsched/v1/placement.pb.h"
#include "wsched/v1/settings.pb.h"

namespace wsched::convert {

v1::WorkspaceClass ToProto(const core::WorkspaceClass& cls);
core::WorkspaceClass FromProto(const v1::WorkspaceClass& cls);

v1::Pool ToProto(const core::NodePool& pool);
core::NodePool FromProto(const v1::Pool& pool);

v1::SpendingLimit ToProto(const core::SpendingLimit& limit);
// An empty calendar_month.time_zone is "UTC".
core::SpendingLimit FromProto(const v1::SpendingLimit& limit);
v1::ProjectSettings ToProto(const core::ProjectSettings& settings);
core::ProjectSettings FromProto(const v1::ProjectSettings& settings);
v1::OrgSettings ToProto(const core::OrgSettings& settings);
core::OrgSettings FromProto(const v1::OrgSettings& settings);

void ToProto(const core::DeviceNode& device, v1::DeviceNode* out);
// A missing type reads as 'c' and missing permissions as "rwm".
core::DeviceNode FromProto(const v1::DeviceNode& device);

v1::NodeInfo ToProto(const core::NodeInfo& node);
core::NodeInfo FromProto(const v1::NodeInfo& node);
v1::CdiMode ToProto(core::CdiMode mode);
core::CdiMode FromProto(v1::CdiMode mode);
v1::NodeCdi ToProto(const core::NodeCdi& cdi);
core::NodeCdi FromProto(const v1::NodeCdi& cdi);

// A placed workspace's hand-off into its answer: `gpus` and `device_spec`
// (always set, if empty). Built straight from the core type, on the hot path.
void ToProto(const core::HandOff& hand_off, v1::Workspace* out);

}  // namespace wsched::convert

#endif  // WSCHED_SERVER_CONVERT_CONVERT_H_
