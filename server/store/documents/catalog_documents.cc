// Classes, pools and driver-policy entries (documents.h). A class's version
// is a column of its own (version 1 documents also held a copy, not read).
#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "server/core/driver_install.h"
#include "server/core/vfio_binding.h"
#include "server/store/documents/device_node.h"
#include "server/store/documents/documents.h"
#include "server/store/documents/enums.h"
#include "server/store/documents/fields.h"

namespace wsched::store::documents {
namespace {

// Pools: times in seconds, with the defaults rows had before the fields existed.
constexpr int64_t kDefaultScaleDownSeconds = 600;
constexpr int64_t kDefaultProvisionSeconds = 900;

// Days are 0 (Monday) to 6, times minutes after local midnight: the
// core's own numbers.
nlohmann::json WindowJson(const core::TimeWindow& when) {
  nlohmann::json days = nlohmann::json::array();
  for (absl::Weekday day : when.days) days.push_back(static_cast<int>(day));
  return {{"days", days}, {"start_minute", when.start_minute}, {"end_minute", when.end_minute}};
}

core::TimeWindow ReadWindow(Fields& w) {
  core::TimeWindow when;
  if (const nlohmann::json* days = w.Raw("days"); days != nullptr && days->is_array()) {
    for (const auto& day : *days) {
      if (day.is_number_integer() && day >= 0 && day <= 6) {
        when.days.push_back(static_cast<absl::Weekday>(day.get<int>()));
      }
    }
  }
  when.start_minute = w.Int("start_minute");
  when.end_minute = w.Has("end_minute") ? w.Int("end_minute") : core::kMinutesPerDay;
  return when;
}

// A constant buffer is a plain number.
nlohmann::json WarmBufferJson(const core::WarmBuffer& buffer) {
  if (buffer.is_constant() && buffer.time_zone.empty()) return buffer.default_nodes;
  nlohmann::json windows = nlohmann::json::array();
  for (const auto& w : buffer.windows) {
    nlohmann::json window = WindowJson(w.when);
    window["nodes"] = w.nodes;
    windows.push_back(std::move(window));
  }
  return {{"default", buffer.default_nodes}, {"time_zone", buffer.time_zone}, {"windows", windows}};
}

core::WarmBuffer ReadWarmBuffer(Fields& pool) {
  const nlohmann::json* raw = pool.Raw("warm_buffer");
  if (raw == nullptr) return {};
  if (raw->is_number_integer()) return core::WarmBuffer::Constant(pool.Int("warm_buffer"));
  core::WarmBuffer buffer;
  std::optional<Fields> b = pool.Object("warm_buffer");
  if (!b) return buffer;
  buffer.default_nodes = b->Int("default");
  buffer.time_zone = b->String("time_zone");
  for (Fields& w : b->Objects("windows")) buffer.windows.push_back({ReadWindow(w), w.Int("nodes")});
  return buffer;
}

nlohmann::json ScaleDownScheduleJson(const core::ScaleDownSchedule& schedule) {
  nlohmann::json windows = nlohmann::json::array();
  for (const auto& w : schedule.windows) {
    nlohmann::json window = WindowJson(w.when);
    window["allow"] = w.allow;
    windows.push_back(std::move(window));
  }
  return {{"default", schedule.default_allow}, {"time_zone", schedule.time_zone}, {"windows", windows}};
}

core::ScaleDownSchedule ReadScaleDownSchedule(Fields& pool) {
  core::ScaleDownSchedule schedule;
  std::optional<Fields> s = pool.Object("scale_down_schedule");
  if (!s) return schedule;
  schedule.default_allow = s->Has("default") ? s->Bool("default") : true;
  schedule.time_zone = s->String("time_zone");
  for (Fields& w : s->Objects("windows")) schedule.windows.push_back({ReadWindow(w), w.Bool("allow")});
  return schedule;
}

int64_t Seconds(Fields& pool, const char* key, int64_t fallback) {
  return pool.Has(key) ? pool.Int64(key) : fallback;
}

// Written only when the class has a policy: a class without one (every
// class stored before the field existed) reads as none.
nlohmann::json IdleJson(const core::IdlePolicy& idle) {
  nlohmann::json j = {{"utilization_below_percent", idle.utilization_below_percent},
                      {"for_seconds", absl::ToInt64Seconds(idle.idle_for)},
                      {"action", core::IdleActionName(idle.action)}};
  if (idle.warn_before != absl::ZeroDuration()) {
    j["warn_before_seconds"] = absl::ToInt64Seconds(idle.warn_before);
  }
  return j;
}

std::optional<core::IdlePolicy> ReadIdle(Fields& cls) {
  std::optional<Fields> i = cls.Object("idle");
  if (!i) return std::nullopt;
  core::IdlePolicy idle;
  idle.utilization_below_percent = i->Int("utilization_below_percent");
  idle.idle_for = absl::Seconds(i->Int64("for_seconds"));
  idle.warn_before = absl::Seconds(i->Int64("warn_before_seconds"));
  const std::string action = i->String("action");
  if (std::optional<core::IdleAction> parsed = core::ParseIdleAction(action)) {
    idle.action = *parsed;
  } else {
    i->decoding().Fail(i->PathOf("action"), absl::StrCat("unknown action \"", action, "\""));
  }
  return idle;
}

// Absent (every pool stored before layouts existed): whole GPUs.
core::MigLayout ReadMigLayout(Fields& pool) {
  core::MigLayout layout;
  std::optional<Fields> m = pool.Object("mig");
  if (!m) return layout;
  const std::string kind = m->String("layout");
  if (std::optional<core::MigLayoutKind> parsed = core::ParseMigLayoutKind(kind)) {
    layout.kind = *parsed;
  } else {
    m->decoding().Fail(m->PathOf("layout"), "must be \"whole\", \"fixed\" or \"by_demand\"");
  }
  layout.profiles = m->Strings("profiles");
  return layout;
}

}  // namespace

std::string EncodeClass(const core::WorkspaceClass& cls) {
  const core::ClassResources& r = cls.resources;
  nlohmann::json j = {
      {"id", cls.id},
      {"display_name", cls.display_name},
      {"description", cls.description},
      {"category", cls.category},
      {"resources",
       {{"cpu_request_millis", r.cpu_request_millis},
        {"cpu_limit_millis", r.cpu_limit_millis},
        {"memory_bytes", r.memory_bytes},
        {"ephemeral_storage_bytes", r.ephemeral_storage_bytes},
        {"disk_bytes", r.disk_bytes}}},
      {"gpu",
       {{"count", cls.gpu.count},
        {"models", cls.gpu.models},
        {"isolation", NameOf(IsolationNames(), static_cast<int>(cls.gpu.isolation), 1)},
        {"links", NameOf(GpuLinksNames(), static_cast<int>(cls.gpu.links), 1)}}},
      {"devices", DeviceNodesJson(cls.devices)},
      {"pool_selector", cls.pool_selector},
      {"credits_per_minute_milli", cls.credits_per_minute_milli},
      {"is_default", cls.is_default},
      {"deprecated", cls.deprecated}};
  if (cls.idle) j["idle"] = IdleJson(*cls.idle);
  // Written only for a slice class, so every other class's document reads
  // as it did before slices.
  if (!cls.gpu.mig_profiles.empty()) j["gpu"]["mig_profiles"] = cls.gpu.mig_profiles;
  return j.dump();
}

absl::StatusOr<core::WorkspaceClass> DecodeClass(absl::string_view json, const Origin& origin) {
  Decoding decoding(origin);
  std::optional<nlohmann::json> parsed = decoding.Parse(json);
  if (!parsed) return decoding.status();
  Fields c(*parsed, decoding);
  core::WorkspaceClass cls;
  cls.id = c.String("id");
  cls.display_name = c.String("display_name");
  cls.description = c.String("description");
  cls.category = c.String("category");
  if (std::optional<Fields> r = c.Object("resources")) {
    cls.resources = {r->Int64("cpu_request_millis"), r->Int64("cpu_limit_millis"),
                     r->Int64("memory_bytes"), r->Int64("ephemeral_storage_bytes"),
                     r->Int64("disk_bytes")};
  }
  if (std::optional<Fields> g = c.Object("gpu")) {
    cls.gpu.count = g->Int("count");
    cls.gpu.models = g->Strings("models");
    cls.gpu.isolation = static_cast<core::Isolation>(g->Enum("isolation", IsolationNames()));
    cls.gpu.links = static_cast<core::GpuLinks>(g->Enum("links", GpuLinksNames()));
    cls.gpu.mig_profiles = g->Strings("mig_profiles");
  }
  cls.devices = ReadDeviceNodes(c, "devices");
  cls.pool_selector = c.StringMap("pool_selector");
  cls.credits_per_minute_milli = c.Int64("credits_per_minute_milli");
  cls.is_default = c.Bool("is_default");
  cls.deprecated = c.Bool("deprecated");
  cls.idle = ReadIdle(c);
  if (!decoding.ok()) return decoding.status();
  return cls;
}

std::string EncodePool(const core::NodePool& pool) {
  const core::NodeShape& s = pool.shape;
  nlohmann::json j = {
      {"id", pool.id},
      {"labels", pool.labels},
      {"node_resources",
       {{"cpu_millis", s.cpu_millis},
        {"memory_bytes", s.memory_bytes},
        {"ephemeral_storage_bytes", s.ephemeral_storage_bytes},
        {"disk_bytes", s.disk_bytes}}},
      {"gpus_per_node", s.gpus_per_node},
      {"gpu_model", s.gpu_model},
      {"min_size", pool.min_size},
      {"max_size", pool.max_size},
      {"allow_unsafe_iommu", pool.allow_unsafe_iommu},
      {"scale_down_unneeded_seconds", absl::ToInt64Seconds(pool.scale_down.unneeded)},
      {"scale_down_delay_after_add_seconds", absl::ToInt64Seconds(pool.scale_down.delay_after_add)},
      {"max_node_provision_time_seconds", absl::ToInt64Seconds(pool.max_node_provision_time)},
      {"warm_buffer", WarmBufferJson(pool.warm_buffer)}};
  // Written only when set, so documents of pools from before it read the same.
  if (pool.gpu_binding != core::GpuBinding::kHost) {
    j["gpu_binding"] = core::GpuBindingName(pool.gpu_binding);
  }
  if (pool.driver_install != core::DriverInstall::kManual) {
    j["driver_install"] = core::DriverInstallName(pool.driver_install);
  }
  if (pool.driver_rollout != core::DriverRollout{}) {
    j["driver_rollout"] = {
        {"max_unavailable", pool.driver_rollout.max_unavailable},
        {"drain_deadline_seconds", absl::ToInt64Seconds(pool.driver_rollout.drain_deadline)}};
  }
  if (!pool.scale_down.schedule.empty()) {
    j["scale_down_schedule"] = ScaleDownScheduleJson(pool.scale_down.schedule);
  }
  if (pool.mig != core::MigLayout{}) {
    j["mig"] = {{"layout", core::MigLayoutKindName(pool.mig.kind)},
                {"profiles", pool.mig.profiles}};
  }
  return j.dump();
}

absl::StatusOr<core::NodePool> DecodePool(absl::string_view json, const Origin& origin) {
  Decoding decoding(origin);
  std::optional<nlohmann::json> parsed = decoding.Parse(json);
  if (!parsed) return decoding.status();
  Fields p(*parsed, decoding);
  core::NodePool pool;
  pool.id = p.String("id");
  pool.labels = p.StringMap("labels");
  if (std::optional<Fields> r = p.Object("node_resources")) {
    pool.shape.cpu_millis = r->Int64("cpu_millis");
    pool.shape.memory_bytes = r->Int64("memory_bytes");
    pool.shape.ephemeral_storage_bytes = r->Int64("ephemeral_storage_bytes");
    pool.shape.disk_bytes = r->Int64("disk_bytes");
  }
  pool.shape.gpus_per_node = p.Int("gpus_per_node");
  pool.shape.gpu_model = p.String("gpu_model");
  pool.min_size = p.Int("min_size");
  pool.max_size = p.Int("max_size");
  pool.allow_unsafe_iommu = p.Bool("allow_unsafe_iommu");
  if (p.Has("gpu_binding")) {
    const std::string binding = p.String("gpu_binding");
    if (auto parsed = core::ParseGpuBinding(binding)) {
      pool.gpu_binding = *parsed;
    } else {
      decoding.Fail(p.PathOf("gpu_binding"), "must be \"host\" or \"vfio\"");
    }
  }
  if (p.Has("driver_install")) {
    const std::string face = p.String("driver_install");
    if (auto parsed = core::ParseDriverInstall(face)) {
      pool.driver_install = *parsed;
    } else {
      decoding.Fail(p.PathOf("driver_install"), "must be \"manual\", \"node\" or \"cluster\"");
    }
  }
  if (std::optional<Fields> r = p.Object("driver_rollout")) {
    pool.driver_rollout.max_unavailable = r->Int("max_unavailable");
    pool.driver_rollout.drain_deadline = absl::Seconds(r->Int64("drain_deadline_seconds"));
  }
  pool.scale_down.unneeded =
      absl::Seconds(Seconds(p, "scale_down_unneeded_seconds", kDefaultScaleDownSeconds));
  pool.scale_down.delay_after_add =
      absl::Seconds(Seconds(p, "scale_down_delay_after_add_seconds", kDefaultScaleDownSeconds));
  pool.max_node_provision_time =
      absl::Seconds(Seconds(p, "max_node_provision_time_seconds", kDefaultProvisionSeconds));
  pool.warm_buffer = ReadWarmBuffer(p);
  pool.scale_down.schedule = ReadScaleDownSchedule(p);
  pool.mig = ReadMigLayout(p);
  if (!decoding.ok()) return decoding.status();
  return pool;
}

std::string EncodeDriverPolicy(const core::DriverPolicyEntry& e) {
  return nlohmann::json{{"kernel", e.kernel},
                        {"os_id", e.os_id},
                        {"os_version", e.os_version},
                        {"driver_version", e.driver_version},
                        {"driver_branch", e.driver_branch},
                        {"installer_repo", e.installer_repo}}
      .dump();
}

absl::StatusOr<core::DriverPolicyEntry> DecodeDriverPolicy(absl::string_view json,
                                                           const Origin& origin) {
  Decoding decoding(origin);
  std::optional<nlohmann::json> parsed = decoding.Parse(json);
  if (!parsed) return decoding.status();
  Fields e(*parsed, decoding);
  core::DriverPolicyEntry entry{e.String("kernel"),         e.String("os_id"),
                                e.String("os_version"),     e.String("driver_version"),
                                e.String("driver_branch"), e.String("installer_repo")};
  if (!decoding.ok()) return decoding.status();
  return entry;
}

}  // namespace wsched::store::documents
