#include "server/catalog/diff.h"

#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "server/core/builtin_devices.h"
#include "server/catalog/idle.h"
#include "server/catalog/mig.h"
#include "server/catalog/schedules.h"
#include "server/catalog/units.h"
#include "server/core/driver_install.h"
#include "server/core/quantity.h"
#include "server/core/vfio_binding.h"

namespace wsched::catalog {
namespace {

using core::DriverPolicyEntry;
using core::NodePool;
using core::WorkspaceClass;

// Long free text would drown the diff; the change itself is what matters.
constexpr size_t kShownTextBytes = 40;

std::string Text(const std::string& text) {
  if (text.size() <= kShownTextBytes) return absl::StrCat("\"", text, "\"");
  return absl::StrCat("\"", text.substr(0, kShownTextBytes), "...\"");
}
std::string Cpu(int64_t millis) { return millis == 0 ? "unset" : core::FormatCpuMillis(millis); }
std::string Bytes(int64_t bytes) { return bytes == 0 ? "unset" : FormatSize(bytes); }
std::string Bool(bool value) { return value ? "true" : "false"; }
std::string Int(int64_t value) { return absl::StrCat(value); }
std::string List(const std::vector<std::string>& items) {
  return absl::StrCat("[", absl::StrJoin(items, ", "), "]");
}
std::string Labels(const std::map<std::string, std::string>& labels) {
  return absl::StrCat("{", absl::StrJoin(labels, ", ", absl::PairFormatter("=")), "}");
}
std::string Devices(const std::vector<core::DeviceNode>& devices) {
  std::vector<std::string> names;
  for (const core::DeviceNode& d : devices) {
    names.push_back(core::BuiltinDeviceName(d).value_or(absl::StrCat(
        d.path, " ", std::string(1, d.type), " ", d.major, ":", d.minor, " ", d.permissions)));
  }
  return List(names);
}

// Collects "field old -> new" for each field whose rendering differs.
class FieldChanges {
 public:
  template <typename T, typename Format>
  void Compare(absl::string_view field, const T& before, const T& after, Format format) {
    if (before == after) return;
    changes_.push_back(absl::StrCat(field, " ", format(before), " -> ", format(after)));
  }
  bool empty() const { return changes_.empty(); }
  std::string Joined() const { return absl::StrJoin(changes_, "; "); }

 private:
  std::vector<std::string> changes_;
};

std::string ClassChanges(const WorkspaceClass& a, const WorkspaceClass& b) {
  FieldChanges c;
  c.Compare("display_name", a.display_name, b.display_name, Text);
  c.Compare("description", a.description, b.description, Text);
  c.Compare("category", a.category, b.category, Text);
  c.Compare("resources.cpu", a.resources.cpu_request_millis, b.resources.cpu_request_millis, Cpu);
  c.Compare("resources.cpu_limit", a.resources.cpu_limit_millis, b.resources.cpu_limit_millis, Cpu);
  c.Compare("resources.memory", a.resources.memory_bytes, b.resources.memory_bytes, Bytes);
  c.Compare("resources.ephemeral_storage", a.resources.ephemeral_storage_bytes,
            b.resources.ephemeral_storage_bytes, Bytes);
  c.Compare("resources.disk", a.resources.disk_bytes, b.resources.disk_bytes, Bytes);
  c.Compare("gpu.count", a.gpu.count, b.gpu.count, Int);
  c.Compare("gpu.models", a.gpu.models, b.gpu.models, List);
  c.Compare("gpu.isolation", a.gpu.isolation, b.gpu.isolation,
            [](core::Isolation i) { return std::string(core::IsolationName(i)); });
  c.Compare("gpu.links", a.gpu.links, b.gpu.links,
            [](core::GpuLinks links) { return std::string(core::GpuLinksName(links)); });
  c.Compare("gpu.mig", a.gpu.mig_profiles, b.gpu.mig_profiles, List);
  c.Compare("devices", a.devices, b.devices, Devices);
  c.Compare("pool_selector", a.pool_selector, b.pool_selector, Labels);
  c.Compare("credits_per_minute", a.credits_per_minute_milli, b.credits_per_minute_milli,
            FormatCreditsMilli);
  c.Compare("default", a.is_default, b.is_default, Bool);
  c.Compare("deprecated", a.deprecated, b.deprecated, Bool);
  c.Compare("idle", a.idle, b.idle, FormatIdlePolicy);
  return c.Joined();
}

std::string PoolChanges(const NodePool& a, const NodePool& b) {
  FieldChanges c;
  c.Compare("labels", a.labels, b.labels, Labels);
  c.Compare("node.cpu", a.shape.cpu_millis, b.shape.cpu_millis, Cpu);
  c.Compare("node.memory", a.shape.memory_bytes, b.shape.memory_bytes, Bytes);
  c.Compare("node.ephemeral_storage", a.shape.ephemeral_storage_bytes,
            b.shape.ephemeral_storage_bytes, Bytes);
  c.Compare("node.disk", a.shape.disk_bytes, b.shape.disk_bytes, Bytes);
  c.Compare("node.gpus", a.shape.gpus_per_node, b.shape.gpus_per_node, Int);
  c.Compare("node.gpu_model", a.shape.gpu_model, b.shape.gpu_model, Text);
  c.Compare("min_size", a.min_size, b.min_size, Int);
  c.Compare("max_size", a.max_size, b.max_size, Int);
  c.Compare("scale_down.unneeded", a.scale_down.unneeded, b.scale_down.unneeded,
            FormatCatalogDuration);
  c.Compare("scale_down.delay_after_add", a.scale_down.delay_after_add,
            b.scale_down.delay_after_add, FormatCatalogDuration);
  c.Compare("scale_down.schedule", a.scale_down.schedule, b.scale_down.schedule,
            FormatScaleDownSchedule);
  c.Compare("max_node_provision_time", a.max_node_provision_time, b.max_node_provision_time,
            FormatCatalogDuration);
  c.Compare("warm_buffer", a.warm_buffer, b.warm_buffer, FormatWarmBuffer);
  c.Compare("allow_unsafe_iommu", a.allow_unsafe_iommu, b.allow_unsafe_iommu, Bool);
  c.Compare("gpu_binding", a.gpu_binding, b.gpu_binding,
            [](core::GpuBinding binding) { return std::string(core::GpuBindingName(binding)); });
  c.Compare("driver_install", a.driver_install, b.driver_install,
            [](core::DriverInstall face) { return std::string(core::DriverInstallName(face)); });
  c.Compare("driver_rollout.max_unavailable", a.driver_rollout.max_unavailable,
            b.driver_rollout.max_unavailable, Int);
  c.Compare("driver_rollout.drain_deadline", a.driver_rollout.drain_deadline,
            b.driver_rollout.drain_deadline, FormatCatalogDuration);
  c.Compare("mig", a.mig, b.mig, FormatMigLayout);
  return c.Joined();
}

std::string PolicyChanges(const DriverPolicyEntry& a, const DriverPolicyEntry& b) {
  FieldChanges c;
  c.Compare("driver_version", a.driver_version, b.driver_version, Text);
  c.Compare("driver_branch", a.driver_branch, b.driver_branch, Text);
  c.Compare("installer_repo", a.installer_repo, b.installer_repo, Text);
  return c.Joined();
}

std::string ClassSummary(const WorkspaceClass& cls) {
  std::string summary = absl::StrCat("cpu ", Cpu(cls.resources.cpu_request_millis), ", memory ",
                                     Bytes(cls.resources.memory_bytes));
  if (cls.is_slice()) {
    absl::StrAppend(&summary, ", a MIG slice of ", List(cls.gpu.mig_profiles));
  } else if (cls.is_gpu()) {
    absl::StrAppend(&summary, ", ", cls.gpu.count, " GPU", cls.gpu.count == 1 ? "" : "s");
  }
  if ((cls.is_gpu() || cls.is_slice()) && !cls.gpu.models.empty()) {
    absl::StrAppend(&summary, " ", List(cls.gpu.models));
  }
  absl::StrAppend(&summary, ", ", core::IsolationName(cls.gpu.isolation));
  if (cls.is_default) absl::StrAppend(&summary, ", default");
  if (cls.deprecated) absl::StrAppend(&summary, ", deprecated");
  return summary;
}

std::string PoolSummary(const NodePool& pool) {
  std::string summary = absl::StrCat("node cpu ", Cpu(pool.shape.cpu_millis), ", memory ",
                                     Bytes(pool.shape.memory_bytes));
  if (pool.is_gpu())
    absl::StrAppend(&summary, ", ", pool.shape.gpus_per_node, "x ", pool.shape.gpu_model);
  if (pool.mig.kind != core::MigLayoutKind::kWhole) {
    absl::StrAppend(&summary, ", MIG ", FormatMigLayout(pool.mig));
  }
  absl::StrAppend(&summary, ", size ", pool.min_size, "..", pool.max_size);
  return summary;
}

std::string PolicySummary(const DriverPolicyEntry& entry) {
  return absl::StrCat("driver ", entry.driver_version, " from ", entry.installer_repo);
}

std::string PolicyKey(const DriverPolicyEntry& entry) {
  return absl::StrCat(entry.os_id, entry.os_version.empty() ? "" : "-", entry.os_version, "/",
                      entry.kernel);
}

const std::string& IdOf(const WorkspaceClass& cls) { return cls.id; }
const std::string& IdOf(const NodePool& pool) { return pool.id; }

// Matches two lists by key and reports adds, updates and removals.
template <typename T, typename KeyOf, typename Changes, typename Summary>
void DiffList(ObjectKind object, const std::vector<T>& from, const std::vector<T>& to, KeyOf key_of,
              Changes changes_of, Summary summary_of, std::vector<CatalogChange>& out) {
  std::map<std::string, const T*> before;
  for (const T& item : from) before.emplace(key_of(item), &item);
  std::map<std::string, const T*> after;
  for (const T& item : to) {
    const std::string key = key_of(item);
    after.emplace(key, &item);
    auto it = before.find(key);
    if (it == before.end()) {
      out.push_back({ChangeKind::kAdd, object, key, summary_of(item)});
    } else if (std::string detail = changes_of(*it->second, item); !detail.empty()) {
      out.push_back({ChangeKind::kUpdate, object, key, std::move(detail)});
    }
  }
  for (const T& item : from) {
    const std::string key = key_of(item);
    if (after.find(key) == after.end()) out.push_back({ChangeKind::kRemove, object, key, ""});
  }
}

}  // namespace

const char* ChangeKindName(ChangeKind kind) {
  switch (kind) {
    case ChangeKind::kAdd:
      return "add";
    case ChangeKind::kUpdate:
      return "update";
    case ChangeKind::kRemove:
      return "remove";
    case ChangeKind::kDeprecate:
      return "deprecate";
  }
  return "unknown";
}

const char* ObjectKindName(ObjectKind object) {
  switch (object) {
    case ObjectKind::kClass:
      return "class";
    case ObjectKind::kPool:
      return "pool";
    case ObjectKind::kDriverPolicy:
      return "driver_policy";
  }
  return "unknown";
}

std::string DescribeChange(const CatalogChange& change) {
  std::string line =
      absl::StrCat(ChangeKindName(change.kind), " ", ObjectKindName(change.object), " ", change.id);
  if (!change.detail.empty()) absl::StrAppend(&line, ": ", change.detail);
  return line;
}

std::vector<CatalogChange> DiffCatalogs(const core::Catalog& from, const core::Catalog& to) {
  std::vector<CatalogChange> changes;
  const auto class_id = [](const WorkspaceClass& c) { return IdOf(c); };
  const auto pool_id = [](const NodePool& p) { return IdOf(p); };
  DiffList(ObjectKind::kClass, from.classes, to.classes, class_id, ClassChanges, ClassSummary,
           changes);
  DiffList(ObjectKind::kPool, from.pools, to.pools, pool_id, PoolChanges, PoolSummary, changes);
  DiffList(ObjectKind::kDriverPolicy, from.driver_policy, to.driver_policy, PolicyKey,
           PolicyChanges, PolicySummary, changes);
  return changes;
}

std::vector<CatalogChange> DeprecateInsteadOfRemoving(
    std::vector<CatalogChange> changes, const std::set<std::string>& in_use_class_ids) {
  for (CatalogChange& change : changes) {
    if (change.kind == ChangeKind::kRemove && change.object == ObjectKind::kClass &&
        in_use_class_ids.count(change.id) > 0) {
      change.kind = ChangeKind::kDeprecate;
      change.detail = "still used by running workspaces; kept as deprecated instead of removed";
    }
  }
  return changes;
}

core::Catalog KeepInUseClasses(const core::Catalog& from, const core::Catalog& to,
                               const std::set<std::string>& in_use_class_ids) {
  core::Catalog result = to;
  for (const WorkspaceClass& cls : from.classes) {
    if (in_use_class_ids.count(cls.id) == 0 || to.FindClass(cls.id) != nullptr) continue;
    WorkspaceClass kept = cls;
    kept.deprecated = true;
    kept.is_default = false;  // The new catalog names its own default.
    result.classes.push_back(std::move(kept));
  }
  return result;
}

}  // namespace wsched::catalog
