// Catalog YAML (what ApplyCatalog and --catalog read): parse and validate
// any text without crashing, and round-trip every catalog that validates:
// ParseCatalog(RenderCatalogYaml(c)) must give c back (server/catalog/render.h).
#include <cstddef>
#include <cstdint>
#include <string>

#include "server/catalog/diff.h"
#include "server/catalog/load.h"
#include "server/catalog/render.h"
#include "tests/fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > (1 << 16)) return 0;  // Size is not what is being searched here.
  std::string text(reinterpret_cast<const char*>(data), size);
  wsched::catalog::CatalogCheck check = wsched::catalog::CheckCatalogText(text);
  if (!check.ok()) return 0;
  const std::string rendered = wsched::catalog::RenderCatalogYaml(check.catalog);
  auto back = wsched::catalog::ParseCatalog(rendered);
  FUZZ_CHECK(back.ok(), "a valid catalog renders to YAML that does not parse: %s\n%s",
             std::string(back.status().message()).c_str(), rendered.c_str());
  FUZZ_CHECK(back->classes == check.catalog.classes && back->pools == check.catalog.pools &&
                 back->driver_policy == check.catalog.driver_policy,
             "the rendered catalog reads back different:\n%s", rendered.c_str());
  FUZZ_CHECK(wsched::catalog::DiffCatalogs(check.catalog, *back).empty(),
             "a catalog differs from its own round trip:\n%s", rendered.c_str());
  FUZZ_CHECK(wsched::catalog::RenderCatalogYaml(*back) == rendered,
             "rendering is not stable:\n%s", rendered.c_str());
  return 0;
}
