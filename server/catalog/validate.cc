#include "server/catalog/validate.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "absl/algorithm/container.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "server/catalog/idle.h"
#include "server/catalog/mig.h"
#include "server/catalog/schedules.h"
#include "server/catalog/units.h"
#include "server/core/feasibility.h"
#include "server/core/mig_profiles.h"
#include "server/core/quantity.h"
#include "server/core/validation.h"

namespace wsched::catalog {
namespace {

using core::Catalog;
using core::DriverPolicyEntry;
using core::NodePool;
using core::WorkspaceClass;

constexpr int64_t kMaxDeviceMajor = 4095;     // 12 bits in Linux dev_t.
constexpr int64_t kMaxDeviceMinor = 1048575;  // 20 bits.
constexpr size_t kMaxDevicePathBytes = 256;
constexpr size_t kMaxLabelKeyBytes = 253 + 1 + 63;
constexpr size_t kMaxLabelValueBytes = 63;
constexpr size_t kMaxKernelBytes = 128;
constexpr size_t kMaxOsFieldBytes = 64;
constexpr size_t kMaxDriverFieldBytes = 32;
constexpr size_t kMaxRepoBytes = 255;

bool IsDigits(absl::string_view text) {
  return !text.empty() && absl::c_all_of(text, [](char c) { return absl::ascii_isdigit(c); });
}

// "550.54.15": numbers joined by single dots.
bool IsDottedNumber(absl::string_view text) {
  for (absl::string_view part : absl::StrSplit(text, '.')) {
    if (!IsDigits(part)) return false;
  }
  return true;
}

bool AllOf(absl::string_view text, absl::string_view extra_chars, bool allow_upper = true) {
  for (char c : text) {
    const bool ok = absl::ascii_isdigit(c) || absl::ascii_islower(c) ||
                    (allow_upper && absl::ascii_isupper(c)) ||
                    extra_chars.find(c) != absl::string_view::npos;
    if (!ok) return false;
  }
  return true;
}

// Kubernetes label name or value: [A-Za-z0-9._-], alphanumeric at both ends.
bool IsLabelName(absl::string_view text) {
  return !text.empty() && text.size() <= 63 && AllOf(text, "._-") &&
         absl::ascii_isalnum(text.front()) && absl::ascii_isalnum(text.back());
}

// "[dns-subdomain/]name", as Kubernetes label keys.
bool IsLabelKey(absl::string_view key) {
  const size_t slash = key.find('/');
  if (slash == absl::string_view::npos) return IsLabelName(key);
  return core::IsDnsSubdomain(key.substr(0, slash)) && IsLabelName(key.substr(slash + 1));
}

bool IsLabelValue(absl::string_view value) { return value.empty() || IsLabelName(value); }

std::string Quoted(absl::string_view text) {
  constexpr size_t kLimit = 64;
  if (text.size() <= kLimit) return absl::StrCat("\"", text, "\"");
  return absl::StrCat("\"", text.substr(0, kLimit), "...\"");
}

class CatalogValidator {
 public:
  CatalogValidator(const Catalog& catalog, const CatalogSources& sources, Diagnostics& diagnostics,
                   const ValidationOptions& options)
      : catalog_(catalog),
        sources_(SourcesFor(catalog, sources)),
        diagnostics_(diagnostics),
        options_(options) {}

  void Run() {
    CheckListSizes();
    for (size_t i = 0; i < catalog_.classes.size(); ++i) CheckClass(i);
    for (size_t i = 0; i < catalog_.pools.size(); ++i) CheckPool(i);
    for (size_t i = 0; i < catalog_.driver_policy.size(); ++i) CheckDriverPolicy(i);
    CheckUniqueIds();
    CheckDriverPolicyOverlaps();
    CheckExactlyOneDefault();
    CheckEveryClassHasAPool();
    WarnAboutUnusedPools();
    WarnAboutMissingDriverPolicy();
  }

 private:
  // A mismatched sources object would misname every element; fall back to
  // plain indices rather than trusting it.
  static CatalogSources SourcesFor(const Catalog& catalog, const CatalogSources& sources) {
    if (sources.classes.size() == catalog.classes.size() &&
        sources.pools.size() == catalog.pools.size() &&
        sources.driver_policy.size() == catalog.driver_policy.size()) {
      return sources;
    }
    return CatalogSources::Positional(catalog);
  }

  std::string ClassPath(size_t i) const {
    return ElementPath("classes", sources_.classes[i], catalog_.classes[i].id);
  }
  std::string PoolPath(size_t i) const {
    return ElementPath("pools", sources_.pools[i], catalog_.pools[i].id);
  }
  std::string PolicyPath(size_t i) const {
    return ElementPath("driver_policy", sources_.driver_policy[i], "");
  }

  void Error(absl::string_view path, absl::string_view message) {
    diagnostics_.Error(path, message);
  }
  void Error(absl::string_view parent, absl::string_view field, absl::string_view message) {
    diagnostics_.Error(FieldPath(parent, field), message);
  }

  void CheckListSizes() {
    const auto bound = [this](absl::string_view list, size_t size, int limit) {
      if (size > static_cast<size_t>(limit)) {
        Error(list, absl::StrCat("has ", size, " entries; at most ", limit));
      }
    };
    bound("classes", catalog_.classes.size(), kMaxClasses);
    bound("pools", catalog_.pools.size(), kMaxPools);
    bound("driver_policy", catalog_.driver_policy.size(), kMaxDriverPolicyEntries);
  }

  void CheckId(absl::string_view path, absl::string_view id) {
    if (id.empty()) {
      Error(path, "id", "is required");
    } else if (!core::IsDnsLabel(id)) {
      Error(path, "id",
            absl::StrCat(Quoted(id),
                         " is not a DNS label (1-63 lower-case letters, digits and '-', "
                         "starting and ending with a letter or digit)"));
    }
  }

  void CheckText(absl::string_view path, absl::string_view field, absl::string_view text,
                 size_t max_bytes, bool required, bool allow_newlines = false) {
    if (text.empty()) {
      if (required) Error(path, field, "is required");
      return;
    }
    if (text.size() > max_bytes) {
      Error(path, field, absl::StrCat("is ", text.size(), " bytes; at most ", max_bytes));
      return;
    }
    bool printable = true;
    for (absl::string_view line : absl::StrSplit(text, '\n')) {
      printable = printable && core::IsBoundedText(line, max_bytes);
    }
    if (!printable || (!allow_newlines && absl::StrContains(text, '\n'))) {
      Error(path, field, "must not contain control characters");
    }
  }

  void CheckRequiredCpu(absl::string_view path, absl::string_view field, int64_t millis) {
    // 0 is how a missing one reads.
    if (millis == 0) Error(path, field, "is required");
    if (millis < 0) Error(path, field, "must be > 0");
  }
  void CheckRequiredSize(absl::string_view path, absl::string_view field, int64_t bytes) {
    if (bytes == 0) {
      Error(path, field, "is required");
    } else {
      CheckOptionalSize(path, field, bytes);
    }
  }
  void CheckOptionalSize(absl::string_view path, absl::string_view field, int64_t bytes) {
    if (bytes < 0) {
      Error(path, field, "must be > 0");
    } else if (!HasSizeText(bytes)) {
      // Only reachable through the API: a file always carries a unit. Such a
      // size could not be written back to a catalog file.
      Error(path, field, absl::StrCat(bytes, " bytes is not a whole number of k or Ki"));
    }
  }

  void CheckLabels(absl::string_view path, const std::map<std::string, std::string>& labels) {
    if (labels.size() > kMaxListEntries) {
      Error(path, absl::StrCat("has ", labels.size(), " entries; at most ", kMaxListEntries));
      return;
    }
    for (const auto& [key, value] : labels) {
      const std::string key_path = FieldPath(path, key);
      if (key.size() > kMaxLabelKeyBytes || !IsLabelKey(key)) {
        Error(key_path, absl::StrCat(Quoted(key),
                                     " is not a label key ([prefix/]name; name: 1-63 letters, "
                                     "digits, '-', '_' or '.', starting and ending alphanumeric)"));
      }
      if (value.size() > kMaxLabelValueBytes || !IsLabelValue(value)) {
        Error(key_path, absl::StrCat(Quoted(value),
                                     " is not a label value (at most 63 letters, digits, '-', "
                                     "'_' or '.', starting and ending alphanumeric)"));
      }
    }
  }

  void CheckClass(size_t i) {
    const WorkspaceClass& cls = catalog_.classes[i];
    const std::string path = ClassPath(i);
    CheckId(path, cls.id);
    CheckText(path, "display_name", cls.display_name, kMaxDisplayNameBytes, /*required=*/true);
    CheckText(path, "description", cls.description, kMaxDescriptionBytes, /*required=*/false,
              /*allow_newlines=*/true);
    CheckText(path, "category", cls.category, kMaxCategoryBytes, /*required=*/false);
    CheckResources(FieldPath(path, "resources"), cls.resources);
    CheckGpu(FieldPath(path, "gpu"), cls.gpu);
    CheckDevices(FieldPath(path, "devices"), cls.devices);
    CheckLabels(FieldPath(path, "pool_selector"), cls.pool_selector);
    if (cls.credits_per_minute_milli < 0) Error(path, "credits_per_minute", "must be >= 0");
    if (cls.is_default && cls.deprecated) {
      Error(path, "deprecated",
            "the default class cannot be deprecated; new workspaces fall back to it");
    }
    if (cls.idle) {
      // An unreadable gpu map says nothing about whether the class has GPUs.
      // A slice is a GPU's share: it sits idle as a GPU does.
      const bool gpu =
          cls.is_gpu() || cls.is_slice() || diagnostics_.HasParseErrorUnder(FieldPath(path, "gpu"));
      CheckIdlePolicy(FieldPath(path, "idle"), *cls.idle, gpu, options_.min_idle_for, diagnostics_);
    }
  }

  void CheckResources(absl::string_view path, const core::ClassResources& resources) {
    CheckRequiredCpu(path, "cpu", resources.cpu_request_millis);
    if (resources.cpu_request_millis > 0 &&
        resources.cpu_limit_millis < resources.cpu_request_millis) {
      Error(path, "cpu_limit",
            absl::StrCat("must be >= cpu (", core::FormatCpuMillis(resources.cpu_request_millis),
                         ")"));
    }
    CheckRequiredSize(path, "memory", resources.memory_bytes);
    CheckOptionalSize(path, "ephemeral_storage", resources.ephemeral_storage_bytes);
    CheckOptionalSize(path, "disk", resources.disk_bytes);
  }

  void CheckGpu(absl::string_view path, const core::GpuRequirement& gpu) {
    // An unreadable gpu.mig still marks a slice class: its count, links
    // and models are judged as a slice class's.
    const bool slice =
        !gpu.mig_profiles.empty() || diagnostics_.HasParseErrorUnder(FieldPath(path, "mig"));
    CheckClassMig(path, gpu, diagnostics_);
    if (gpu.count < 0) Error(path, "count", "must be >= 0");
    if (gpu.count > kMaxGpusPerClass)
      Error(path, "count", absl::StrCat("must be <= ", kMaxGpusPerClass));
    if (gpu.links != core::GpuLinks::kAny && gpu.count < 2 && !slice) {
      // One GPU has no peer to be linked to; the setting would read as a
      // promise placement cannot keep or break.
      Error(path, "links",
            absl::StrCat(core::GpuLinksName(gpu.links), " needs gpu.count >= 2, got ", gpu.count));
    }
    const std::string models_path = FieldPath(path, "models");
    if (gpu.count == 0 && !gpu.models.empty() && !slice) {
      Error(models_path, "set on a class without GPUs (gpu.count is 0)");
    }
    if (gpu.models.size() > kMaxListEntries) {
      Error(models_path,
            absl::StrCat("has ", gpu.models.size(), " entries; at most ", kMaxListEntries));
      return;
    }
    std::set<absl::string_view> seen;
    for (size_t k = 0; k < gpu.models.size(); ++k) {
      const std::string model_path = absl::StrCat(models_path, "[", k, "]");
      const std::string& model = gpu.models[k];
      if (model.empty()) {
        Error(model_path, "must not be empty");
      } else if (!core::IsBoundedText(model, kMaxModelNameBytes)) {
        Error(model_path, absl::StrCat("must be at most ", kMaxModelNameBytes, " printable bytes"));
      } else if (!seen.insert(model).second) {
        Error(model_path, absl::StrCat(Quoted(model), " is listed twice"));
      }
    }
  }

  void CheckDevice(absl::string_view path, const core::DeviceNode& device) {
    const std::string path_field = FieldPath(path, "path");
    if (!absl::StartsWith(device.path, "/dev/") || device.path.size() > kMaxDevicePathBytes ||
        !core::IsBoundedText(device.path, kMaxDevicePathBytes) ||
        absl::StrContains(device.path, " ") || absl::StrContains(device.path, "/../") ||
        absl::EndsWith(device.path, "/..")) {
      Error(path_field, absl::StrCat(Quoted(device.path), " must be a plain path under /dev/"));
    } else if (absl::StartsWith(device.path, "/dev/nvidia") ||
               absl::StartsWith(device.path, "/dev/vfio")) {
      // Listing a GPU node here would hand it to every workspace of the
      // class, bypassing the one-holder-per-GPU rule.
      Error(path_field,
            absl::StrCat(Quoted(device.path),
                         " is a GPU device; placement adds those for the GPUs it assigns"));
    }
    if (device.type != 'c' && device.type != 'b')
      Error(path, "type", "must be c (character) or b (block)");
    if (device.major < 0 || device.major > kMaxDeviceMajor) {
      Error(path, "major", absl::StrCat("must be between 0 and ", kMaxDeviceMajor));
    }
    if (device.minor < 0 || device.minor > kMaxDeviceMinor) {
      Error(path, "minor", absl::StrCat("must be between 0 and ", kMaxDeviceMinor));
    }
    std::set<char> seen;
    bool ok = !device.permissions.empty();
    for (char c : device.permissions)
      ok = ok && (c == 'r' || c == 'w' || c == 'm') && seen.insert(c).second;
    if (!ok) {
      Error(path, "permissions",
            absl::StrCat("must combine r, w and m (each once), got ", Quoted(device.permissions)));
    }
  }

  void CheckDevices(absl::string_view path, const std::vector<core::DeviceNode>& devices) {
    if (devices.size() > kMaxListEntries) {
      Error(path, absl::StrCat("has ", devices.size(), " entries; at most ", kMaxListEntries));
      return;
    }
    std::set<absl::string_view> seen;
    for (size_t k = 0; k < devices.size(); ++k) {
      const std::string device_path = absl::StrCat(path, "[", k, "]");
      CheckDevice(device_path, devices[k]);
      if (!seen.insert(devices[k].path).second) {
        Error(device_path, absl::StrCat(Quoted(devices[k].path), " is listed twice"));
      }
    }
  }

  void CheckPool(size_t i) {
    const NodePool& pool = catalog_.pools[i];
    const std::string path = PoolPath(i);
    CheckId(path, pool.id);
    CheckLabels(FieldPath(path, "labels"), pool.labels);
    CheckNodeShape(FieldPath(path, "node"), pool.shape);
    if (pool.min_size < 0) Error(path, "min_size", "must be >= 0");
    if (pool.max_size < std::max(pool.min_size, 0)) {
      Error(path, "max_size",
            absl::StrCat("must be >= min_size (", std::max(pool.min_size, 0), ")"));
    } else if (pool.max_size > kMaxPoolSize) {
      Error(path, "max_size", absl::StrCat("must be <= ", kMaxPoolSize));
    }
    CheckWarmBuffer(FieldPath(path, "warm_buffer"), pool.warm_buffer, pool.max_size,
                    diagnostics_);
    const std::string scale_down = FieldPath(path, "scale_down");
    if (pool.scale_down.unneeded < absl::ZeroDuration())
      Error(scale_down, "unneeded", "must be >= 0");
    if (pool.scale_down.delay_after_add < absl::ZeroDuration()) {
      Error(scale_down, "delay_after_add", "must be >= 0");
    }
    CheckScaleDownSchedule(FieldPath(scale_down, "schedule"), pool.scale_down.schedule,
                           diagnostics_);
    if (pool.max_node_provision_time <= absl::ZeroDuration()) {
      Error(path, "max_node_provision_time", "must be > 0");
    }
    if (pool.allow_unsafe_iommu && !pool.is_gpu()) {
      diagnostics_.Warning(FieldPath(path, "allow_unsafe_iommu"),
                           "has no effect on a pool without GPUs");
    }
    if (pool.gpu_binding != core::GpuBinding::kHost && !pool.is_gpu()) {
      diagnostics_.Warning(FieldPath(path, "gpu_binding"), "has no effect on a pool without GPUs");
    }
    if (pool.driver_install != core::DriverInstall::kManual && !pool.is_gpu()) {
      diagnostics_.Warning(FieldPath(path, "driver_install"), "has no effect on a pool without GPUs");
    } else if (pool.driver_install != core::DriverInstall::kManual &&
               pool.gpu_binding == core::GpuBinding::kVfio) {
      diagnostics_.Warning(FieldPath(path, "driver_install"),
                           "has no effect with gpu_binding vfio: the host needs no NVIDIA driver");
    }
    const std::string rollout = FieldPath(path, "driver_rollout");
    if (pool.driver_rollout.max_unavailable < 1) {
      Error(rollout, "max_unavailable", "must be >= 1");
    } else if (pool.max_size > 0 && pool.driver_rollout.max_unavailable > pool.max_size) {
      Error(rollout, "max_unavailable",
            absl::StrCat("must be <= max_size (", pool.max_size, ")"));
    }
    if (pool.driver_rollout.drain_deadline < absl::ZeroDuration()) {
      Error(rollout, "drain_deadline", "must be >= 0");
    }
    CheckPoolMig(path, pool, diagnostics_);
  }

  void CheckNodeShape(absl::string_view path, const core::NodeShape& shape) {
    CheckRequiredCpu(path, "cpu", shape.cpu_millis);
    CheckRequiredSize(path, "memory", shape.memory_bytes);
    CheckOptionalSize(path, "ephemeral_storage", shape.ephemeral_storage_bytes);
    CheckOptionalSize(path, "disk", shape.disk_bytes);
    if (shape.gpus_per_node < 0) Error(path, "gpus", "must be >= 0");
    if (shape.gpus_per_node > kMaxGpusPerNode)
      Error(path, "gpus", absl::StrCat("must be <= ", kMaxGpusPerNode));
    if (shape.gpus_per_node > 0 && shape.gpu_model.empty()) {
      Error(path, "gpu_model",
            absl::StrCat("is required for a GPU pool (node.gpus is ", shape.gpus_per_node, ")"));
    } else if (shape.gpus_per_node == 0 && !shape.gpu_model.empty()) {
      Error(path, "gpu_model", "set on a pool without GPUs (node.gpus is 0)");
    } else if (!core::IsBoundedText(shape.gpu_model, kMaxModelNameBytes)) {
      Error(path, "gpu_model",
            absl::StrCat("must be at most ", kMaxModelNameBytes, " printable bytes"));
    }
  }

  void CheckDriverPolicy(size_t i) {
    const DriverPolicyEntry& entry = catalog_.driver_policy[i];
    const std::string path = PolicyPath(i);
    const auto check = [&](absl::string_view field, absl::string_view value, size_t max_bytes,
                           bool required, bool valid, absl::string_view what) {
      if (value.empty()) {
        if (required) Error(path, field, "is required");
      } else if (value.size() > max_bytes || !valid) {
        Error(path, field, absl::StrCat(Quoted(value), " is not ", what));
      }
    };
    check("kernel", entry.kernel, kMaxKernelBytes, true, AllOf(entry.kernel, "._+~-*?"),
          "a kernel release or pattern (letters, digits, '.', '-', '_', '+', '~'; '*' and '?' as "
          "wildcards)");
    check("os_id", entry.os_id, kMaxOsFieldBytes, true, AllOf(entry.os_id, "._-", false),
          "an os-release ID (lower-case letters, digits, '.', '_', '-')");
    check("os_version", entry.os_version, kMaxOsFieldBytes, false, AllOf(entry.os_version, "._~-"),
          "an os-release VERSION_ID (letters, digits, '.', '_', '-')");
    const bool version_ok = IsDottedNumber(entry.driver_version);
    check("driver_version", entry.driver_version, kMaxDriverFieldBytes, true, version_ok,
          "a driver version (like 550.54.15)");
    check("driver_branch", entry.driver_branch, kMaxDriverFieldBytes, true,
          !entry.driver_branch.empty() && AllOf(entry.driver_branch, "._-") &&
              absl::ascii_isalnum(entry.driver_branch.front()),
          "a driver branch (like 550)");
    // A numeric branch must be the version's first component; a mismatch
    // would install one driver under another's image tag.
    if (version_ok && IsDigits(entry.driver_branch) &&
        !absl::StartsWith(entry.driver_version, entry.driver_branch + ".")) {
      Error(path, "driver_version",
            absl::StrCat(entry.driver_version, " is not on driver_branch ", entry.driver_branch));
    }
    CheckInstallerRepo(path, entry.installer_repo);
  }

  void CheckInstallerRepo(absl::string_view path, absl::string_view repo) {
    if (repo.empty()) {
      Error(path, "installer_repo", "is required");
      return;
    }
    if (repo.size() > kMaxRepoBytes || !AllOf(repo, "._-/:", false) ||
        absl::StartsWith(repo, "/") || absl::EndsWith(repo, "/") || absl::StrContains(repo, "//")) {
      Error(path, "installer_repo",
            absl::StrCat(Quoted(repo),
                         " is not an image repository (lower-case letters, digits, '.', '_', "
                         "'-', '/' and a registry port)"));
      return;
    }
    const size_t last_slash = repo.rfind('/');
    const absl::string_view last =
        last_slash == absl::string_view::npos ? repo : repo.substr(last_slash + 1);
    if (absl::StrContains(last, ':')) {
      Error(path, "installer_repo",
            absl::StrCat(Quoted(repo),
                         " has a tag; give the repository only, the tag is built as "
                         "<driver_branch>-<kernel>-<os_id><os_version>"));
    }
  }

  // Ids name objects across the store, the API and running workspaces, so
  // two elements with one id would make every reference ambiguous.
  template <typename T>
  void CheckUnique(const std::vector<T>& items, absl::string_view list,
                   const std::vector<ElementSource>& sources,
                   std::string (CatalogValidator::*path_of)(size_t) const) {
    std::map<absl::string_view, size_t> first;
    for (size_t i = 0; i < items.size(); ++i) {
      if (!core::IsDnsLabel(items[i].id)) continue;
      auto [it, inserted] = first.emplace(items[i].id, i);
      if (!inserted) {
        Error((this->*path_of)(i), "id",
              absl::StrCat(Quoted(items[i].id), " is already used by ",
                           ElementPath(list, sources[it->second], "")));
      }
    }
  }

  void CheckUniqueIds() {
    CheckUnique(catalog_.classes, "classes", sources_.classes, &CatalogValidator::ClassPath);
    CheckUnique(catalog_.pools, "pools", sources_.pools, &CatalogValidator::PoolPath);
  }

  // Two entries for the same kernel and OS would make the driver a node
  // needs depend on list order.
  void CheckDriverPolicyOverlaps() {
    std::map<std::tuple<absl::string_view, absl::string_view, absl::string_view>, size_t> first;
    for (size_t i = 0; i < catalog_.driver_policy.size(); ++i) {
      const DriverPolicyEntry& entry = catalog_.driver_policy[i];
      if (entry.kernel.empty() || entry.os_id.empty()) continue;
      auto [it, inserted] = first.emplace(
          std::make_tuple(absl::string_view(entry.kernel), absl::string_view(entry.os_id),
                          absl::string_view(entry.os_version)),
          i);
      if (!inserted) {
        Error(PolicyPath(i),
              absl::StrCat("same kernel, os_id and os_version as ",
                           ElementPath("driver_policy", sources_.driver_policy[it->second], "")));
      }
    }
  }

  void CheckExactlyOneDefault() {
    std::vector<std::string> defaults;
    for (size_t i = 0; i < catalog_.classes.size(); ++i) {
      // An unreadable `default:` makes the count unknowable; its own error says enough.
      if (diagnostics_.HasParseErrorAt(FieldPath(ClassPath(i), "default"))) return;
      if (catalog_.classes[i].is_default) {
        const std::string& id = catalog_.classes[i].id;
        defaults.push_back(core::IsDnsLabel(id) ? id
                                                : ElementPath("classes", sources_.classes[i], ""));
      }
    }
    if (defaults.empty()) {
      if (diagnostics_.IsIncomplete("classes")) return;
      Error("classes", "no default class; mark exactly one class with default: true");
    } else if (defaults.size() > 1) {
      Error("classes", absl::StrCat(defaults.size(), " default classes (",
                                    absl::StrJoin(defaults, ", "), "); mark exactly one"));
    }
  }

  std::string PoolName(size_t j) const {
    const std::string& id = catalog_.pools[j].id;
    return core::IsDnsLabel(id) ? id : ElementPath("pools", sources_.pools[j], "");
  }

  // The "can never fit" check (docs/placement.md "Feasibility"): a class no pool can
  // hold would leave its workspaces pending forever, so it is an error here
  // rather than a surprise at the first start. core::CanEverHold is the
  // rule placement applies too, so what passes here is never "Never" there.
  void CheckEveryClassHasAPool() {
    for (size_t i = 0; i < catalog_.classes.size(); ++i) {
      const std::string path = ClassPath(i);
      if (diagnostics_.HasParseErrorUnder(path)) continue;
      const WorkspaceClass& cls = catalog_.classes[i];
      std::vector<std::string> reasons;
      bool holdable = false;
      bool unknown = false;
      for (size_t j = 0; j < catalog_.pools.size() && !holdable; ++j) {
        if (diagnostics_.HasParseErrorUnder(PoolPath(j))) {
          unknown = true;  // A pool we could not read might have held it.
          continue;
        }
        core::PoolVerdict verdict = core::CanEverHold(cls, catalog_.pools[j], catalog_.pools);
        if (verdict.feasible()) {
          holdable = true;
        } else {
          reasons.push_back(absl::StrCat(PoolName(j), ": ", verdict.message));
        }
      }
      if (holdable || unknown || diagnostics_.IsIncomplete("pools")) {
        if (holdable) {
          WarnAboutUnofferedModels(i);
          WarnAboutSlicesNoPoolCuts(i);
        }
        continue;
      }
      Error(path,
            absl::StrCat(
                "no pool can ever hold this class (",
                reasons.empty() ? "the catalog has no pools" : absl::StrJoin(reasons, "; "), ")"));
    }
  }

  // A fallback model no pool offers is harmless but probably a typo.
  void WarnAboutUnofferedModels(size_t i) {
    const WorkspaceClass& cls = catalog_.classes[i];
    for (size_t k = 0; k < cls.gpu.models.size(); ++k) {
      bool offered = false;
      for (const NodePool& pool : catalog_.pools) {
        offered = offered ||
                  (pool.shape.gpu_model == cls.gpu.models[k] && pool.Matches(cls.pool_selector));
      }
      if (!offered) {
        diagnostics_.Warning(absl::StrCat(FieldPath(ClassPath(i), "gpu.models"), "[", k, "]"),
                             absl::StrCat("no pool matching the class offers ",
                                          Quoted(cls.gpu.models[k]), "; this model is never used"));
      }
    }
  }

  // Placement hands out the slices GPUs report (docs/placement.md
  // "Slices"). A pool laid out whole, or fixed without any of the class's
  // profiles, makes none of them: only GPUs cut by hand would serve the
  // class. Legal, but most likely an oversight.
  void WarnAboutSlicesNoPoolCuts(size_t i) {
    const WorkspaceClass& cls = catalog_.classes[i];
    if (!cls.is_slice()) return;
    for (size_t j = 0; j < catalog_.pools.size(); ++j) {
      const NodePool& pool = catalog_.pools[j];
      if (diagnostics_.HasParseErrorUnder(PoolPath(j))) return;  // It might have cut them.
      if (core::FirstInfeasibility(cls, pool, catalog_.pools)) continue;
      if (pool.mig.kind == core::MigLayoutKind::kByDemand) return;
      if (pool.mig.kind == core::MigLayoutKind::kFixed && LaysOutAnyOf(pool, cls)) return;
    }
    diagnostics_.Warning(
        FieldPath(ClassPath(i), "gpu.mig"),
        absl::StrCat("no pool that can hold this class cuts its GPUs into any of [",
                     absl::StrJoin(cls.gpu.mig_profiles, ", "),
                     "] (their mig.layout is whole, or fixed without these profiles); only GPUs "
                     "cut by hand would serve it"));
  }

  static bool LaysOutAnyOf(const NodePool& pool, const WorkspaceClass& cls) {
    const std::vector<core::MigProfile>* table = core::KnownMigProfiles(pool.shape.gpu_model);
    if (table == nullptr) return true;  // Not judged: the layout's own check says why.
    for (const std::string& wanted : cls.gpu.mig_profiles) {
      const core::MigProfile* profile = core::FindProfile(*table, wanted);
      for (const std::string& laid_out : pool.mig.profiles) {
        if (profile != nullptr && profile == core::FindProfile(*table, laid_out)) return true;
      }
    }
    return false;
  }

  void WarnAboutUnusedPools() {
    if (diagnostics_.IsIncomplete("classes")) return;
    for (size_t i = 0; i < catalog_.classes.size(); ++i) {
      if (diagnostics_.HasParseErrorUnder(ClassPath(i))) return;  // It might have used the pool.
    }
    for (size_t j = 0; j < catalog_.pools.size(); ++j) {
      if (diagnostics_.HasParseErrorUnder(PoolPath(j)) || catalog_.pools[j].max_size <= 0) continue;
      bool used = false;
      for (const WorkspaceClass& cls : catalog_.classes) {
        used = used || !core::FirstInfeasibility(cls, catalog_.pools[j], catalog_.pools);
      }
      if (!used) diagnostics_.Warning(PoolPath(j), "no class can use this pool");
    }
  }

  void WarnAboutMissingDriverPolicy() {
    const bool has_gpu_pool =
        absl::c_any_of(catalog_.pools, [](const NodePool& p) { return p.is_gpu(); });
    if (has_gpu_pool && catalog_.driver_policy.empty() &&
        !diagnostics_.IsIncomplete("driver_policy")) {
      diagnostics_.Warning(
          "driver_policy",
          "is empty but the catalog has GPU pools; their nodes never become ready for GPU "
          "workspaces");
    }
  }

  const Catalog& catalog_;
  const CatalogSources sources_;
  Diagnostics& diagnostics_;
  const ValidationOptions options_;
};

}  // namespace

void ValidateCatalog(const core::Catalog& catalog, const CatalogSources& sources,
                     Diagnostics& diagnostics, const ValidationOptions& options) {
  CatalogValidator(catalog, sources, diagnostics, options).Run();
}

CatalogCheck CheckCatalog(core::Catalog catalog, const ValidationOptions& options) {
  Diagnostics diagnostics;
  ValidateCatalog(catalog, CatalogSources::Positional(catalog), diagnostics, options);
  CatalogCheck check = ToCheck(std::move(catalog), diagnostics);
  check.rules = options;
  return check;
}

}  // namespace wsched::catalog
