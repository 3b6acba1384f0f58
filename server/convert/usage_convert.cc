#include "server/convert/usage_convert.h"

#include <google/protobuf/util/time_util.h>

namespace wsched::convert {
namespace {

google::protobuf::Timestamp Timestamp(absl::Time time) {
  return google::protobuf::util::TimeUtil::MicrosecondsToTimestamp(absl::ToUnixMicros(time));
}

void ToProto(const core::UsageFigures& figures, v1::UsageFigures* out) {
  out->set_duration_micros(figures.duration_micros);
  out->set_gpu_seconds(figures.gpu_seconds);
  out->set_cpu_millicore_seconds(figures.cpu_millicore_seconds);
  out->set_memory_byte_seconds(figures.memory_byte_seconds);
}

}  // namespace

v1::UsageEndReason ToProto(const std::optional<core::EndReason>& reason) {
  if (!reason) return v1::USAGE_END_REASON_UNSPECIFIED;
  switch (*reason) {
    case core::EndReason::kStopped: return v1::USAGE_END_REASON_STOPPED;
    case core::EndReason::kLost: return v1::USAGE_END_REASON_LOST;
    case core::EndReason::kNodeRemoved: return v1::USAGE_END_REASON_NODE_REMOVED;
    case core::EndReason::kIdle: return v1::USAGE_END_REASON_IDLE;
    case core::EndReason::kBudget: return v1::USAGE_END_REASON_BUDGET;
  }
  return v1::USAGE_END_REASON_UNSPECIFIED;
}

v1::UsageRecord ToProto(const core::UsageRecord& record) {
  v1::UsageRecord out;
  out.set_workspace_id(record.workspace_id);
  out.set_org_id(record.org_id);
  out.set_project_id(record.project_id);
  out.set_user_id(record.user_id);
  out.set_class_id(record.class_id);
  out.set_pool(record.pool);
  out.set_node_name(record.node_name);
  out.set_gpu_count(record.gpu_count);
  for (const std::string& model : record.gpu_models) out.add_gpu_models(model);
  out.set_mig_profile(record.mig_profile);
  out.set_mig_compute_slices(record.mig_compute_slices);
  out.set_cpu_millis(record.cpu_millis);
  out.set_memory_bytes(record.memory_bytes);
  *out.mutable_start_time() = Timestamp(record.started_at);
  if (record.ended_at) *out.mutable_end_time() = Timestamp(*record.ended_at);
  out.set_end_reason(ToProto(record.end_reason));
  *out.mutable_counted_start_time() = Timestamp(record.counted_from);
  *out.mutable_counted_end_time() = Timestamp(record.counted_until);
  ToProto(record.figures, out.mutable_figures());
  return out;
}

v1::UsageSummaryRow ToProto(const core::UsageSummaryRow& row) {
  v1::UsageSummaryRow out;
  *out.mutable_bucket_start_time() = Timestamp(row.bucket_start);
  *out.mutable_bucket_end_time() = Timestamp(row.bucket_end);
  out.set_org_id(row.org_id);
  out.set_project_id(row.project_id);
  out.set_class_id(row.class_id);
  ToProto(row.figures, out.mutable_figures());
  out.set_workspace_count(row.workspaces);
  return out;
}

std::optional<core::UsageGroup> FromProto(v1::UsageGroupBy group) {
  switch (group) {
    case v1::USAGE_GROUP_BY_ORG: return core::UsageGroup::kOrg;
    case v1::USAGE_GROUP_BY_PROJECT: return core::UsageGroup::kProject;
    case v1::USAGE_GROUP_BY_CLASS: return core::UsageGroup::kClass;
    default: return std::nullopt;
  }
}

std::optional<core::UsageBucket> FromProto(v1::UsageBucket bucket) {
  switch (bucket) {
    case v1::USAGE_BUCKET_UNSPECIFIED: return core::UsageBucket::kNone;
    case v1::USAGE_BUCKET_HOUR: return core::UsageBucket::kHour;
    case v1::USAGE_BUCKET_DAY: return core::UsageBucket::kDay;
    case v1::USAGE_BUCKET_MONTH: return core::UsageBucket::kMonth;
    default: return std::nullopt;
  }
}

}  // namespace wsched::convert
