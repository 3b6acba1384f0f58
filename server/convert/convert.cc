#include "server/convert/convert.h"

#include <google/protobuf/util/time_util.h>

#include "absl/strings/str_cat.h"
#include "server/convert/mig_convert.h"

namespace wsched::convert {
namespace {

v1::Isolation ToProto(core::Isolation isolation) {
  return isolation == core::Isolation::kVm ? v1::ISOLATION_VM : v1::ISOLATION_CONTAINER;
}
core::Isolation FromProto(v1::Isolation isolation) {
  return isolation == v1::ISOLATION_VM ? core::Isolation::kVm : core::Isolation::kContainer;
}

google::protobuf::Timestamp TimestampOf(absl::Time time) {
  return google::protobuf::util::TimeUtil::MicrosecondsToTimestamp(absl::ToUnixMicros(time));
}
absl::Time TimeOf(const google::protobuf::Timestamp& timestamp) {
  return absl::FromUnixMicros(google::protobuf::util::TimeUtil::TimestampToMicroseconds(timestamp));
}

google::protobuf::Duration DurationOf(absl::Duration duration) {
  return google::protobuf::util::TimeUtil::MicrosecondsToDuration(
      absl::ToInt64Microseconds(duration));
}
// Whole seconds: the store keeps idle durations in seconds.
absl::Duration SecondsOf(const google::protobuf::Duration& duration) {
  return absl::Seconds(duration.seconds());
}

v1::IdlePolicy ToProto(const core::IdlePolicy& idle) {
  v1::IdlePolicy out;
  out.set_gpu_utilization_below_percent(idle.utilization_below_percent);
  *out.mutable_idle_for() = DurationOf(idle.idle_for);
  out.set_action(idle.action == core::IdleAction::kStop ? v1::IdlePolicy::ACTION_STOP
                                                         : v1::IdlePolicy::ACTION_NOTIFY);
  if (idle.warn_before != absl::ZeroDuration()) *out.mutable_warn_before() = DurationOf(idle.warn_before);
  return out;
}

core::IdlePolicy FromProto(const v1::IdlePolicy& idle) {
  core::IdlePolicy out;
  out.utilization_below_percent = idle.gpu_utilization_below_percent();
  out.idle_for = SecondsOf(idle.idle_for());
  out.action = idle.action() == v1::IdlePolicy::ACTION_STOP ? core::IdleAction::kStop
                                                             : core::IdleAction::kNotify;
  out.warn_before = SecondsOf(idle.warn_before());
  return out;
}

v1::DriverInstall ToProto(core::DriverInstall face) {
  switch (face) {
    case core::DriverInstall::kManual: return v1::DRIVER_INSTALL_MANUAL;
    case core::DriverInstall::kNode: return v1::DRIVER_INSTALL_NODE;
    case core::DriverInstall::kCluster: return v1::DRIVER_INSTALL_CLUSTER;
  }
  return v1::DRIVER_INSTALL_MANUAL;
}

v1::GpuLinks ToProto(core::GpuLinks links) {
  switch (links) {
    case core::GpuLinks::kAny: return v1::GPU_LINKS_ANY;
    case core::GpuLinks::kNvlinkPreferred: return v1::GPU_LINKS_NVLINK_PREFERRED;
    case core::GpuLinks::kNvlinkRequired: return v1::GPU_LINKS_NVLINK_REQUIRED;
  }
  return v1::GPU_LINKS_ANY;
}

core::GpuLinks FromProto(v1::GpuLinks links) {
  switch (links) {
    case v1::GPU_LINKS_NVLINK_PREFERRED: return core::GpuLinks::kNvlinkPreferred;
    case v1::GPU_LINKS_NVLINK_REQUIRED: return core::GpuLinks::kNvlinkRequired;
    default: return core::GpuLinks::kAny;
  }
}

v1::MigLayout ToProto(const core::MigLayout& layout) {
  v1::MigLayout out;
  switch (layout.kind) {
    case core::MigLayoutKind::kWhole: out.set_kind(v1::MigLayout::KIND_WHOLE); break;
    case core::MigLayoutKind::kFixed: out.set_kind(v1::MigLayout::KIND_FIXED); break;
    case core::MigLayoutKind::kByDemand: out.set_kind(v1::MigLayout::KIND_BY_DEMAND); break;
  }
  for (const std::string& profile : layout.profiles) out.add_profiles(profile);
  return out;
}

// UNSPECIFIED and unknown kinds read as whole: nothing is cut that nobody
// asked to cut.
core::MigLayout FromProto(const v1::MigLayout& layout) {
  core::MigLayout out;
  switch (layout.kind()) {
    case v1::MigLayout::KIND_FIXED: out.kind = core::MigLayoutKind::kFixed; break;
    case v1::MigLayout::KIND_BY_DEMAND: out.kind = core::MigLayoutKind::kByDemand; break;
    default: out.kind = core::MigLayoutKind::kWhole; break;
  }
  out.profiles.assign(layout.profiles().begin(), layout.profiles().end());
  return out;
}

core::DriverInstall FromProto(v1::DriverInstall face) {
  switch (face) {
    case v1::DRIVER_INSTALL_NODE: return core::DriverInstall::kNode;
    case v1::DRIVER_INSTALL_CLUSTER: return core::DriverInstall::kCluster;
    default: return core::DriverInstall::kManual;
  }
}

}  // namespace

void ToProto(const core::DeviceNode& device, v1::DeviceNode* out) {
  out->set_path(device.path);
  out->set_type(std::string(1, device.type));
  out->set_major(device.major);
  out->set_minor(device.minor);
  out->set_permissions(device.permissions);
}

core::DeviceNode FromProto(const v1::DeviceNode& device) {
  return {device.path(), device.type().empty() ? 'c' : device.type()[0], device.major(),
          device.minor(), device.permissions().empty() ? "rwm" : device.permissions()};
}


v1::WorkspaceClass ToProto(const core::WorkspaceClass& cls) {
  v1::WorkspaceClass out;
  out.set_id(cls.id);
  out.set_display_name(cls.display_name);
  out.set_description(cls.description);
  out.set_category(cls.category);
  auto* r = out.mutable_resources();
  r->set_cpu_request_millis(cls.resources.cpu_request_millis);
  r->set_cpu_limit_millis(cls.resources.cpu_limit_millis);
  r->set_memory_bytes(cls.resources.memory_bytes);
  r->set_ephemeral_storage_bytes(cls.resources.ephemeral_storage_bytes);
  r->set_disk_bytes(cls.resources.disk_bytes);
  auto* gpu = out.mutable_gpu();
  gpu->set_count(cls.gpu.count);
  for (const auto& model : cls.gpu.models) gpu->add_models(model);
  gpu->set_isolation(ToProto(cls.gpu.isolation));
  gpu->set_links(ToProto(cls.gpu.links));
  for (const auto& profile : cls.gpu.mig_profiles) gpu->add_mig_profiles(profile);
  for (const auto& device : cls.devices) ToProto(device, out.add_devices());
  for (const auto& [key, value] : cls.pool_selector) (*out.mutable_pool_selector())[key] = value;
  out.set_credits_per_minute_milli(cls.credits_per_minute_milli);
  out.set_is_default(cls.is_default);
  out.set_deprecated(cls.deprecated);
  out.set_version(cls.version);
  if (cls.idle) *out.mutable_idle() = ToProto(*cls.idle);
  return out;
}

core::WorkspaceClass FromProto(const v1::WorkspaceClass& cls) {
  core::WorkspaceClass out;
  out.id = cls.id();
  out.display_name = cls.display_name();
  out.description = cls.description();
  out.category = cls.category();
  out.resources = {cls.resources().cpu_request_millis(), cls.resources().cpu_limit_millis(),
                   cls.resources().memory_bytes(), cls.resources().ephemeral_storage_bytes(),
                   cls.resources().disk_bytes()};
  out.gpu.count = cls.gpu().count();
  out.gpu.models.assign(cls.gpu().models().begin(), cls.gpu().models().end());
  out.gpu.isolation = FromProto(cls.gpu().isolation());
  out.gpu.links = FromProto(cls.gpu().links());
  out.gpu.mig_profiles.assign(cls.gpu().mig_profiles().begin(), cls.gpu().mig_profiles().end());
  for (const auto& device : cls.devices()) out.devices.push_back(FromProto(device));
  out.pool_selector.insert(cls.pool_selector().begin(), cls.pool_selector().end());
  out.credits_per_minute_milli = cls.credits_per_minute_milli();
  out.is_default = cls.is_default();
  out.deprecated = cls.deprecated();
  out.version = cls.version();
  if (cls.has_idle()) out.idle = FromProto(cls.idle());
  return out;
}

v1::Pool ToProto(const core::NodePool& pool) {
  v1::Pool out;
  out.set_id(pool.id);
  out.mutable_labels()->insert(pool.labels.begin(), pool.labels.end());
  auto* r = out.mutable_node_resources();
  r->set_cpu_millis(pool.shape.cpu_millis);
  r->set_memory_bytes(pool.shape.memory_bytes);
  r->set_ephemeral_storage_bytes(pool.shape.ephemeral_storage_bytes);
  r->set_disk_bytes(pool.shape.disk_bytes);
  out.set_gpus_per_node(pool.shape.gpus_per_node);
  out.set_gpu_model(pool.shape.gpu_model);
  out.set_min_size(pool.min_size);
  out.set_max_size(pool.max_size);
  out.set_allow_unsafe_iommu(pool.allow_unsafe_iommu);
  out.set_gpu_binding(pool.gpu_binding == core::GpuBinding::kVfio ? v1::GPU_BINDING_VFIO
                                                                  : v1::GPU_BINDING_HOST);
  out.set_driver_install(ToProto(pool.driver_install));
  *out.mutable_mig() = ToProto(pool.mig);
  return out;
}

core::NodePool FromProto(const v1::Pool& pool) {
  core::NodePool out;
  out.id = pool.id();
  out.labels.insert(pool.labels().begin(), pool.labels().end());
  out.shape = {pool.node_resources().cpu_millis(), pool.node_resources().memory_bytes(),
               pool.node_resources().ephemeral_storage_bytes(), pool.node_resources().disk_bytes(),
               pool.gpus_per_node(), pool.gpu_model()};
  out.min_size = pool.min_size();
  out.max_size = pool.max_size();
  out.allow_unsafe_iommu = pool.allow_unsafe_iommu();
  out.gpu_binding =
      pool.gpu_binding() == v1::GPU_BINDING_VFIO ? core::GpuBinding::kVfio : core::GpuBinding::kHost;
  out.driver_install = FromProto(pool.driver_install());
  out.mig = FromProto(pool.mig());
  return out;
}

v1::SpendingLimit ToProto(const core::SpendingLimit& limit) {
  v1::SpendingLimit out;
  out.set_gpu_hours(limit.gpu_hours);
  if (limit.period.kind == core::SpendingPeriod::Kind::kRolling) {
    const int64_t seconds = absl::ToInt64Seconds(limit.period.rolling);
    out.mutable_period()->mutable_rolling()->set_seconds(seconds);
    out.mutable_period()->mutable_rolling()->set_nanos(static_cast<int32_t>(
        absl::ToInt64Nanoseconds(limit.period.rolling - absl::Seconds(seconds))));
  } else {
    out.mutable_period()->mutable_calendar_month()->set_time_zone(limit.period.time_zone);
  }
  for (int percent : limit.warn_at_percent) out.add_warn_at_percent(percent);
  out.set_action(limit.action == core::SpendingAction::kBlockAndStop
                     ? v1::SPENDING_ACTION_BLOCK_AND_STOP
                     : v1::SPENDING_ACTION_BLOCK_NEW);
  if (limit.stop_warning) {
    const int64_t seconds = absl::ToInt64Seconds(*limit.stop_warning);
    out.mutable_stop_warning()->set_seconds(seconds);
    out.mutable_stop_warning()->set_nanos(static_cast<int32_t>(
        absl::ToInt64Nanoseconds(*limit.stop_warning - absl::Seconds(seconds))));
  }
  return out;
}

core::SpendingLimit FromProto(const v1::SpendingLimit& limit) {
  core::SpendingLimit out;
  out.gpu_hours = limit.gpu_hours();
  if (limit.period().has_rolling()) {
    out.period.kind = core::SpendingPeriod::Kind::kRolling;
    out.period.rolling = absl::Seconds(limit.period().rolling().seconds()) +
                         absl::Nanoseconds(limit.period().rolling().nanos());
  } else {
    const std::string& zone = limit.period().calendar_month().time_zone();
    out.period.time_zone = zone.empty() ? "UTC" : zone;
  }
  out.warn_at_percent.assign(limit.warn_at_percent().begin(), limit.warn_at_percent().end());
  out.action = limit.action() == v1::SPENDING_ACTION_BLOCK_AND_STOP
                   ? core::SpendingAction::kBlockAndStop
                   : core::SpendingAction::kBlockNew;
  if (limit.has_stop_warning()) {
    out.stop_warning = absl::Seconds(limit.stop_warning().seconds()) +
                       absl::Nanoseconds(limit.stop_warning().nanos());
  }
  return out;
}

v1::ProjectSettings ToProto(const core::ProjectSettings& settings) {
  v1::ProjectSettings out;
  out.set_project_id(settings.project_id);
  out.set_org_id(settings.org_id);
  out.set_default_class(settings.default_class);
  for (const auto& id : settings.denied_classes) out.add_denied_classes(id);
  if (settings.spending_limit) *out.mutable_spending_limit() = ToProto(*settings.spending_limit);
  return out;
}

core::ProjectSettings FromProto(const v1::ProjectSettings& settings) {
  core::ProjectSettings out{settings.project_id(),
                            settings.org_id(),
                            settings.default_class(),
                            {settings.denied_classes().begin(), settings.denied_classes().end()}};
  if (settings.has_spending_limit()) out.spending_limit = FromProto(settings.spending_limit());
  return out;
}

v1::OrgSettings ToProto(const core::OrgSettings& settings) {
  v1::OrgSettings out;
  out.set_org_id(settings.org_id);
  out.set_default_class(settings.default_class);
  for (const auto& id : settings.allowed_classes) out.add_allowed_classes(id);
  out.set_gpu_quota(settings.gpu_quota);
  if (settings.spending_limit) *out.mutable_spending_limit() = ToProto(*settings.spending_limit);
  return out;
}

core::OrgSettings FromProto(const v1::OrgSettings& settings) {
  core::OrgSettings out{settings.org_id(),
                        settings.default_class(),
                        {settings.allowed_classes().begin(), settings.allowed_classes().end()},
                        settings.gpu_quota()};
  if (settings.has_spending_limit()) out.spending_limit = FromProto(settings.spending_limit());
  return out;
}

v1::NodeInfo ToProto(const core::NodeInfo& node) {
  v1::NodeInfo out;
  out.set_name(node.name);
  out.set_pool(node.pool);
  out.set_provider_id(node.provider_id);
  auto* r = out.mutable_allocatable();
  r->set_cpu_millis(node.cpu_millis);
  r->set_memory_bytes(node.memory_bytes);
  r->set_ephemeral_storage_bytes(node.ephemeral_storage_bytes);
  r->set_disk_bytes(node.disk_bytes);
  out.set_kernel_version(node.kernel_version);
  out.set_os_id(node.os_id);
  out.set_os_version(node.os_version);
  out.set_driver_version(node.driver_version);
  for (const core::Gpu& gpu : node.gpus) {
    auto* g = out.add_gpus();
    g->set_index(gpu.index);
    g->set_uuid(gpu.uuid);
    g->set_pci_address(gpu.pci_address);
    g->set_model(gpu.model);
    g->set_memory_bytes(gpu.memory_bytes);
    g->set_numa_node(gpu.numa_node);
    g->set_health(gpu.healthy ? v1::GPU_HEALTH_HEALTHY : v1::GPU_HEALTH_UNHEALTHY);
    g->set_iommu_group(gpu.iommu_group);
    for (const auto& member : gpu.iommu_group_members) {
      auto* m = g->add_iommu_group_members();
      m->set_pci_address(member.address);
      m->set_pci_class(member.pci_class);
      m->set_vendor(member.vendor);
      if (member.driver) m->set_driver(*member.driver);
    }
    if (gpu.driver) g->set_driver(*gpu.driver);
    g->set_health_reason(gpu.health_reason);
    if (gpu.unhealthy_since != absl::InfinitePast()) {
      *g->mutable_unhealthy_since() = TimestampOf(gpu.unhealthy_since);
    }
    if (gpu.reported_healthy_since != absl::InfinitePast()) {
      *g->mutable_reported_healthy_since() = TimestampOf(gpu.reported_healthy_since);
    }
    g->set_cdi_device(gpu.cdi_device);
    if (gpu.mig) *g->mutable_mig() = ToProto(*gpu.mig);
    for (const core::GpuLink& link : gpu.links) *g->add_links() = ToProto(link);
  }
  for (const auto& device : node.control_devices) ToProto(device, out.add_control_devices());
  if (node.cdi != core::NodeCdi{}) *out.mutable_cdi() = ToProto(node.cdi);
  return out;
}

v1::CdiMode ToProto(core::CdiMode mode) {
  switch (mode) {
    case core::CdiMode::kInline: return v1::CDI_MODE_UNSPECIFIED;
    case core::CdiMode::kWsched: return v1::CDI_MODE_WSCHED;
    case core::CdiMode::kNvidia: return v1::CDI_MODE_NVIDIA;
  }
  return v1::CDI_MODE_UNSPECIFIED;
}

core::CdiMode FromProto(v1::CdiMode mode) {
  switch (mode) {
    case v1::CDI_MODE_WSCHED: return core::CdiMode::kWsched;
    case v1::CDI_MODE_NVIDIA: return core::CdiMode::kNvidia;
    default: return core::CdiMode::kInline;
  }
}

v1::NodeCdi ToProto(const core::NodeCdi& cdi) {
  v1::NodeCdi out;
  out.set_mode(ToProto(cdi.mode));
  out.set_spec_dir(cdi.spec_dir);
  for (const auto& device : cdi.extra_devices) {
    auto* d = out.add_extra_devices();
    d->set_path(device.path);
    d->set_name(device.name);
  }
  for (const auto& problem : cdi.problems) out.add_problems(problem);
  return out;
}

core::NodeCdi FromProto(const v1::NodeCdi& cdi) {
  core::NodeCdi out;
  out.mode = FromProto(cdi.mode());
  out.spec_dir = cdi.spec_dir();
  for (const auto& device : cdi.extra_devices()) out.extra_devices.push_back({device.path(), device.name()});
  out.problems.assign(cdi.problems().begin(), cdi.problems().end());
  return out;
}

core::NodeInfo FromProto(const v1::NodeInfo& node) {
  core::NodeInfo out;
  out.name = node.name();
  out.pool = node.pool();
  out.provider_id = node.provider_id();
  out.cpu_millis = node.allocatable().cpu_millis();
  out.memory_bytes = node.allocatable().memory_bytes();
  out.ephemeral_storage_bytes = node.allocatable().ephemeral_storage_bytes();
  out.disk_bytes = node.allocatable().disk_bytes();
  out.kernel_version = node.kernel_version();
  out.os_id = node.os_id();
  out.os_version = node.os_version();
  out.driver_version = node.driver_version();
  for (const auto& g : node.gpus()) {
    core::Gpu gpu;
    gpu.index = g.index();
    gpu.uuid = g.uuid();
    gpu.pci_address = g.pci_address();
    gpu.model = g.model();
    gpu.memory_bytes = g.memory_bytes();
    gpu.numa_node = g.numa_node();
    gpu.healthy = g.health() != v1::GPU_HEALTH_UNHEALTHY;
    gpu.iommu_group = g.iommu_group();
    for (const auto& m : g.iommu_group_members()) {
      core::PciDevice member{m.pci_address(), m.pci_class(), m.vendor()};
      if (m.has_driver()) member.driver = m.driver();
      gpu.iommu_group_members.push_back(std::move(member));
    }
    if (g.has_driver()) gpu.driver = g.driver();
    gpu.health_reason = g.health_reason();
    if (g.has_unhealthy_since()) gpu.unhealthy_since = TimeOf(g.unhealthy_since());
    if (g.has_reported_healthy_since()) gpu.reported_healthy_since = TimeOf(g.reported_healthy_since());
    gpu.cdi_device = g.cdi_device();
    if (g.has_mig()) gpu.mig = FromProto(g.mig());
    for (const auto& link : g.links()) gpu.links.push_back(FromProto(link));
    out.gpus.push_back(std::move(gpu));
  }
  for (const auto& device : node.control_devices()) {
    out.control_devices.push_back(FromProto(device));
  }
  out.cdi = FromProto(node.cdi());
  return out;
}

namespace {

void ToProto(const core::AssignedGpu& gpu, v1::AssignedGpu* out) {
  out->set_index(gpu.index);
  out->set_uuid(gpu.uuid);
  out->set_pci_address(gpu.pci_address);
  out->set_model(gpu.model);
}

}  // namespace

void ToProto(const core::HandOff& hand_off, v1::Workspace* out) {
  for (const core::AssignedGpu& gpu : hand_off.gpus) ToProto(gpu, out->add_gpus());
  if (hand_off.slice) {
    const core::AssignedSlice& slice = *hand_off.slice;
    v1::AssignedSlice* s = out->mutable_slice();
    ToProto(slice.parent, s->mutable_gpu());
    s->set_gpu_instance(slice.gpu_instance);
    s->set_compute_instance(slice.compute_instance);
    s->set_uuid(slice.uuid);
    s->set_profile(slice.profile);
    s->set_compute_slices(slice.compute_slices);
  }
  if (hand_off.gpu_link) out->set_gpu_link(ToProto(*hand_off.gpu_link));
  auto* spec = out->mutable_device_spec();
  for (const auto& device : hand_off.extra_devices) ToProto(device, spec->add_extra_devices());
  if (hand_off.vfio) {
    auto* v = spec->mutable_vfio();
    for (const auto& address : hand_off.vfio->pci_addresses) v->add_pci_addresses(address);
    for (const auto& path : hand_off.vfio->device_paths) v->add_device_paths(path);
    for (const auto& arg : hand_off.vfio->cloud_hypervisor_args) v->add_cloud_hypervisor_args(arg);
  }
  if (!hand_off.cdi) return;
  const core::CdiHandOff& cdi = *hand_off.cdi;
  auto* c = spec->mutable_cdi();
  c->set_spec_json(cdi.spec_json);
  for (const auto& name : cdi.device_names) c->add_device_names(name);
  c->set_mode(ToProto(cdi.mode));
  if (cdi.mode == core::CdiMode::kInline) return;  // The spec only, as before node specs.
  for (const auto& env : cdi.env) c->add_env(env);
  for (const auto& arg : cdi.podman_args) c->add_podman_args(arg);
  auto* kubernetes = c->mutable_kubernetes();
  kubernetes->set_node_name(cdi.kubernetes_node_name);
  kubernetes->mutable_annotations()->insert(cdi.kubernetes_annotations.begin(),
                                            cdi.kubernetes_annotations.end());
  for (const auto& path : cdi.kubernetes_unnamed_devices) kubernetes->add_unnamed_devices(path);
}

}  // namespace wsched::convert
