// Reading catalog YAML into core types: shapes, types, formats, unknown keys.
// Rules about the values themselves live in validate.h.
#ifndef WSCHED_SERVER_CATALOG_PARSE_H_
#define WSCHED_SERVER_CATALOG_PARSE_H_

#include <cstddef>

#include "absl/strings/string_view.h"
#include "server/catalog/diagnostics.h"
#include "server/core/catalog.h"

namespace wsched::catalog {

// A catalog text larger than this is refused before parsing.
inline constexpr size_t kMaxCatalogTextBytes = 4 << 20;

// Reads one YAML text and appends its classes, pools and driver policy to
// `catalog` (and where each came from to `sources`), reporting every problem
// to `diagnostics`. Elements with broken fields are still appended, with the
// broken fields left at their defaults, so that validation can check the
// rest of them; a caller must not use the catalog when there are errors.
// `file` prefixes every path ("gpu.yaml: classes[0]..."); empty for none.
void ReadCatalogYaml(absl::string_view yaml_text, absl::string_view file, core::Catalog& catalog,
                     CatalogSources& sources, Diagnostics& diagnostics);

}  // namespace wsched::catalog

#endif  // WSCHED_SERVER_CATALOG_PARSE_H_
