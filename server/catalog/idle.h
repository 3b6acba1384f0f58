// A class's idle-GPU policy in catalog YAML:
//
//   idle: {gpu_utilization_below: 5%, for: 30m, action: stop, warn_before: 5m}
//
// Reading, the value rules and writing back live together here so the three
// stay in step. Reference: docs/catalog.md "Idle GPUs".
#ifndef WSCHED_SERVER_CATALOG_IDLE_H_
#define WSCHED_SERVER_CATALOG_IDLE_H_

#include <optional>
#include <string>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "server/catalog/diagnostics.h"
#include "server/catalog/yaml_fields.h"
#include "server/core/idle_policy.h"
#include "yaml-cpp/yaml.h"

namespace wsched::catalog {

// nullopt for an absent field; a malformed part is reported at its path.
std::optional<core::IdlePolicy> ReadIdlePolicy(const Field& field, Diagnostics& diagnostics);

// The value rules; `path` is the field itself ("classes[3] (gpu-1x).idle").
void CheckIdlePolicy(absl::string_view path, const core::IdlePolicy& idle, bool gpu_class,
                     absl::Duration min_idle_for, Diagnostics& diagnostics);

// The value (after its key), in the form ReadIdlePolicy takes back.
void EmitIdlePolicy(YAML::Emitter& out, const core::IdlePolicy& idle);
// The same on one line, for diffs; "none" when unset.
std::string FormatIdlePolicy(const std::optional<core::IdlePolicy>& idle);

}  // namespace wsched::catalog

#endif  // WSCHED_SERVER_CATALOG_IDLE_H_
