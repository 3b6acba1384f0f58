#include "server/catalog/parse.h"

#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "server/core/builtin_devices.h"
#include "server/catalog/closest_name.h"
#include "server/catalog/idle.h"
#include "server/catalog/mig.h"
#include "server/catalog/schedules.h"
#include "server/catalog/units.h"
#include "server/catalog/yaml_documents.h"
#include "server/catalog/yaml_fields.h"
#include "server/core/driver_install.h"
#include "server/core/quantity.h"
#include "server/core/vfio_binding.h"
#include "yaml-cpp/yaml.h"

namespace wsched::catalog {
namespace {

// Allowed keys at each level. Keep in step with docs/catalog.md.
constexpr absl::string_view kTopKeys[] = {"classes", "pools", "driver_policy"};
constexpr absl::string_view kClassKeys[] = {
    "id",      "display_name",  "description",        "category", "resources", "gpu",
    "devices", "pool_selector", "credits_per_minute", "default",  "deprecated", "idle"};
constexpr absl::string_view kResourceKeys[] = {"cpu", "cpu_limit", "memory", "ephemeral_storage",
                                               "disk"};
constexpr absl::string_view kGpuKeys[] = {"count", "models", "isolation", "links", "mig"};
constexpr absl::string_view kDeviceKeys[] = {"path", "type", "major", "minor", "permissions"};
constexpr absl::string_view kPoolKeys[] = {"id",
                                           "labels",
                                           "node",
                                           "min_size",
                                           "max_size",
                                           "scale_down",
                                           "max_node_provision_time",
                                           "warm_buffer",
                                           "allow_unsafe_iommu",
                                           "gpu_binding",
                                           "driver_install",
                                           "driver_rollout",
                                           "mig"};
constexpr absl::string_view kNodeKeys[] = {"cpu",  "memory", "ephemeral_storage",
                                           "disk", "gpus",   "gpu_model"};
constexpr absl::string_view kDriverRolloutKeys[] = {"max_unavailable", "drain_deadline"};
constexpr absl::string_view kScaleDownKeys[] = {"unneeded", "delay_after_add", "schedule"};
constexpr absl::string_view kDriverPolicyKeys[] = {
    "kernel", "os_id", "os_version", "driver_version", "driver_branch", "installer_repo"};

absl::StatusOr<int64_t> ParseCpu(absl::string_view text) { return core::ParseCpuMillis(text); }

// A text-to-value parser and what its field should hold, for the message
// when a list or map stands where the scalar belongs.
template <typename T>
struct ScalarParser {
  absl::string_view expected;
  absl::StatusOr<T> (*parse)(absl::string_view);
};

constexpr ScalarParser<int64_t> kCpu{"a CPU quantity (\"4\", \"500m\")", ParseCpu};
constexpr ScalarParser<int64_t> kSize{"a size (\"16Gi\")", ParseSizeWithUnit};
constexpr ScalarParser<int64_t> kCredits{"a decimal number (\"2.5\")", ParseCreditsMilli};
constexpr ScalarParser<absl::Duration> kDuration{"a duration (\"10m\")", ParseCatalogDuration};

// Runs a parser on a scalar field and reports its error message (which
// already quotes the value) at the field's path.
template <typename T>
std::optional<T> ReadWith(const Field& field, const ScalarParser<T>& parser,
                          Diagnostics& diagnostics) {
  auto text = ReadScalar(field, parser.expected, diagnostics);
  if (!text) return std::nullopt;
  absl::StatusOr<T> value = parser.parse(*text);
  if (!value.ok()) {
    diagnostics.ParseError(field.path, value.status().message());
    return std::nullopt;
  }
  return *std::move(value);
}

std::optional<int> ReadSmallInt(const Field& field, Diagnostics& diagnostics) {
  auto value = ReadInt(field, diagnostics);
  if (!value) return std::nullopt;
  if (*value < std::numeric_limits<int>::min() || *value > std::numeric_limits<int>::max()) {
    diagnostics.ParseError(field.path, absl::StrCat(*value, " is out of range"));
    return std::nullopt;
  }
  return static_cast<int>(*value);
}

// Assigns a value read by one of the readers when there was one, so that an
// absent or broken field keeps the struct's default.
template <typename T, typename U>
void SetIf(std::optional<U> value, T& target) {
  if (value) target = static_cast<T>(*std::move(value));
}

// The element's id, looked at before anything else so every path of the
// element can name it.
std::string PeekId(const YAML::Node& element) {
  for (const auto& entry : element) {
    if (entry.first.IsScalar() && entry.first.Scalar() == "id" && entry.second.IsScalar()) {
      return entry.second.Scalar();
    }
  }
  return "";
}

// Opens one list element as a map at its final path ("classes[2] (large)").
// Returns nullopt (after reporting) when the element is not a map at all.
std::optional<Field> OpenElement(const Field& element, absl::string_view list,
                                 const ElementSource& source, absl::string_view what,
                                 Diagnostics& diagnostics) {
  if (!element.node.IsMap()) {
    diagnostics.ParseError(element.path, absl::StrCat("must be a map (one ", what, "), got ",
                                                      DescribeNode(element.node)));
    return std::nullopt;
  }
  const std::string id = list == "driver_policy" ? "" : PeekId(element.node);
  return Field{element.node, ElementPath(list, source, id)};
}

core::ClassResources ReadResources(const Field& field, Diagnostics& diagnostics) {
  core::ClassResources resources;
  MapFields fields(field, kResourceKeys, diagnostics);
  if (!fields.is_map()) return resources;
  SetIf(ReadWith(fields.Require("cpu"), kCpu, diagnostics), resources.cpu_request_millis);
  // An unset limit equals the request: the common "guaranteed" shape.
  resources.cpu_limit_millis = resources.cpu_request_millis;
  SetIf(ReadWith(fields.Get("cpu_limit"), kCpu, diagnostics), resources.cpu_limit_millis);
  SetIf(ReadWith(fields.Require("memory"), kSize, diagnostics), resources.memory_bytes);
  SetIf(ReadWith(fields.Get("ephemeral_storage"), kSize, diagnostics),
        resources.ephemeral_storage_bytes);
  SetIf(ReadWith(fields.Get("disk"), kSize, diagnostics), resources.disk_bytes);
  return resources;
}

std::optional<core::Isolation> ReadIsolation(const Field& field, Diagnostics& diagnostics) {
  auto text = ReadString(field, diagnostics);
  if (!text) return std::nullopt;
  if (*text == "container") return core::Isolation::kContainer;
  if (*text == "vm") return core::Isolation::kVm;
  diagnostics.ParseError(field.path, absl::StrCat("must be container or vm, got \"", *text, "\""));
  return std::nullopt;
}

std::optional<core::GpuLinks> ReadGpuLinks(const Field& field, Diagnostics& diagnostics) {
  auto text = ReadString(field, diagnostics);
  if (!text) return std::nullopt;
  if (auto links = core::ParseGpuLinks(*text)) return links;
  diagnostics.ParseError(
      field.path,
      absl::StrCat("must be any, nvlink_preferred or nvlink_required, got \"", *text, "\""));
  return std::nullopt;
}

std::optional<core::GpuBinding> ReadGpuBinding(const Field& field, Diagnostics& diagnostics) {
  auto text = ReadString(field, diagnostics);
  if (!text) return std::nullopt;
  if (auto binding = core::ParseGpuBinding(*text)) return binding;
  diagnostics.ParseError(field.path, absl::StrCat("must be host or vfio, got \"", *text, "\""));
  return std::nullopt;
}

std::optional<core::DriverInstall> ReadDriverInstall(const Field& field,
                                                    Diagnostics& diagnostics) {
  auto text = ReadString(field, diagnostics);
  if (!text) return std::nullopt;
  if (auto face = core::ParseDriverInstall(*text)) return face;
  diagnostics.ParseError(field.path,
                         absl::StrCat("must be manual, node or cluster, got \"", *text, "\""));
  return std::nullopt;
}

core::GpuRequirement ReadGpu(const Field& field, Diagnostics& diagnostics) {
  core::GpuRequirement gpu;
  MapFields fields(field, kGpuKeys, diagnostics);
  if (!fields.is_map()) return gpu;
  const Field mig = fields.Get("mig");
  // A slice class asks for no whole GPUs: count may be left out.
  const Field count = mig.present() ? fields.Get("count") : fields.Require("count");
  SetIf(ReadSmallInt(count, diagnostics), gpu.count);
  const Field models = fields.Get("models");
  SetIf(ReadStringList(models, diagnostics), gpu.models);
  SetIf(ReadIsolation(fields.Get("isolation"), diagnostics), gpu.isolation);
  SetIf(ReadGpuLinks(fields.Get("links"), diagnostics), gpu.links);
  // After models: a size is expanded against them.
  const bool models_read = !diagnostics.HasParseErrorUnder(models.path);
  gpu.mig_profiles = ReadClassMig(mig, models_read ? &gpu.models : nullptr, diagnostics);
  return gpu;
}

std::optional<core::DeviceNode> ReadNamedDevice(const Field& field, Diagnostics& diagnostics) {
  const std::string& name = field.node.Scalar();
  if (auto device = core::FindBuiltinDevice(name)) return device;
  std::string message = absl::StrCat("unknown device \"", name, "\"");
  if (auto suggestion = ClosestName(name, core::BuiltinDeviceNames())) {
    absl::StrAppend(&message, "; did you mean ", *suggestion, "?");
  }
  absl::StrAppend(&message, " (built in: ", absl::StrJoin(core::BuiltinDeviceNames(), ", "),
                  "; or give {path, type, major, minor})");
  diagnostics.ParseError(field.path, message);
  return std::nullopt;
}

std::optional<core::DeviceNode> ReadExplicitDevice(const Field& field, Diagnostics& diagnostics) {
  MapFields fields(field, kDeviceKeys, diagnostics);
  core::DeviceNode device;
  bool complete = true;
  const auto need = [&complete](auto value, auto& target) {
    if (value) {
      target = *value;
    } else {
      complete = false;
    }
  };
  need(ReadString(fields.Require("path"), diagnostics), device.path);
  need(ReadInt(fields.Require("major"), diagnostics), device.major);
  need(ReadInt(fields.Require("minor"), diagnostics), device.minor);
  const Field type = fields.Get("type");
  if (auto text = ReadString(type, diagnostics)) {
    if (*text == "c" || *text == "b") {
      device.type = (*text)[0];
    } else {
      diagnostics.ParseError(
          type.path, absl::StrCat("must be c (character) or b (block), got \"", *text, "\""));
      complete = false;
    }
  }
  SetIf(ReadString(fields.Get("permissions"), diagnostics), device.permissions);
  return complete ? std::optional<core::DeviceNode>(device) : std::nullopt;
}

std::vector<core::DeviceNode> ReadDevices(const Field& field, Diagnostics& diagnostics) {
  std::vector<core::DeviceNode> devices;
  auto elements = ReadList(field, diagnostics);
  if (!elements) return devices;
  for (const Field& element : *elements) {
    std::optional<core::DeviceNode> device;
    if (element.node.IsScalar()) {
      device = ReadNamedDevice(element, diagnostics);
    } else if (element.node.IsMap()) {
      device = ReadExplicitDevice(element, diagnostics);
    } else {
      diagnostics.ParseError(
          element.path, absl::StrCat("must be a device name or {path, type, major, minor}, got ",
                                     DescribeNode(element.node)));
    }
    if (device) devices.push_back(*std::move(device));
  }
  return devices;
}

core::WorkspaceClass ReadClass(const Field& element, Diagnostics& diagnostics) {
  core::WorkspaceClass cls;
  MapFields fields(element, kClassKeys, diagnostics);
  SetIf(ReadString(fields.Require("id"), diagnostics), cls.id);
  SetIf(ReadString(fields.Require("display_name"), diagnostics), cls.display_name);
  SetIf(ReadString(fields.Get("description"), diagnostics), cls.description);
  SetIf(ReadString(fields.Get("category"), diagnostics), cls.category);
  cls.resources = ReadResources(fields.Require("resources"), diagnostics);
  cls.gpu = ReadGpu(fields.Get("gpu"), diagnostics);
  cls.devices = ReadDevices(fields.Get("devices"), diagnostics);
  SetIf(ReadStringMap(fields.Get("pool_selector"), diagnostics), cls.pool_selector);
  SetIf(ReadWith(fields.Get("credits_per_minute"), kCredits, diagnostics),
        cls.credits_per_minute_milli);
  SetIf(ReadBool(fields.Get("default"), diagnostics), cls.is_default);
  SetIf(ReadBool(fields.Get("deprecated"), diagnostics), cls.deprecated);
  cls.idle = ReadIdlePolicy(fields.Get("idle"), diagnostics);
  return cls;
}

core::NodeShape ReadNodeShape(const Field& field, Diagnostics& diagnostics) {
  core::NodeShape shape;
  MapFields fields(field, kNodeKeys, diagnostics);
  if (!fields.is_map()) return shape;
  SetIf(ReadWith(fields.Require("cpu"), kCpu, diagnostics), shape.cpu_millis);
  SetIf(ReadWith(fields.Require("memory"), kSize, diagnostics), shape.memory_bytes);
  SetIf(ReadWith(fields.Get("ephemeral_storage"), kSize, diagnostics),
        shape.ephemeral_storage_bytes);
  SetIf(ReadWith(fields.Get("disk"), kSize, diagnostics), shape.disk_bytes);
  SetIf(ReadSmallInt(fields.Get("gpus"), diagnostics), shape.gpus_per_node);
  SetIf(ReadString(fields.Get("gpu_model"), diagnostics), shape.gpu_model);
  return shape;
}

core::ScaleDownSettings ReadScaleDown(const Field& field, Diagnostics& diagnostics) {
  core::ScaleDownSettings settings;  // Defaults: 10m and 10m (core/pool.h).
  MapFields fields(field, kScaleDownKeys, diagnostics);
  SetIf(ReadWith(fields.Get("unneeded"), kDuration, diagnostics), settings.unneeded);
  SetIf(ReadWith(fields.Get("delay_after_add"), kDuration, diagnostics), settings.delay_after_add);
  SetIf(ReadScaleDownSchedule(fields.Get("schedule"), diagnostics), settings.schedule);
  return settings;
}

core::DriverRollout ReadDriverRollout(const Field& field, Diagnostics& diagnostics) {
  core::DriverRollout rollout;  // Defaults: one at a time, no deadline (core/pool.h).
  MapFields fields(field, kDriverRolloutKeys, diagnostics);
  SetIf(ReadSmallInt(fields.Get("max_unavailable"), diagnostics), rollout.max_unavailable);
  SetIf(ReadWith(fields.Get("drain_deadline"), kDuration, diagnostics), rollout.drain_deadline);
  return rollout;
}

core::NodePool ReadPool(const Field& element, Diagnostics& diagnostics) {
  core::NodePool pool;
  MapFields fields(element, kPoolKeys, diagnostics);
  SetIf(ReadString(fields.Require("id"), diagnostics), pool.id);
  SetIf(ReadStringMap(fields.Get("labels"), diagnostics), pool.labels);
  pool.shape = ReadNodeShape(fields.Require("node"), diagnostics);
  SetIf(ReadSmallInt(fields.Get("min_size"), diagnostics), pool.min_size);
  // No default for max_size: a silent 0 would make the pool useless.
  SetIf(ReadSmallInt(fields.Require("max_size"), diagnostics), pool.max_size);
  pool.scale_down = ReadScaleDown(fields.Get("scale_down"), diagnostics);
  SetIf(ReadWith(fields.Get("max_node_provision_time"), kDuration, diagnostics),
        pool.max_node_provision_time);
  SetIf(ReadWarmBuffer(fields.Get("warm_buffer"), diagnostics), pool.warm_buffer);
  SetIf(ReadBool(fields.Get("allow_unsafe_iommu"), diagnostics), pool.allow_unsafe_iommu);
  SetIf(ReadGpuBinding(fields.Get("gpu_binding"), diagnostics), pool.gpu_binding);
  SetIf(ReadDriverInstall(fields.Get("driver_install"), diagnostics), pool.driver_install);
  pool.driver_rollout = ReadDriverRollout(fields.Get("driver_rollout"), diagnostics);
  SetIf(ReadPoolMig(fields.Get("mig"), diagnostics), pool.mig);
  return pool;
}

core::DriverPolicyEntry ReadDriverPolicy(const Field& element, Diagnostics& diagnostics) {
  core::DriverPolicyEntry entry;
  MapFields fields(element, kDriverPolicyKeys, diagnostics);
  SetIf(ReadString(fields.Require("kernel"), diagnostics), entry.kernel);
  SetIf(ReadString(fields.Require("os_id"), diagnostics), entry.os_id);
  SetIf(ReadString(fields.Get("os_version"), diagnostics), entry.os_version);
  SetIf(ReadString(fields.Require("driver_version"), diagnostics), entry.driver_version);
  SetIf(ReadString(fields.Require("driver_branch"), diagnostics), entry.driver_branch);
  SetIf(ReadString(fields.Require("installer_repo"), diagnostics), entry.installer_repo);
  return entry;
}

// Reads one top-level list with `read` for each element that is a map.
template <typename T, typename ReadElement>
void ReadSection(const MapFields& top, absl::string_view list, absl::string_view what,
                 absl::string_view file, ReadElement read, std::vector<T>& out,
                 std::vector<ElementSource>& sources, Diagnostics& diagnostics) {
  const Field field = top.Get(list);
  auto elements = ReadList(field, diagnostics);
  if (!elements) {
    if (field.present()) diagnostics.MarkIncomplete(list);
    return;
  }
  for (size_t i = 0; i < elements->size(); ++i) {
    const ElementSource source{std::string(file), static_cast<int>(i)};
    auto element = OpenElement((*elements)[i], list, source, what, diagnostics);
    if (!element) {
      diagnostics.MarkIncomplete(list);
      continue;
    }
    out.push_back(read(*element, diagnostics));
    sources.push_back(source);
  }
}

std::string PositionPath(absl::string_view file, const YAML::Mark& mark) {
  const std::string prefix = file.empty() ? "" : absl::StrCat(file, ": ");
  if (mark.is_null()) return absl::StrCat(prefix, "YAML");
  return absl::StrCat(prefix, "line ", mark.line + 1, ", column ", mark.column + 1);
}

void MarkAllIncomplete(Diagnostics& diagnostics) {
  for (absl::string_view list : kTopKeys) diagnostics.MarkIncomplete(list);
}

}  // namespace

void ReadCatalogYaml(absl::string_view yaml_text, absl::string_view file, core::Catalog& catalog,
                     CatalogSources& sources, Diagnostics& diagnostics) {
  const std::string name = file.empty() ? "catalog" : std::string(file);
  if (yaml_text.size() > kMaxCatalogTextBytes) {
    diagnostics.ParseError(name, absl::StrCat("is ", yaml_text.size(), " bytes; the limit is ",
                                              kMaxCatalogTextBytes, " bytes"));
    MarkAllIncomplete(diagnostics);
    return;
  }
  YamlDocuments documents;
  try {
    documents = LoadYamlDocuments(std::string(yaml_text));
  } catch (const YAML::Exception& e) {
    diagnostics.ParseError(PositionPath(file, e.mark), e.msg);
    MarkAllIncomplete(diagnostics);
    return;
  }
  if (documents.count > 1) {
    // yaml-cpp's Load() would silently keep only the first document.
    diagnostics.ParseError(name, absl::StrCat("holds ", documents.count,
                                              " YAML documents; put one catalog in each file"));
    MarkAllIncomplete(diagnostics);
    return;
  }
  if (documents.count == 0 || documents.first.IsNull()) return;  // An empty file adds nothing.
  if (!documents.first.IsMap()) {
    diagnostics.ParseError(name,
                           absl::StrCat("must be a map with classes, pools and driver_policy, got ",
                                        DescribeNode(documents.first)));
    MarkAllIncomplete(diagnostics);
    return;
  }
  const std::string root = file.empty() ? "" : absl::StrCat(file, ": ");
  const MapFields top(Field{documents.first, root}, kTopKeys, diagnostics);
  ReadSection(top, "classes", "class", file, ReadClass, catalog.classes, sources.classes,
              diagnostics);
  ReadSection(top, "pools", "pool", file, ReadPool, catalog.pools, sources.pools, diagnostics);
  ReadSection(top, "driver_policy", "driver policy entry", file, ReadDriverPolicy,
              catalog.driver_policy, sources.driver_policy, diagnostics);
}

}  // namespace wsched::catalog
