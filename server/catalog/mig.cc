// Reading, checking and writing MIG slices in the catalog (mig.h).
#include "server/catalog/mig.h"

#include <algorithm>
#include <set>
#include <tuple>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "server/catalog/closest_name.h"
#include "server/catalog/units.h"
#include "server/catalog/validate.h"
#include "server/core/mig.h"
#include "server/core/mig_layout.h"
#include "server/core/mig_profiles.h"
#include "server/core/validation.h"

namespace wsched::catalog {
namespace {

// Keep in step with docs/catalog.md "Slices of a GPU".
constexpr absl::string_view kMigSizeKeys[] = {"memory", "compute"};
constexpr absl::string_view kPoolMigKeys[] = {"layout", "profiles"};
constexpr size_t kMaxProfileNameBytes = 64;
// The models core::KnownMigProfiles has a table for, as a catalog names them.
constexpr absl::string_view kModelsWithTables = "A100-40GB, A100-80GB, H100, H200";

std::string Quoted(absl::string_view text) {
  if (text.size() <= kMaxProfileNameBytes) return absl::StrCat("\"", text, "\"");
  return absl::StrCat("\"", text.substr(0, kMaxProfileNameBytes), "...\"");
}

// How core::FindProfile compares names: case aside.
std::string NormalName(absl::string_view name) { return absl::AsciiStrToLower(name); }

std::string Names(const std::vector<core::MigProfile>& table) {
  std::vector<absl::string_view> names;
  for (const core::MigProfile& profile : table) names.push_back(profile.name);
  return absl::StrJoin(names, ", ");
}

std::string SizeText(const MigSize& size) {
  std::vector<std::string> parts;
  if (size.memory_bytes) {
    parts.push_back(absl::StrCat(FormatSize(*size.memory_bytes), " of memory"));
  }
  if (size.compute_slices) {
    parts.push_back(
        absl::StrCat(*size.compute_slices, " compute slice", *size.compute_slices == 1 ? "" : "s"));
  }
  return absl::StrJoin(parts, " and ");
}

bool LargeEnough(const core::MigProfile& profile, const MigSize& size) {
  return (!size.memory_bytes || profile.memory_bytes >= *size.memory_bytes) &&
         (!size.compute_slices || profile.compute_slices >= *size.compute_slices);
}

// A profile of one model that is large enough, with where it came from so
// that equal sizes keep the models' and the table's order.
struct Candidate {
  const core::MigProfile* profile;
  size_t model;
  size_t row;
};

std::optional<int64_t> ReadMemory(const Field& field, Diagnostics& diagnostics) {
  std::optional<std::string> text = ReadScalar(field, "a size (\"20Gi\")", diagnostics);
  if (!text) return std::nullopt;
  absl::StatusOr<int64_t> bytes = ParseSizeWithUnit(*text);
  if (!bytes.ok()) {
    diagnostics.ParseError(field.path, bytes.status().message());
    return std::nullopt;
  }
  if (*bytes <= 0) {
    diagnostics.ParseError(field.path, "must be > 0");
    return std::nullopt;
  }
  return *bytes;
}

std::optional<int> ReadCompute(const Field& field, Diagnostics& diagnostics) {
  std::optional<int64_t> slices = ReadInt(field, diagnostics);
  if (!slices) return std::nullopt;
  if (*slices < 1 || *slices > core::kMigComputeSlices) {
    diagnostics.ParseError(
        field.path, absl::StrCat("must be 1..", core::kMigComputeSlices, " (compute slices of the ",
                                 core::kMigComputeSlices, " a GPU has), got ", *slices));
    return std::nullopt;
  }
  return static_cast<int>(*slices);
}

std::vector<std::string> ReadMigSize(const Field& field, const std::vector<std::string>* models,
                                     Diagnostics& diagnostics) {
  MapFields fields(field, kMigSizeKeys, diagnostics);
  const Field memory = fields.Get("memory");
  const Field compute = fields.Get("compute");
  if (!memory.present() && !compute.present()) {
    diagnostics.ParseError(field.path, "a size needs memory, compute or both");
    return {};
  }
  MigSize size;
  size.memory_bytes = ReadMemory(memory, diagnostics);
  size.compute_slices = ReadCompute(compute, diagnostics);
  // Unreadable models: their own error says enough.
  if (diagnostics.HasParseErrorUnder(field.path) || models == nullptr) return {};
  absl::StatusOr<std::vector<std::string>> profiles = ProfilesOfSize(*models, size);
  if (!profiles.ok()) {
    diagnostics.ParseError(field.path, profiles.status().message());
    return {};
  }
  return *std::move(profiles);
}

// The tables of `models`, or nullopt when one of them has none (or there
// are none): then nobody can tell which names exist.
std::optional<std::vector<const std::vector<core::MigProfile>*>> TablesOfEvery(
    const std::vector<std::string>& models) {
  if (models.empty()) return std::nullopt;
  std::vector<const std::vector<core::MigProfile>*> tables;
  for (const std::string& model : models) {
    const std::vector<core::MigProfile>* table = core::KnownMigProfiles(model);
    if (table == nullptr) return std::nullopt;
    tables.push_back(table);
  }
  return tables;
}

// "unknown MIG profile "1g.20gb" for H200; did you mean 1g.18gb? (H200:
// 1g.18gb, ...)". `tables` parallels `models`.
std::string UnknownProfile(absl::string_view name, const std::vector<std::string>& models,
                           const std::vector<const std::vector<core::MigProfile>*>& tables) {
  std::vector<absl::string_view> candidates;
  std::vector<std::string> listings;
  for (size_t k = 0; k < models.size(); ++k) {
    for (const core::MigProfile& profile : *tables[k]) candidates.push_back(profile.name);
    listings.push_back(absl::StrCat(models[k], ": ", Names(*tables[k])));
  }
  std::string message =
      absl::StrCat("unknown MIG profile ", Quoted(name), " for ", absl::StrJoin(models, " and "));
  if (std::optional<std::string> suggestion = ClosestName(name, candidates)) {
    absl::StrAppend(&message, "; did you mean ", *suggestion, "?");
  }
  absl::StrAppend(&message, " (", absl::StrJoin(listings, "; "), ")");
  return message;
}

// Name rules shared by a class's list and a pool's layout: present, short,
// printable, no spaces. True when the name passes.
bool CheckProfileName(const std::string& path, const std::string& name, Diagnostics& diagnostics) {
  if (name.empty()) {
    diagnostics.Error(path, "must not be empty");
    return false;
  }
  if (absl::StartsWith(name, "MIG ")) {
    diagnostics.Error(path, absl::StrCat(Quoted(name),
                                         ": write it without nvidia-smi's \"MIG \" prefix, "
                                         "like 1g.18gb"));
    return false;
  }
  if (!core::IsBoundedText(name, kMaxProfileNameBytes) || absl::StrContains(name, ' ')) {
    diagnostics.Error(path,
                      absl::StrCat("must be a MIG profile name like 1g.18gb (at most ",
                                   kMaxProfileNameBytes, " printable characters, no spaces)"));
    return false;
  }
  return true;
}

void CheckClassProfiles(const std::string& mig_path, const core::GpuRequirement& gpu,
                        Diagnostics& diagnostics) {
  if (gpu.mig_profiles.size() > kMaxListEntries) {
    diagnostics.Error(mig_path, absl::StrCat("has ", gpu.mig_profiles.size(), " entries; at most ",
                                             kMaxListEntries));
    return;
  }
  const auto tables = TablesOfEvery(gpu.models);
  std::set<std::string> seen;
  for (size_t k = 0; k < gpu.mig_profiles.size(); ++k) {
    const std::string path = absl::StrCat(mig_path, "[", k, "]");
    const std::string& name = gpu.mig_profiles[k];
    if (!CheckProfileName(path, name, diagnostics)) continue;
    if (!seen.insert(NormalName(name)).second) {
      diagnostics.Error(path, absl::StrCat(Quoted(name), " is listed twice"));
      continue;
    }
    // Only when every model says which names exist: a model without a
    // table may have any, and its GPUs' own reports decide.
    if (!tables) continue;
    const bool known = std::any_of(tables->begin(), tables->end(), [&](const auto* table) {
      return core::FindProfile(*table, name) != nullptr;
    });
    if (!known) diagnostics.Error(path, UnknownProfile(name, gpu.models, *tables));
  }
}

void CheckLayoutProfiles(const std::string& profiles_path, const core::NodePool& pool,
                         const std::vector<core::MigProfile>& table, Diagnostics& diagnostics) {
  const std::vector<std::string>& profiles = pool.mig.profiles;
  if (profiles.size() > kMaxListEntries) {
    diagnostics.Error(profiles_path,
                      absl::StrCat("has ", profiles.size(), " entries; at most ", kMaxListEntries));
    return;
  }
  bool all_known = true;
  for (size_t k = 0; k < profiles.size(); ++k) {
    const std::string path = absl::StrCat(profiles_path, "[", k, "]");
    if (!CheckProfileName(path, profiles[k], diagnostics)) {
      all_known = false;
    } else if (core::FindProfile(table, profiles[k]) == nullptr) {
      diagnostics.Error(path, UnknownProfile(profiles[k], {pool.shape.gpu_model}, {&table}));
      all_known = false;
    }
  }
  if (!all_known) return;  // Whether the rest fits says little before the names are right.
  core::MigLayoutPlan plan = core::LayOutMig(table, profiles);
  if (!plan.legal()) {
    diagnostics.Error(absl::StrCat(profiles_path, "[", plan.misfit->index, "]"),
                      absl::StrCat("does not fit on one GPU: ", plan.misfit->reason));
  }
}

// A name so that it reads back as the same name: the reader takes scalar
// text as is, so only what YAML would read as null needs quotes (yaml-cpp
// quotes anything else that would not survive).
void EmitName(YAML::Emitter& out, const std::string& name) {
  if (name.empty() || name == "~" || absl::EqualsIgnoreCase(name, "null")) {
    out << YAML::DoubleQuoted;
  }
  out << name;
}

}  // namespace

absl::StatusOr<std::vector<std::string>> ProfilesOfSize(const std::vector<std::string>& models,
                                                        const MigSize& size) {
  if (models.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("a size needs gpu.models to say whose profiles it means (built-in tables: ",
                     kModelsWithTables, "); or name the profiles"));
  }
  std::vector<const std::vector<core::MigProfile>*> tables;
  for (size_t m = 0; m < models.size(); ++m) {
    const std::vector<core::MigProfile>* table = core::KnownMigProfiles(models[m]);
    if (table == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(
          "gpu.models[", m, "] ", Quoted(models[m]), " has no built-in MIG table (",
          kModelsWithTables, "), so a size says nothing about its profiles; name the profiles"));
    }
    tables.push_back(table);
  }
  std::vector<Candidate> candidates;
  for (size_t m = 0; m < tables.size(); ++m) {
    const core::MigProfile* largest = nullptr;
    size_t before = candidates.size();
    for (size_t row = 0; row < tables[m]->size(); ++row) {
      const core::MigProfile& profile = (*tables[m])[row];
      if (core::UsesAllMediaEngines(profile.name)) continue;
      if (largest == nullptr || profile.memory_bytes > largest->memory_bytes) largest = &profile;
      if (LargeEnough(profile, size)) candidates.push_back({&profile, m, row});
    }
    if (candidates.size() == before) {
      return absl::InvalidArgumentError(absl::StrCat(
          "no MIG profile of ", models[m], " has at least ", SizeText(size), "; its largest is ",
          largest == nullptr ? "none" : largest->name,
          largest == nullptr ? "" : absl::StrCat(" (", FormatSize(largest->memory_bytes), ")")));
    }
  }
  // Smallest first; stable, so equal sizes keep the models' and tables' order.
  const auto size_of = [](const Candidate& c) {
    return std::make_tuple(c.profile->size, c.profile->compute_slices, c.profile->memory_bytes);
  };
  std::stable_sort(candidates.begin(), candidates.end(),
                   [&](const Candidate& a, const Candidate& b) { return size_of(a) < size_of(b); });
  std::vector<std::string> names;
  for (const Candidate& candidate : candidates) {
    const std::string& name = candidate.profile->name;
    if (std::find(names.begin(), names.end(), name) != names.end()) continue;
    // The name means a slice on every model that has it: too small on one
    // (A100 80GB's 1g.10gb has less memory than H100's) rules it out.
    const bool everywhere = std::all_of(tables.begin(), tables.end(), [&](const auto* table) {
      const core::MigProfile* same = core::FindProfile(*table, name);
      return same == nullptr || LargeEnough(*same, size);
    });
    if (everywhere) names.push_back(name);
  }
  return names;
}

std::vector<std::string> ReadClassMig(const Field& field, const std::vector<std::string>* models,
                                      Diagnostics& diagnostics) {
  if (!field.present()) return {};
  if (field.node.IsScalar()) {
    std::optional<std::string> name = ReadString(field, diagnostics);
    return name ? std::vector<std::string>{*name} : std::vector<std::string>{};
  }
  if (field.node.IsSequence()) {
    std::vector<std::string> names =
        ReadStringList(field, diagnostics).value_or(std::vector<std::string>{});
    // An empty list would silently turn the class into a CPU class.
    if (field.node.size() == 0) {
      diagnostics.ParseError(field.path, "must name at least one profile");
    }
    return names;
  }
  return ReadMigSize(field, models, diagnostics);
}

std::optional<core::MigLayout> ReadPoolMig(const Field& field, Diagnostics& diagnostics) {
  if (!field.present()) return std::nullopt;
  MapFields fields(field, kPoolMigKeys, diagnostics);
  if (!fields.is_map()) return std::nullopt;
  core::MigLayout layout;
  const Field kind = fields.Require("layout");
  if (std::optional<std::string> text = ReadString(kind, diagnostics)) {
    if (std::optional<core::MigLayoutKind> parsed = core::ParseMigLayoutKind(*text)) {
      layout.kind = *parsed;
    } else {
      diagnostics.ParseError(
          kind.path, absl::StrCat("must be whole, fixed or by_demand, got ", Quoted(*text)));
    }
  }
  if (auto profiles = ReadStringList(fields.Get("profiles"), diagnostics)) {
    layout.profiles = *std::move(profiles);
  }
  return layout;
}

void CheckClassMig(absl::string_view gpu_path, const core::GpuRequirement& gpu,
                   Diagnostics& diagnostics) {
  if (gpu.mig_profiles.empty()) return;
  if (gpu.count != 0) {
    diagnostics.Error(FieldPath(gpu_path, "count"),
                      absl::StrCat("must be 0 or absent with gpu.mig, got ", gpu.count,
                                   ": a slice class takes one MIG slice, not whole GPUs"));
  }
  if (gpu.isolation == core::Isolation::kVm) {
    diagnostics.Error(FieldPath(gpu_path, "isolation"),
                      "vm cannot take a MIG slice: a VM is given whole GPUs through VFIO; MIG "
                      "slices go to containers only");
  }
  if (gpu.links != core::GpuLinks::kAny) {
    diagnostics.Error(FieldPath(gpu_path, "links"),
                      absl::StrCat(core::GpuLinksName(gpu.links),
                                   " set with gpu.mig: a slice class holds one slice, so there "
                                   "is nothing to link"));
  }
  CheckClassProfiles(FieldPath(gpu_path, "mig"), gpu, diagnostics);
}

void CheckPoolMig(absl::string_view pool_path, const core::NodePool& pool,
                  Diagnostics& diagnostics) {
  const std::string mig_path = FieldPath(pool_path, "mig");
  const std::string layout_path = FieldPath(mig_path, "layout");
  const std::string profiles_path = FieldPath(mig_path, "profiles");
  // An unreadable layout reads as whole: judging the rest by it misleads.
  if (diagnostics.HasParseErrorAt(layout_path)) return;
  const core::MigLayout& mig = pool.mig;
  const std::string kind = Quoted(core::MigLayoutKindName(mig.kind));
  if (mig.kind == core::MigLayoutKind::kWhole) {
    if (!mig.profiles.empty()) {
      diagnostics.Error(profiles_path, "set with layout whole: a whole GPU has no slices");
    }
    return;
  }
  if (!pool.is_gpu()) {
    diagnostics.Error(layout_path, absl::StrCat(kind, " needs a GPU pool (node.gpus is ",
                                                pool.shape.gpus_per_node, ")"));
    return;
  }
  if (pool.gpu_binding == core::GpuBinding::kVfio) {
    diagnostics.Error(layout_path,
                      absl::StrCat(kind,
                                   " with gpu_binding vfio: GPUs bound to vfio-pci go whole "
                                   "to VMs; MIG slices are for containers only"));
  }
  const std::vector<core::MigProfile>* table = core::KnownMigProfiles(pool.shape.gpu_model);
  if (table == nullptr) {
    diagnostics.Error(
        layout_path,
        absl::StrCat(kind, " needs a node.gpu_model with a built-in MIG table (", kModelsWithTables,
                     "); ", Quoted(pool.shape.gpu_model), " has none"));
    return;
  }
  if (mig.kind == core::MigLayoutKind::kFixed && mig.profiles.empty()) {
    diagnostics.Error(profiles_path,
                      "is required with layout fixed: the profiles every GPU is cut into");
    return;
  }
  CheckLayoutProfiles(profiles_path, pool, *table, diagnostics);
}

void EmitClassMig(YAML::Emitter& out, const std::vector<std::string>& profiles) {
  if (profiles.size() == 1) {
    EmitName(out, profiles[0]);
    return;
  }
  out << YAML::Flow << YAML::BeginSeq;
  for (const std::string& profile : profiles) EmitName(out, profile);
  out << YAML::EndSeq;
}

void EmitPoolMig(YAML::Emitter& out, const core::MigLayout& layout) {
  out << YAML::Flow << YAML::BeginMap;
  out << YAML::Key << "layout" << YAML::Value << core::MigLayoutKindName(layout.kind);
  if (!layout.profiles.empty()) {
    out << YAML::Key << "profiles" << YAML::Value << YAML::Flow << YAML::BeginSeq;
    for (const std::string& profile : layout.profiles) EmitName(out, profile);
    out << YAML::EndSeq;
  }
  out << YAML::EndMap;
}

std::string FormatMigLayout(const core::MigLayout& layout) {
  std::string text = core::MigLayoutKindName(layout.kind);
  if (!layout.profiles.empty()) {
    absl::StrAppend(&text, " [", absl::StrJoin(layout.profiles, ", "), "]");
  }
  return text;
}

}  // namespace wsched::catalog
