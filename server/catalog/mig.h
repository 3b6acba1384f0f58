// MIG slices in catalog YAML: a class's `gpu.mig` and a pool's `mig` layout.
//
//   classes: gpu: {mig: 1g.18gb}, {mig: [1g.18gb, 2g.35gb]}, or by size,
//            {mig: {memory: 20Gi, compute: 2}, models: [H200]}
//   pools:   mig: {layout: fixed, profiles: [3g.71gb, 2g.35gb, 1g.18gb, 1g.18gb]}
//
// Reading, the value rules and writing back live together here so the three
// stay in step. Reference: docs/catalog.md "Slices of a GPU".
#ifndef WSCHED_SERVER_CATALOG_MIG_H_
#define WSCHED_SERVER_CATALOG_MIG_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "server/catalog/diagnostics.h"
#include "server/catalog/yaml_fields.h"
#include "server/core/pool.h"
#include "server/core/workspace_class.h"
#include "yaml-cpp/yaml.h"

namespace wsched::catalog {

// A slice asked for by size: at least this much of each that is set.
struct MigSize {
  std::optional<int64_t> memory_bytes;
  std::optional<int> compute_slices;
};

// The built-in profiles (core/mig_profiles.h) of `models` that are at least
// `size`, smallest first: fewest memory slots, then fewest compute slices,
// then least memory. A name two models share is kept only when it is large
// enough on both. "+me" profiles (all of a GPU's media engines) are left
// out: a size says nothing about media. InvalidArgument, for people, when
// `models` is empty, when a model has no built-in table, or when a model
// has no profile that large.
absl::StatusOr<std::vector<std::string>> ProfilesOfSize(const std::vector<std::string>& models,
                                                        const MigSize& size);

// `gpu.mig`: a name, a list of names, or a size expanded against `models`
// (ProfilesOfSize; its error is reported at the field). `models` is nullptr
// when the class's gpu.models could not be read: a size is then left
// unexpanded without a second error. Empty when absent or unreadable.
std::vector<std::string> ReadClassMig(const Field& field, const std::vector<std::string>* models,
                                      Diagnostics& diagnostics);

// A pool's `mig`; the default (whole) when absent.
std::optional<core::MigLayout> ReadPoolMig(const Field& field, Diagnostics& diagnostics);

// The value rules of a slice class's GPU requirement; `gpu_path` is the
// class's "classes[3] (s).gpu". Whole-GPU and CPU classes are not judged.
void CheckClassMig(absl::string_view gpu_path, const core::GpuRequirement& gpu,
                   Diagnostics& diagnostics);

// The value rules of a pool's layout; `pool_path` is "pools[1] (gpu-h200)".
void CheckPoolMig(absl::string_view pool_path, const core::NodePool& pool,
                  Diagnostics& diagnostics);

// The values after their keys, in the forms the readers take back.
void EmitClassMig(YAML::Emitter& out, const std::vector<std::string>& profiles);
void EmitPoolMig(YAML::Emitter& out, const core::MigLayout& layout);
// On one line, for diffs: "whole", "fixed [3g.71gb, 1g.18gb]".
std::string FormatMigLayout(const core::MigLayout& layout);

}  // namespace wsched::catalog

#endif  // WSCHED_SERVER_CATALOG_MIG_H_
