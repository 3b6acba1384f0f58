#include "server/catalog/render.h"

#include "absl/strings/match.h"
#include "server/core/builtin_devices.h"
#include "server/catalog/idle.h"
#include "server/catalog/mig.h"
#include "server/catalog/schedules.h"
#include "server/catalog/units.h"
#include "server/core/driver_install.h"
#include "server/core/quantity.h"
#include "server/core/vfio_binding.h"
#include "yaml-cpp/yaml.h"

namespace wsched::catalog {
namespace {

using core::DriverPolicyEntry;
using core::NodePool;
using core::WorkspaceClass;

// Writes a string so it reads back as the same string: the parser takes
// scalar text as is, so only what YAML would read as null needs quotes
// (yaml-cpp already quotes anything else that would not survive). Line
// breaks are escaped inside quotes: a literal block would add or drop a
// trailing newline.
void Text(YAML::Emitter& out, const std::string& text) {
  if (text.empty() || text == "~" || text == "null" || text == "Null" || text == "NULL" ||
      absl::StrContains(text, '\n')) {
    out << YAML::DoubleQuoted << text;
  } else {
    out << text;
  }
}

void Key(YAML::Emitter& out, const char* key) { out << YAML::Key << key << YAML::Value; }

void TextField(YAML::Emitter& out, const char* key, const std::string& text) {
  Key(out, key);
  Text(out, text);
}

void OptionalTextField(YAML::Emitter& out, const char* key, const std::string& text) {
  if (!text.empty()) TextField(out, key, text);
}

void SizeField(YAML::Emitter& out, const char* key, int64_t bytes) {
  Key(out, key);
  out << FormatSize(bytes);
}

void OptionalSizeField(YAML::Emitter& out, const char* key, int64_t bytes) {
  if (bytes != 0) SizeField(out, key, bytes);
}

void StringMap(YAML::Emitter& out, const char* key, const std::map<std::string, std::string>& map) {
  if (map.empty()) return;
  Key(out, key);
  out << YAML::Flow << YAML::BeginMap;
  for (const auto& [k, v] : map) {
    out << YAML::Key;
    Text(out, k);
    out << YAML::Value;
    Text(out, v);
  }
  out << YAML::EndMap;
}

void Devices(YAML::Emitter& out, const std::vector<core::DeviceNode>& devices) {
  if (devices.empty()) return;
  Key(out, "devices");
  out << YAML::Flow << YAML::BeginSeq;
  for (const core::DeviceNode& device : devices) {
    if (auto name = core::BuiltinDeviceName(device)) {
      out << *name;
      continue;
    }
    out << YAML::Flow << YAML::BeginMap;
    TextField(out, "path", device.path);
    Key(out, "type");
    out << std::string(1, device.type);
    Key(out, "major");
    out << device.major;
    Key(out, "minor");
    out << device.minor;
    TextField(out, "permissions", device.permissions);
    out << YAML::EndMap;
  }
  out << YAML::EndSeq;
}

void Gpu(YAML::Emitter& out, const core::GpuRequirement& gpu) {
  if (gpu == core::GpuRequirement{}) return;
  Key(out, "gpu");
  out << YAML::Flow << YAML::BeginMap;
  // A slice class leaves count out (it may only be 0).
  if (gpu.mig_profiles.empty() || gpu.count != 0) {
    Key(out, "count");
    out << gpu.count;
  }
  if (!gpu.mig_profiles.empty()) {
    Key(out, "mig");
    EmitClassMig(out, gpu.mig_profiles);
  }
  if (!gpu.models.empty()) {
    Key(out, "models");
    out << YAML::Flow << YAML::BeginSeq;
    for (const std::string& model : gpu.models) Text(out, model);
    out << YAML::EndSeq;
  }
  Key(out, "isolation");
  out << core::IsolationName(gpu.isolation);
  if (gpu.links != core::GpuLinks::kAny) {
    Key(out, "links");
    out << core::GpuLinksName(gpu.links);
  }
  out << YAML::EndMap;
}

void Class(YAML::Emitter& out, const WorkspaceClass& cls) {
  out << YAML::BeginMap;
  TextField(out, "id", cls.id);
  TextField(out, "display_name", cls.display_name);
  OptionalTextField(out, "description", cls.description);
  OptionalTextField(out, "category", cls.category);
  Key(out, "resources");
  out << YAML::BeginMap;
  Key(out, "cpu");
  out << core::FormatCpuMillis(cls.resources.cpu_request_millis);
  if (cls.resources.cpu_limit_millis != cls.resources.cpu_request_millis) {
    Key(out, "cpu_limit");
    out << core::FormatCpuMillis(cls.resources.cpu_limit_millis);
  }
  SizeField(out, "memory", cls.resources.memory_bytes);
  OptionalSizeField(out, "ephemeral_storage", cls.resources.ephemeral_storage_bytes);
  OptionalSizeField(out, "disk", cls.resources.disk_bytes);
  out << YAML::EndMap;
  Gpu(out, cls.gpu);
  Devices(out, cls.devices);
  StringMap(out, "pool_selector", cls.pool_selector);
  Key(out, "credits_per_minute");
  out << FormatCreditsMilli(cls.credits_per_minute_milli);
  if (cls.is_default) {
    Key(out, "default");
    out << true;
  }
  if (cls.deprecated) {
    Key(out, "deprecated");
    out << true;
  }
  if (cls.idle) {
    Key(out, "idle");
    EmitIdlePolicy(out, *cls.idle);
  }
  out << YAML::EndMap;
}

void Pool(YAML::Emitter& out, const NodePool& pool) {
  out << YAML::BeginMap;
  TextField(out, "id", pool.id);
  StringMap(out, "labels", pool.labels);
  Key(out, "node");
  out << YAML::BeginMap;
  Key(out, "cpu");
  out << core::FormatCpuMillis(pool.shape.cpu_millis);
  SizeField(out, "memory", pool.shape.memory_bytes);
  OptionalSizeField(out, "ephemeral_storage", pool.shape.ephemeral_storage_bytes);
  OptionalSizeField(out, "disk", pool.shape.disk_bytes);
  if (pool.shape.gpus_per_node != 0) {
    Key(out, "gpus");
    out << pool.shape.gpus_per_node;
  }
  OptionalTextField(out, "gpu_model", pool.shape.gpu_model);
  out << YAML::EndMap;
  Key(out, "min_size");
  out << pool.min_size;
  Key(out, "max_size");
  out << pool.max_size;
  Key(out, "scale_down");
  out << YAML::BeginMap;
  Key(out, "unneeded");
  out << FormatCatalogDuration(pool.scale_down.unneeded);
  Key(out, "delay_after_add");
  out << FormatCatalogDuration(pool.scale_down.delay_after_add);
  if (!pool.scale_down.schedule.empty()) {
    Key(out, "schedule");
    EmitScaleDownSchedule(out, pool.scale_down.schedule);
  }
  out << YAML::EndMap;
  Key(out, "max_node_provision_time");
  out << FormatCatalogDuration(pool.max_node_provision_time);
  if (pool.warm_buffer != core::WarmBuffer{}) {
    Key(out, "warm_buffer");
    EmitWarmBuffer(out, pool.warm_buffer);
  }
  if (pool.allow_unsafe_iommu) {
    Key(out, "allow_unsafe_iommu");
    out << true;
  }
  if (pool.gpu_binding != core::GpuBinding::kHost) {
    Key(out, "gpu_binding");
    out << core::GpuBindingName(pool.gpu_binding);
  }
  if (pool.driver_install != core::DriverInstall::kManual) {
    Key(out, "driver_install");
    out << core::DriverInstallName(pool.driver_install);
  }
  if (pool.mig != core::MigLayout{}) {
    Key(out, "mig");
    EmitPoolMig(out, pool.mig);
  }
  if (pool.driver_rollout != core::DriverRollout{}) {
    Key(out, "driver_rollout");
    out << YAML::BeginMap;
    Key(out, "max_unavailable");
    out << pool.driver_rollout.max_unavailable;
    Key(out, "drain_deadline");
    out << FormatCatalogDuration(pool.driver_rollout.drain_deadline);
    out << YAML::EndMap;
  }
  out << YAML::EndMap;
}

void DriverPolicy(YAML::Emitter& out, const DriverPolicyEntry& entry) {
  out << YAML::BeginMap;
  TextField(out, "kernel", entry.kernel);
  TextField(out, "os_id", entry.os_id);
  OptionalTextField(out, "os_version", entry.os_version);
  TextField(out, "driver_version", entry.driver_version);
  TextField(out, "driver_branch", entry.driver_branch);
  TextField(out, "installer_repo", entry.installer_repo);
  out << YAML::EndMap;
}

template <typename T>
void Section(YAML::Emitter& out, const char* key, const std::vector<T>& items,
             void (*write)(YAML::Emitter&, const T&)) {
  Key(out, key);
  if (items.empty()) out << YAML::Flow;  // "driver_policy: []" on one line.
  out << YAML::BeginSeq;
  for (const T& item : items) write(out, item);
  out << YAML::EndSeq;
}

}  // namespace

std::string RenderCatalogYaml(const core::Catalog& catalog) {
  YAML::Emitter out;
  out.SetBoolFormat(YAML::TrueFalseBool);
  out << YAML::BeginMap;
  Section(out, "classes", catalog.classes, Class);
  Section(out, "pools", catalog.pools, Pool);
  Section(out, "driver_policy", catalog.driver_policy, DriverPolicy);
  out << YAML::EndMap;
  std::string text = out.c_str();
  text.push_back('\n');
  return text;
}

}  // namespace wsched::catalog
