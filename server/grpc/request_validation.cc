#include "server/grpc/request_validation.h"

#include <functional>
#include <set>

#include <google/protobuf/descriptor.h>
#include <google/protobuf/util/time_util.h>

#include "absl/algorithm/container.h"
#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "server/grpc/method_coverage.h"
#include "server/catalog/validate.h"
#include "server/convert/convert.h"
#include "server/core/error_reason.h"
#include "server/core/node_validation.h"
#include "server/core/settings.h"
#include "server/core/usage.h"
#include "server/core/validation.h"
#include "server/grpc/request_checks.h"

namespace wsched::grpc_api {
namespace {

using google::protobuf::RepeatedPtrField;

#define WSCHED_CHECK(expr)                   \
  do {                                       \
    if (absl::Status s_ = (expr); !s_.ok()) { \
      return s_;                             \
    }                                        \
  } while (false)

absl::Status Invalid(const std::string& field, absl::string_view rule) {
  return core::InvalidFieldError(field, rule);
}

absl::Status CheckText(const std::string& value, const std::string& field, size_t max) {
  if (!core::IsBoundedText(value, max)) {
    return Invalid(field, absl::StrCat("at most ", max, " printable characters"));
  }
  return absl::OkStatus();
}

absl::Status CheckNodeName(const std::string& name, const std::string& field) {
  if (!core::IsDnsSubdomain(name)) return Invalid(field, "must be a node name (DNS subdomain)");
  return absl::OkStatus();
}

absl::Status CheckPoolId(const std::string& pool, const std::string& field) {
  if (!core::IsDnsLabel(pool)) return Invalid(field, "must be a pool id (a DNS label)");
  return absl::OkStatus();
}

absl::Status CheckOptionalClassId(const std::string& value, const char* field) {
  return value.empty() ? absl::OkStatus() : CheckClassId(value, field);
}

template <typename Enum>
absl::Status CheckEnum(int value, bool (*is_valid)(int), const std::string& field) {
  if (!is_valid(value)) return Invalid(field, absl::StrCat("unknown value ", value));
  return absl::OkStatus();
}

// Output-only strings a client may echo back from a response: ignored, but
// bounded like everything else.
absl::Status CheckEchoed(const std::string& value, const std::string& field) {
  if (value.size() > kMaxValidatedStringBytes) {
    return Invalid(field, absl::StrCat("at most ", kMaxValidatedStringBytes, " bytes"));
  }
  return absl::OkStatus();
}

absl::Status CheckDevices(const RepeatedPtrField<v1::DeviceNode>& devices, const std::string& field,
                          int max) {
  if (devices.size() > max) return Invalid(field, absl::StrCat("at most ", max, " entries"));
  for (int i = 0; i < devices.size(); ++i) {
    const v1::DeviceNode& device = devices[i];
    std::string at = absl::StrCat(field, "[", i, "]");
    WSCHED_CHECK(CheckText(device.path(), at + ".path", 128));
    if (device.type().size() > 1) return Invalid(at + ".type", "must be \"c\" or \"b\"");
    if (device.permissions().size() > 3) {
      return Invalid(at + ".permissions", "must combine r, w and m");
    }
  }
  return absl::OkStatus();
}

// A Timestamp protobuf can hold: 0001-01-01 .. 9999-12-31, nanos
// 0..999999999. Outside it the database refuses the value late, as an
// internal error, instead of the caller's field.
absl::Status CheckProtoTimestamp(const google::protobuf::Timestamp& t, const std::string& field) {
  using google::protobuf::util::TimeUtil;
  if (t.seconds() < TimeUtil::kTimestampMinSeconds || t.seconds() > TimeUtil::kTimestampMaxSeconds ||
      t.nanos() < 0 || t.nanos() > 999'999'999) {
    return Invalid(field, "must be a time between 0001-01-01 and 9999-12-31");
  }
  return absl::OkStatus();
}

// A Duration protobuf can hold (about 10,000 years), and not negative.
absl::Status CheckProtoDuration(const google::protobuf::Duration& d, const std::string& field) {
  using google::protobuf::util::TimeUtil;
  if (d.seconds() < 0 || d.nanos() < 0 || d.seconds() > TimeUtil::kDurationMaxSeconds ||
      d.nanos() > 999'999'999) {
    return Invalid(field, "must be a duration between 0 and 315576000000s");
  }
  return absl::OkStatus();
}

absl::Status CheckClass(const v1::WorkspaceClass& cls) {
  WSCHED_CHECK(CheckClassId(cls.id(), "class.id"));
  WSCHED_CHECK(CheckText(cls.display_name(), "class.display_name", catalog::kMaxDisplayNameBytes));
  WSCHED_CHECK(CheckText(cls.description(), "class.description", catalog::kMaxDescriptionBytes));
  WSCHED_CHECK(CheckText(cls.category(), "class.category", catalog::kMaxCategoryBytes));
  const auto& models = cls.gpu().models();
  if (models.size() > static_cast<int>(catalog::kMaxListEntries)) {
    return Invalid("class.gpu.models", absl::StrCat("at most ", catalog::kMaxListEntries));
  }
  for (int i = 0; i < models.size(); ++i) {
    WSCHED_CHECK(CheckText(models[i], absl::StrCat("class.gpu.models[", i, "]"),
                           catalog::kMaxModelNameBytes));
  }
  const auto& profiles = cls.gpu().mig_profiles();
  if (profiles.size() > static_cast<int>(catalog::kMaxListEntries)) {
    return Invalid("class.gpu.mig_profiles", absl::StrCat("at most ", catalog::kMaxListEntries));
  }
  for (int i = 0; i < profiles.size(); ++i) {
    WSCHED_CHECK(CheckText(profiles[i], absl::StrCat("class.gpu.mig_profiles[", i, "]"), 64));
  }
  WSCHED_CHECK(CheckEnum<v1::Isolation>(cls.gpu().isolation(), v1::Isolation_IsValid,
                                        "class.gpu.isolation"));
  WSCHED_CHECK(
      CheckEnum<v1::GpuLinks>(cls.gpu().links(), v1::GpuLinks_IsValid, "class.gpu.links"));
  WSCHED_CHECK(CheckDevices(cls.devices(), "class.devices",
                            static_cast<int>(catalog::kMaxListEntries)));
  if (cls.pool_selector_size() > static_cast<int>(catalog::kMaxListEntries)) {
    return Invalid("class.pool_selector", absl::StrCat("at most ", catalog::kMaxListEntries));
  }
  for (const auto& [key, value] : cls.pool_selector()) {
    WSCHED_CHECK(CheckText(key, "class.pool_selector key", 253));
    WSCHED_CHECK(CheckText(value, absl::StrCat("class.pool_selector[", key, "]"), 63));
  }
  if (cls.has_idle()) {
    WSCHED_CHECK(CheckEnum<v1::IdlePolicy::Action>(cls.idle().action(), v1::IdlePolicy::Action_IsValid,
                                                   "class.idle.action"));
    WSCHED_CHECK(CheckProtoDuration(cls.idle().idle_for(), "class.idle.idle_for"));
    WSCHED_CHECK(CheckProtoDuration(cls.idle().warn_before(), "class.idle.warn_before"));
  }
  return absl::OkStatus();
}

absl::Status CheckNodeProto(const v1::NodeInfo& node) {
  // The core rules cover what the server keeps; these cover the rest of
  // the message (output-only echoes, the proto's string-typed enums).
  for (int i = 0; i < node.gpus_size() && i < core::kMaxGpusPerNode; ++i) {
    const v1::Gpu& gpu = node.gpus(i);
    std::string at = absl::StrCat("node.gpus[", i, "]");
    WSCHED_CHECK(CheckEnum<v1::GpuHealth>(gpu.health(), v1::GpuHealth_IsValid, at + ".health"));
    WSCHED_CHECK(CheckEchoed(gpu.passthrough_unsafe_reason(), at + ".passthrough_unsafe_reason"));
    WSCHED_CHECK(CheckEchoed(gpu.held_by_workspace(), at + ".held_by_workspace"));
    WSCHED_CHECK(CheckEchoed(gpu.binding_problem(), at + ".binding_problem"));
    WSCHED_CHECK(CheckText(gpu.health_reason(), at + ".health_reason", 256));
  }
  // Echoed times are ignored, but converting them is not: every GPU's,
  // past the limit too, so they must be times protobuf can hold.
  for (int i = 0; i < node.gpus_size(); ++i) {
    const v1::Gpu& gpu = node.gpus(i);
    std::string at = absl::StrCat("node.gpus[", i, "]");
    if (gpu.has_unhealthy_since()) {
      WSCHED_CHECK(CheckProtoTimestamp(gpu.unhealthy_since(), at + ".unhealthy_since"));
    }
    if (gpu.has_reported_healthy_since()) {
      WSCHED_CHECK(
          CheckProtoTimestamp(gpu.reported_healthy_since(), at + ".reported_healthy_since"));
    }
  }
  if (node.control_devices_size() <= core::kMaxControlDevices) {
    WSCHED_CHECK(CheckDevices(node.control_devices(), "node.control_devices",
                              core::kMaxControlDevices));
  }
  return core::ValidateNodeInfo(convert::FromProto(node));
}

}  // namespace

// --- ClassService -------------------------------------------------------------

absl::Status ValidateRequest(const v1::ListClassesRequest&) { return absl::OkStatus(); }

absl::Status ValidateRequest(const v1::GetClassRequest& request) {
  return CheckClassId(request.id(), "id");
}

absl::Status ValidateRequest(const v1::UpdateClassRequest& request) {
  WSCHED_CHECK(CheckClass(request.class_()));
  if (request.expected_version() < 0) {
    return Invalid("expected_version", "must be >= 0 (0 = create)");
  }
  return absl::OkStatus();
}

absl::Status ValidateRequest(const v1::DeleteClassRequest& request) {
  WSCHED_CHECK(CheckClassId(request.id(), "id"));
  if (request.expected_version() < 0) {
    return Invalid("expected_version", "must be >= 0 (0 = any version)");
  }
  return absl::OkStatus();
}

absl::Status ValidateRequest(const v1::ApplyCatalogRequest& request) {
  if (request.yaml().size() > kMaxCatalogBytes) {
    return Invalid("yaml", absl::StrCat("at most ", kMaxCatalogBytes, " bytes"));
  }
  for (const auto& [pool, version] : request.expected_pool_versions()) {
    const std::string field = absl::StrCat("expected_pool_versions[", pool, "]");
    WSCHED_CHECK(CheckPoolId(pool, field));
    if (version < 0) return Invalid(field, "must be >= 0 (0 = unchecked)");
  }
  return absl::OkStatus();
}

absl::Status ValidateRequest(const v1::GetCatalogRequest&) { return absl::OkStatus(); }

// --- SettingsService ----------------------------------------------------------

// A spending limit's own rules (core::SpendingLimitProblems); whether a
// project's fits inside its org's is the settings operation's check.
absl::Status CheckSpendingLimit(const v1::SpendingLimit& limit, const std::string& field) {
  if (limit.period().kind_case() == v1::SpendingPeriod::KIND_NOT_SET) {
    return Invalid(field + ".period", "required: calendar_month or rolling");
  }
  std::vector<std::string> problems = core::SpendingLimitProblems(convert::FromProto(limit), field);
  if (!problems.empty()) return core::InvalidFieldLinesError(problems);
  return absl::OkStatus();
}

absl::Status ValidateRequest(const v1::GetProjectSettingsRequest& request) {
  return CheckId(request.project_id(), "project_id");
}

absl::Status ValidateRequest(const v1::SetProjectSettingsRequest& request) {
  const v1::ProjectSettings& in = request.settings();
  WSCHED_CHECK(CheckId(in.project_id(), "settings.project_id"));
  WSCHED_CHECK(CheckId(in.org_id(), "settings.org_id"));
  WSCHED_CHECK(CheckOptionalClassId(in.default_class(), "settings.default_class"));
  WSCHED_CHECK(CheckClassIdList(in.denied_classes(), "settings.denied_classes"));
  if (in.has_spending_limit()) {
    WSCHED_CHECK(CheckSpendingLimit(in.spending_limit(), "settings.spending_limit"));
  }
  if (request.expected_version() < 0) {
    return Invalid("expected_version", "must be >= 0 (0 = unconditional)");
  }
  return absl::OkStatus();
}

absl::Status ValidateRequest(const v1::GetOrgSettingsRequest& request) {
  return CheckId(request.org_id(), "org_id");
}

absl::Status ValidateRequest(const v1::SetOrgSettingsRequest& request) {
  const v1::OrgSettings& in = request.settings();
  WSCHED_CHECK(CheckId(in.org_id(), "settings.org_id"));
  WSCHED_CHECK(CheckOptionalClassId(in.default_class(), "settings.default_class"));
  WSCHED_CHECK(CheckClassIdList(in.allowed_classes(), "settings.allowed_classes"));
  if (in.gpu_quota() < core::kUnlimitedGpuQuota) return Invalid("settings.gpu_quota", "must be >= 0, or -1 for unlimited");
  if (in.has_spending_limit()) {
    WSCHED_CHECK(CheckSpendingLimit(in.spending_limit(), "settings.spending_limit"));
  }
  if (request.expected_version() < 0) {
    return Invalid("expected_version", "must be >= 0 (0 = unconditional)");
  }
  return absl::OkStatus();
}

absl::Status ValidateRequest(const v1::ResolveClassRequest& request) {
  WSCHED_CHECK(CheckId(request.org_id(), "org_id"));
  WSCHED_CHECK(CheckId(request.project_id(), "project_id"));
  WSCHED_CHECK(CheckOptionalClassId(request.requested_class(), "requested_class"));
  return CheckOptionalClassId(request.previous_class(), "previous_class");
}

// --- InventoryService ---------------------------------------------------------

absl::Status ValidateRequest(const v1::RegisterNodeRequest& request) {
  const std::string& digest = request.node_token_sha256();
  if (!digest.empty() &&
      (digest.size() != 64 || !absl::c_all_of(digest, [](char c) {
         return absl::ascii_isdigit(c) || (c >= 'a' && c <= 'f');
       }))) {
    return Invalid("node_token_sha256", "must be 64 lower-case hex digits (a SHA-256)");
  }
  return CheckNodeProto(request.node());
}

absl::Status ValidateRequest(const v1::HeartbeatRequest& request) {
  WSCHED_CHECK(CheckNodeName(request.node_name(), "node_name"));
  if (request.gpu_usage_size() > core::kMaxGpusPerNode ||
      request.gpu_health_by_uuid_size() > core::kMaxGpusPerNode ||
      request.gpu_health_reason_by_uuid_size() > core::kMaxGpusPerNode) {
    return Invalid("gpu_usage, gpu_health_by_uuid, gpu_health_reason_by_uuid",
                   absl::StrCat("at most ", core::kMaxGpusPerNode, " entries"));
  }
  for (const auto& [uuid, reason] : request.gpu_health_reason_by_uuid()) {
    WSCHED_CHECK(CheckText(uuid, "gpu_health_reason_by_uuid key", 128));
    WSCHED_CHECK(CheckText(reason, absl::StrCat("gpu_health_reason_by_uuid[", uuid, "]"), 256));
  }
  for (const auto& [uuid, health] : request.gpu_health_by_uuid()) {
    WSCHED_CHECK(CheckText(uuid, "gpu_health_by_uuid key", 128));
    WSCHED_CHECK(CheckEnum<v1::GpuHealth>(health, v1::GpuHealth_IsValid,
                                          absl::StrCat("gpu_health_by_uuid[", uuid, "]")));
  }
  for (int i = 0; i < request.gpu_usage_size(); ++i) {
    const auto& usage = request.gpu_usage(i);
    std::string at = absl::StrCat("gpu_usage[", i, "]");
    WSCHED_CHECK(CheckText(usage.uuid(), at + ".uuid", 128));
    if (usage.utilization_percent() < 0 || usage.utilization_percent() > 100 ||
        usage.memory_used_bytes() < 0) {
      return Invalid(at, "utilization_percent must be 0..100 and memory_used_bytes >= 0");
    }
  }
  WSCHED_CHECK(CheckText(request.kernel_version(), "kernel_version", 128));
  return CheckText(request.driver_version(), "driver_version", 64);
}

absl::Status ValidateRequest(const v1::NodeNameRequest& request) {
  WSCHED_CHECK(CheckNodeName(request.node_name(), "node_name"));
  if (request.expected_version() < 0) {
    return Invalid("expected_version", "must be >= 0 (0 = unconditional)");
  }
  return absl::OkStatus();
}

absl::Status ValidateRequest(const v1::ListNodesRequest& request) {
  return request.pool().empty() ? absl::OkStatus() : CheckPoolId(request.pool(), "pool");
}

absl::Status ValidateRequest(const v1::WatchNodesRequest &request) {
  const v1::NodeWatchFilter &filter = request.filter();
  if (!filter.pool().empty())
    WSCHED_CHECK(CheckPoolId(filter.pool(), "filter.pool"));
  if (!filter.node_name().empty()) {
    WSCHED_CHECK(CheckNodeName(filter.node_name(), "filter.node_name"));
  }
  if (request.resume_version() < 0) {
    return Invalid("resume_version",
                   "must be 0 (list first) or a version a stream sent");
  }
  return absl::OkStatus();
}

absl::Status ValidateRequest(const v1::ListPoolsRequest&) { return absl::OkStatus(); }
absl::Status ValidateRequest(const v1::ListDriverWorkRequest&) { return absl::OkStatus(); }

absl::Status ValidateRequest(const v1::ListDriverRolloutsRequest& request) {
  return request.pool().empty() ? absl::OkStatus() : CheckPoolId(request.pool(), "pool");
}

absl::Status ValidateRequest(const v1::SetDriverRolloutPausedRequest& request) {
  WSCHED_CHECK(CheckPoolId(request.pool(), "pool"));
  if (!request.paused() && !request.reason().empty()) {
    return Invalid("reason", "must be empty when resuming (paused false)");
  }
  return CheckText(request.reason(), "reason", 512);
}

absl::Status ValidateRequest(const v1::ReportDriverInstallRequest& request) {
  WSCHED_CHECK(CheckNodeName(request.node_name(), "node_name"));
  if (request.kernel_version().empty() || !core::IsBoundedText(request.kernel_version(), 128)) {
    return Invalid("kernel_version", "is required (<= 128 printable characters)");
  }
  WSCHED_CHECK(CheckText(request.detail(), "detail", 1024));
  WSCHED_CHECK(CheckText(request.log_tail(), "log_tail", 2048));
  if (!v1::DriverInstallOutcome_IsValid(request.outcome())) {
    return Invalid("outcome", "must be a DriverInstallOutcome");
  }
  if (!v1::DriverCache_IsValid(request.cache())) return Invalid("cache", "must be a DriverCache");
  if (request.has_duration()) {
    const auto& d = request.duration();
    // The install's own range first (its message says what a report may
    // carry), then what protobuf can hold (nanos).
    if (d.seconds() < 0 || d.seconds() > 7 * 24 * 3600) {
      return Invalid("duration", "must be between 0 and 7 days");
    }
    WSCHED_CHECK(CheckProtoDuration(d, "duration"));
    if (request.outcome() == v1::DRIVER_INSTALL_OUTCOME_STARTED) {
      return Invalid("duration", "must be unset when outcome is STARTED");
    }
  }
  return absl::OkStatus();
}

absl::Status ValidateRequest(const v1::RotateNodeCredentialRequest& request) {
  return CheckNodeName(request.node_name(), "node_name");
}

absl::Status ValidateRequest(const v1::RevokeNodeCredentialRequest& request) {
  return CheckNodeName(request.node_name(), "node_name");
}

absl::Status ValidateRequest(const v1::ClearGpuHealthRequest& request) {
  WSCHED_CHECK(CheckNodeName(request.node_name(), "node_name"));
  if (request.gpu_uuid().empty() || !core::IsBoundedText(request.gpu_uuid(), 128)) {
    return Invalid("gpu_uuid", "is required (<= 128 printable characters)");
  }
  return absl::OkStatus();
}

// --- PlacementService ---------------------------------------------------------

absl::Status ValidateRequest(const v1::PlaceWorkspaceRequest& request) {
  WSCHED_CHECK(CheckId(request.workspace_id(), "workspace_id"));
  WSCHED_CHECK(CheckId(request.org_id(), "org_id"));
  WSCHED_CHECK(CheckId(request.project_id(), "project_id"));
  WSCHED_CHECK(CheckId(request.user_id(), "user_id"));
  WSCHED_CHECK(CheckOptionalClassId(request.class_id(), "class_id"));
  if (request.priority() < 0 || request.priority() > 100) {
    return Invalid("priority", "must be 0..100");
  }
  // A token is a few hundred bytes; more is not one wsched issued.
  if (request.quote_token().size() > 2048) return Invalid("quote_token", "must be <= 2048 bytes");
  if (request.validate_only() && !request.quote_token().empty()) {
    return Invalid("quote_token", "must be empty with validate_only (a dry run places nothing)");
  }
  return absl::OkStatus();
}

absl::Status ValidateRequest(const v1::StopWorkspaceRequest& request) {
  return CheckId(request.workspace_id(), "workspace_id");
}

// Whether the time is believed (not before the placement, not ahead of
// the clock) needs the record: the handler judges it (core/ready_report.h).
absl::Status ValidateRequest(const v1::ReportWorkspaceReadyRequest& request) {
  WSCHED_CHECK(CheckId(request.workspace_id(), "workspace_id"));
  if (request.has_ready_time()) WSCHED_CHECK(CheckProtoTimestamp(request.ready_time(), "ready_time"));
  return absl::OkStatus();
}

absl::Status ValidateRequest(const v1::GetWorkspaceRequest& request) {
  WSCHED_CHECK(CheckId(request.workspace_id(), "workspace_id"));
  return CheckEnum<v1::WorkspaceView>(request.view(), v1::WorkspaceView_IsValid, "view");
}

absl::Status ValidateRequest(const v1::ListWorkspacesRequest& request) {
  if (!request.node_name().empty()) WSCHED_CHECK(CheckNodeName(request.node_name(), "node_name"));
  if (!request.pool().empty()) WSCHED_CHECK(CheckPoolId(request.pool(), "pool"));
  return CheckEnum<v1::WorkspaceState>(request.state(), v1::WorkspaceState_IsValid, "state");
}

absl::Status ValidateRequest(const v1::WatchWorkspaceRequest& request) {
  return CheckId(request.workspace_id(), "workspace_id");
}

absl::Status ValidateRequest(const v1::WatchWorkspacesRequest& request) {
  const v1::WorkspaceWatchFilter& filter = request.filter();
  if (!filter.org_id().empty()) WSCHED_CHECK(CheckId(filter.org_id(), "filter.org_id"));
  if (!filter.project_id().empty()) WSCHED_CHECK(CheckId(filter.project_id(), "filter.project_id"));
  WSCHED_CHECK(CheckOptionalClassId(filter.class_id(), "filter.class_id"));
  if (!filter.pool().empty()) WSCHED_CHECK(CheckPoolId(filter.pool(), "filter.pool"));
  if (!filter.node_name().empty())
    WSCHED_CHECK(CheckNodeName(filter.node_name(), "filter.node_name"));
  if (filter.states_size() > 4) return Invalid("filter.states", "at most 4 (one of each state)");
  for (int i = 0; i < filter.states_size(); ++i) {
    const std::string field = absl::StrCat("filter.states[", i, "]");
    WSCHED_CHECK(CheckEnum<v1::WorkspaceState>(
        filter.states(i), v1::WorkspaceState_IsValid, field));
    if (filter.states(i) == v1::WORKSPACE_STATE_UNSPECIFIED)
      return Invalid(field, "must name a state");
  }
  if (request.resume_version() < 0) {
    return Invalid("resume_version", "must be 0 (list first) or a version a stream sent");
  }
  return absl::OkStatus();
}

// --- ScalingService -----------------------------------------------------------

absl::Status ValidateRequest(const v1::GetScalingStateRequest&) { return absl::OkStatus(); }

absl::Status ValidateRequest(const v1::WatchScalingSignalsRequest& request) {
  if (request.pools_size() > kMaxValidatedListEntries) {
    return Invalid("pools", absl::StrCat("at most ", kMaxValidatedListEntries));
  }
  for (int i = 0; i < request.pools_size(); ++i) {
    WSCHED_CHECK(CheckPoolId(request.pools(i), absl::StrCat("pools[", i, "]")));
  }
  return absl::OkStatus();
}

absl::Status ValidateRequest(const v1::ActuatorReport& request) {
  WSCHED_CHECK(CheckPoolId(request.pool(), "pool"));
  switch (request.state()) {
    case v1::ActuatorReport::INSTANCE_STATE_CREATING:
    case v1::ActuatorReport::INSTANCE_STATE_RUNNING:
    case v1::ActuatorReport::INSTANCE_STATE_FAILED:
    case v1::ActuatorReport::INSTANCE_STATE_OUT_OF_RESOURCES:
      break;
    default:
      return Invalid("state", "must be CREATING, RUNNING, FAILED or OUT_OF_RESOURCES");
  }
  if (request.instances() < 0 || request.generation() < 0) {
    return Invalid("instances, generation", "must be >= 0");
  }
  return CheckText(request.detail(), "detail", 1024);
}

absl::Status ValidateRequest(const v1::ListAuditRecordsRequest& request) {
  WSCHED_CHECK(CheckText(request.principal(), "principal", 255));
  WSCHED_CHECK(CheckText(request.object(), "object", 512));
  if (request.has_start_time()) WSCHED_CHECK(CheckProtoTimestamp(request.start_time(), "start_time"));
  if (request.has_end_time()) WSCHED_CHECK(CheckProtoTimestamp(request.end_time(), "end_time"));
  if (request.has_start_time() && request.has_end_time() &&
      google::protobuf::util::TimeUtil::TimestampToMicroseconds(request.end_time()) <=
          google::protobuf::util::TimeUtil::TimestampToMicroseconds(request.start_time())) {
    return Invalid("end_time", "must be after start_time");
  }
  return absl::OkStatus();
}

// --- UsageService ---------------------------------------------------------------

namespace {

// Within 1970-01-01 .. 9999-12-31 (no usage is older than the epoch),
// nanos 0..999999999 (counted to the microsecond).
absl::Status CheckTimestamp(const google::protobuf::Timestamp& t, const char* field) {
  using google::protobuf::util::TimeUtil;
  if (t.seconds() < 0 || t.seconds() > TimeUtil::kTimestampMaxSeconds || t.nanos() < 0 ||
      t.nanos() > 999'999'999) {
    return Invalid(field, "must be a time between 1970-01-01 and 9999-12-31");
  }
  return absl::OkStatus();
}

// The filters and range ListUsage and SummarizeUsage share.
template <typename Request>
absl::Status CheckUsageFilter(const Request& request) {
  if (!request.org_id().empty()) WSCHED_CHECK(CheckId(request.org_id(), "org_id"));
  if (!request.project_id().empty()) WSCHED_CHECK(CheckId(request.project_id(), "project_id"));
  WSCHED_CHECK(CheckOptionalClassId(request.class_id(), "class_id"));
  if (request.has_start_time()) WSCHED_CHECK(CheckTimestamp(request.start_time(), "start_time"));
  if (request.has_end_time()) WSCHED_CHECK(CheckTimestamp(request.end_time(), "end_time"));
  if (request.has_start_time() && request.has_end_time() &&
      google::protobuf::util::TimeUtil::TimestampToMicroseconds(request.end_time()) <=
          google::protobuf::util::TimeUtil::TimestampToMicroseconds(request.start_time())) {
    return Invalid("end_time", "must be after start_time");
  }
  return absl::OkStatus();
}

// An Area/Location name or UTC (core::TimeZoneNameProblem); whether the
// database knows it is the handler's check.
absl::Status CheckTimeZoneName(const std::string& zone) {
  if (zone.empty()) return absl::OkStatus();  // UTC.
  if (std::optional<std::string> problem = core::TimeZoneNameProblem(zone)) {
    return Invalid("time_zone", *problem);
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateRequest(const v1::ListUsageRequest& request) {
  return CheckUsageFilter(request);
}

absl::Status ValidateRequest(const v1::GetSpendingForecastRequest& request) {
  WSCHED_CHECK(CheckId(request.org_id(), "org_id"));
  if (!request.project_id().empty()) WSCHED_CHECK(CheckId(request.project_id(), "project_id"));
  return absl::OkStatus();
}

absl::Status ValidateRequest(const v1::SummarizeUsageRequest& request) {
  if (!request.has_start_time()) return Invalid("start_time", "is required");
  if (!request.has_end_time()) return Invalid("end_time", "is required");
  WSCHED_CHECK(CheckUsageFilter(request));
  std::set<int> groups;
  for (int i = 0; i < request.group_by_size(); ++i) {
    const std::string field = absl::StrCat("group_by[", i, "]");
    const int group = request.group_by(i);
    if (!v1::UsageGroupBy_IsValid(group) || group == v1::USAGE_GROUP_BY_UNSPECIFIED) {
      return Invalid(field, "must be USAGE_GROUP_BY_ORG, _PROJECT or _CLASS");
    }
    if (!groups.insert(group).second) return Invalid(field, "names a group twice");
  }
  WSCHED_CHECK(CheckEnum<v1::UsageBucket>(request.bucket(), v1::UsageBucket_IsValid, "bucket"));
  return CheckTimeZoneName(request.time_zone());
}

// --- by message type ------------------------------------------------------------

namespace {

using AnyValidator = std::function<absl::Status(const google::protobuf::Message&)>;

template <typename T>
std::pair<std::string, AnyValidator> For() {
  return {T::descriptor()->full_name(), [](const google::protobuf::Message& message) {
            if (const T* typed = google::protobuf::DynamicCastToGenerated<T>(&message)) {
              return ValidateRequest(*typed);
            }
            T copy;  // A DynamicMessage of the same type (reflection users).
            copy.CopyFrom(message);
            return ValidateRequest(copy);
          }};
}

const absl::flat_hash_map<std::string, AnyValidator>& Validators() {
  static const auto *validators =
      new absl::flat_hash_map<std::string, AnyValidator>{
          For<v1::ListClassesRequest>(),
          For<v1::GetClassRequest>(),
          For<v1::UpdateClassRequest>(),
          For<v1::DeleteClassRequest>(),
          For<v1::ApplyCatalogRequest>(),
          For<v1::GetCatalogRequest>(),
          For<v1::GetProjectSettingsRequest>(),
          For<v1::SetProjectSettingsRequest>(),
          For<v1::GetOrgSettingsRequest>(),
          For<v1::SetOrgSettingsRequest>(),
          For<v1::ResolveClassRequest>(),
          For<v1::RegisterNodeRequest>(),
          For<v1::HeartbeatRequest>(),
          For<v1::NodeNameRequest>(),
          For<v1::ListNodesRequest>(),
          For<v1::WatchNodesRequest>(),
          For<v1::ListPoolsRequest>(),
          For<v1::ListDriverWorkRequest>(),
          For<v1::ReportDriverInstallRequest>(),
          For<v1::ListDriverRolloutsRequest>(),
          For<v1::SetDriverRolloutPausedRequest>(),
          For<v1::ClearGpuHealthRequest>(),
          For<v1::RotateNodeCredentialRequest>(),
          For<v1::RevokeNodeCredentialRequest>(),
          For<v1::PlaceWorkspaceRequest>(),
          For<v1::StopWorkspaceRequest>(),
          For<v1::ReportWorkspaceReadyRequest>(),
          For<v1::GetWorkspaceRequest>(),
          For<v1::ListWorkspacesRequest>(),
          For<v1::WatchWorkspaceRequest>(),
          For<v1::WatchWorkspacesRequest>(),
          For<v1::GetScalingStateRequest>(),
          For<v1::WatchScalingSignalsRequest>(),
          For<v1::ActuatorReport>(),
          For<v1::ListAuditRecordsRequest>(),
          For<v1::ListUsageRequest>(),
          For<v1::SummarizeUsageRequest>(),
          For<v1::GetSpendingForecastRequest>(),
      };
  return *validators;
}

}  // namespace

absl::Status ValidateAnyRequest(const google::protobuf::Message& request) {
  const std::string& type = request.GetDescriptor()->full_name();
  auto it = Validators().find(type);
  if (it == Validators().end()) {
    return absl::UnimplementedError(absl::StrCat("no validator for ", type));
  }
  return it->second(request);
}

absl::Status CheckValidatorsCover(const std::vector<std::string>& service_names) {
  return CheckEveryMethod(
      service_names, "request validation",
      [](const std::string&, const google::protobuf::MethodDescriptor& method) -> std::string {
        const std::string& type = method.input_type()->full_name();
        if (Validators().contains(type)) return "";
        return absl::StrCat(method.full_name(), " (", type, ")");
      });
}

}  // namespace wsched::grpc_api
