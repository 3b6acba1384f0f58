// Exact resource quantities: CPU in millicores, sizes in bytes. Never floats.
#ifndef WSCHED_SERVER_CORE_QUANTITY_H_
#define WSCHED_SERVER_CORE_QUANTITY_H_

#include <cstdint>
#include <string>
#include "absl/strings/string_view.h"

#include "absl/status/statusor.h"

namespace wsched::core {

// Parses a CPU quantity: "4" (cores), "500m" (millicores), "1.5" (cores,
// at most 3 decimals). Returns millicores; must be > 0.
absl::StatusOr<int64_t> ParseCpuMillis(absl::string_view text);

// Parses a size: plain bytes ("1024") or with a binary ("Ki", "Mi", "Gi",
// "Ti") or decimal ("k", "M", "G", "T") suffix. Must be > 0. Errors for
// common mistakes ("16GB") suggest the right spelling ("16Gi").
absl::StatusOr<int64_t> ParseBytes(absl::string_view text);

// Canonical text for a CPU quantity: "4" for whole cores, else "1500m".
std::string FormatCpuMillis(int64_t millis);

// Canonical text for a size: the largest binary suffix that divides it.
std::string FormatBytes(int64_t bytes);

// Text for a size as an operator writes it: FormatBytes ("16Gi"), or the
// largest decimal suffix that divides it when no binary one does ("1G",
// not "1000000000"), else plain bytes. Reads back through ParseBytes.
std::string FormatSize(int64_t bytes);

}  // namespace wsched::core

#endif  // WSCHED_SERVER_CORE_QUANTITY_H_
