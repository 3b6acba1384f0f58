// Entry points: a catalog from YAML text, a file, or a directory of files,
// read and validated as a whole (all or nothing).
#ifndef WSCHED_SERVER_CATALOG_LOAD_H_
#define WSCHED_SERVER_CATALOG_LOAD_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "server/catalog/diagnostics.h"
#include "server/catalog/validate.h"
#include "server/core/catalog.h"

namespace wsched::catalog {

// Every error and warning of one YAML text; paths like `classes[2] (large).gpu.count`.
CatalogCheck CheckCatalogText(absl::string_view yaml_text, const ValidationOptions& options = {});

// The catalog, or InvalidArgument listing every error, one per line.
absl::StatusOr<core::Catalog> ParseCatalog(absl::string_view yaml_text,
                                           const ValidationOptions& options = {});

// `path` is a YAML file, or a directory whose *.yaml and *.yml files (not
// hidden ones, not subdirectories) are read in name order and merged: their
// classes, pools and driver_policy lists are concatenated and then
// validated together, so ids must be unique across files and exactly one
// file marks the default class. Paths in errors start with the file name
// when a directory was read ("gpu.yaml: classes[0] (gpu-1x).gpu.count").
// A missing or unreadable path is an error in the check, not a crash.
CatalogCheck CheckCatalogPath(const std::string& path, const ValidationOptions& options = {});

// The catalog, NotFound for a missing path, or InvalidArgument listing every error.
absl::StatusOr<core::Catalog> LoadCatalog(const std::string& path,
                                          const ValidationOptions& options = {});

}  // namespace wsched::catalog

#endif  // WSCHED_SERVER_CATALOG_LOAD_H_
