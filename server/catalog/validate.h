// The rules a catalog's values must follow, on core types, so that catalogs
// built from YAML and catalogs sent over gRPC are held to the same rules.
#ifndef WSCHED_SERVER_CATALOG_VALIDATE_H_
#define WSCHED_SERVER_CATALOG_VALIDATE_H_

#include <string>
#include <vector>

#include "server/catalog/diagnostics.h"
#include "server/core/catalog.h"

namespace wsched::catalog {

// Bounds on what one catalog may hold; every string and list is bounded.
inline constexpr int kMaxClasses = 1000;
inline constexpr int kMaxPools = 1000;
inline constexpr int kMaxDriverPolicyEntries = 1000;
inline constexpr int kMaxGpusPerClass = 16;
inline constexpr int kMaxGpusPerNode = 16;
inline constexpr int kMaxPoolSize = 100000;
inline constexpr size_t kMaxDisplayNameBytes = 128;
inline constexpr size_t kMaxDescriptionBytes = 1024;
inline constexpr size_t kMaxCategoryBytes = 64;
inline constexpr size_t kMaxModelNameBytes = 64;
inline constexpr size_t kMaxListEntries = 32;  // models, devices, labels, selector.

// Checks every rule and reports each broken one at its path. `sources` says
// how to name elements (see diagnostics.h). Errors at paths the parser
// already reported are skipped, as are checks that depend on such fields.
void ValidateCatalog(const core::Catalog& catalog, const CatalogSources& sources,
                     Diagnostics& diagnostics, const ValidationOptions& options = {});

// For a catalog that came from no file (gRPC apply): all rules, positional
// paths. Errors and warnings, as in CatalogCheck.
CatalogCheck CheckCatalog(core::Catalog catalog, const ValidationOptions& options = {});

}  // namespace wsched::catalog

#endif  // WSCHED_SERVER_CATALOG_VALIDATE_H_
