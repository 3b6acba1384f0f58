// The canonical YAML form of a catalog: what `wschedctl catalog get` prints
// and what a server can write back. ParseCatalog(RenderCatalogYaml(c)) == c
// for every valid catalog (class versions aside: the store owns them).
#ifndef WSCHED_SERVER_CATALOG_RENDER_H_
#define WSCHED_SERVER_CATALOG_RENDER_H_

#include <string>

#include "server/core/catalog.h"

namespace wsched::catalog {

// Canonical units (core::FormatCpuMillis / FormatBytes, "10m" durations),
// built-in devices by name, and fields left out where they hold their
// default (cpu_limit equal to cpu, empty description, default: false...).
std::string RenderCatalogYaml(const core::Catalog& catalog);

}  // namespace wsched::catalog

#endif  // WSCHED_SERVER_CATALOG_RENDER_H_
