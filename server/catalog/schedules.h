// The warm-buffer and scale-down schedules of a pool in catalog YAML:
//
//   warm_buffer: 2                      # a constant, or a schedule:
//   warm_buffer:
//     default: 0                        # outside every window
//     time_zone: Europe/Berlin          # IANA name or +HH:MM; default UTC
//     windows:
//       - {days: [mon-fri], from: "08:00", to: "18:00", nodes: 2}
//   scale_down:
//     schedule:
//       default: true                   # allowed outside every window
//       time_zone: Europe/Berlin
//       windows:
//         - {days: [mon-fri], from: "08:00", to: "18:00", allow: false}
//
// Reading, the value rules and writing back live together here so the three
// stay in step. Reference: docs/catalog.md "Schedules".
#ifndef WSCHED_SERVER_CATALOG_SCHEDULES_H_
#define WSCHED_SERVER_CATALOG_SCHEDULES_H_

#include <optional>
#include <string>

#include "absl/strings/string_view.h"
#include "server/catalog/diagnostics.h"
#include "server/catalog/yaml_fields.h"
#include "server/core/pool.h"
#include "yaml-cpp/yaml.h"

namespace wsched::catalog {

// Readers: nullopt for an absent field; a malformed part is reported at its
// path and the rest still read.
std::optional<core::WarmBuffer> ReadWarmBuffer(const Field& field, Diagnostics& diagnostics);
std::optional<core::ScaleDownSchedule> ReadScaleDownSchedule(const Field& field,
                                                             Diagnostics& diagnostics);

// Value rules; `path` is the field itself ("pools[0] (gpu).warm_buffer").
void CheckWarmBuffer(absl::string_view path, const core::WarmBuffer& buffer, int max_size,
                     Diagnostics& diagnostics);
void CheckScaleDownSchedule(absl::string_view path, const core::ScaleDownSchedule& schedule,
                            Diagnostics& diagnostics);

// Writers of the value (after its key), in the form the readers take back.
// A constant buffer is a plain integer.
void EmitWarmBuffer(YAML::Emitter& out, const core::WarmBuffer& buffer);
void EmitScaleDownSchedule(YAML::Emitter& out, const core::ScaleDownSchedule& schedule);
// The same on one line, for diffs.
std::string FormatWarmBuffer(const core::WarmBuffer& buffer);
std::string FormatScaleDownSchedule(const core::ScaleDownSchedule& schedule);

}  // namespace wsched::catalog

#endif  // WSCHED_SERVER_CATALOG_SCHEDULES_H_
