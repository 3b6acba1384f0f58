// Catalog-specific quantities on top of core/quantity.h: credits, durations,
// and sizes that must carry a unit.
#ifndef WSCHED_SERVER_CATALOG_UNITS_H_
#define WSCHED_SERVER_CATALOG_UNITS_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "server/core/quantity.h"

namespace wsched::catalog {

// "2.5" -> 2500 milli-credits. At most 3 decimals, >= 0; no exponents, no
// floats in between, so 0.1 stays exactly 100.
absl::StatusOr<int64_t> ParseCreditsMilli(absl::string_view text);
// 2500 -> "2.5", 3000 -> "3", 125 -> "0.125".
std::string FormatCreditsMilli(int64_t milli);

// core::ParseBytes, but a bare number is refused: "memory: 16" is almost
// always 16Gi meant, not 16 bytes.
absl::StatusOr<int64_t> ParseSizeWithUnit(absl::string_view text);

// Canonical text for a size (core::FormatSize, "16Gi" or "1G") reads back
// through ParseSizeWithUnit when it has a unit. Sizes that are a multiple of
// neither 1Ki nor 1k have no such text; validation refuses them.
using core::FormatSize;
bool HasSizeText(int64_t bytes);

// "10m", "30s", "1h30m" (absl::ParseDuration); finite and >= 0.
absl::StatusOr<absl::Duration> ParseCatalogDuration(absl::string_view text);
// The inverse: "10m", "1h30m", "0".
std::string FormatCatalogDuration(absl::Duration duration);

}  // namespace wsched::catalog

#endif  // WSCHED_SERVER_CATALOG_UNITS_H_
