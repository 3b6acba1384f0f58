#include "server/catalog/diagnostics.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "server/core/error_reason.h"

namespace wsched::catalog {
namespace {

std::vector<ElementSource> Indices(size_t count) {
  std::vector<ElementSource> sources(count);
  for (size_t i = 0; i < count; ++i) sources[i].index = static_cast<int>(i);
  return sources;
}

}  // namespace

CatalogSources CatalogSources::Positional(const core::Catalog& catalog) {
  return CatalogSources{Indices(catalog.classes.size()), Indices(catalog.pools.size()),
                        Indices(catalog.driver_policy.size())};
}

std::string ElementPath(absl::string_view list, const ElementSource& source, absl::string_view id) {
  std::string path = source.file.empty() ? "" : absl::StrCat(source.file, ": ");
  absl::StrAppend(&path, list, "[", source.index, "]");
  if (core::IsDnsLabel(id)) absl::StrAppend(&path, " (", id, ")");
  return path;
}

std::string FieldPath(absl::string_view parent, absl::string_view key) {
  if (parent.empty() || absl::EndsWith(parent, ": ")) return absl::StrCat(parent, key);
  return absl::StrCat(parent, ".", key);
}

void Diagnostics::ParseError(absl::string_view path, absl::string_view message) {
  errors_.Add(path, message);
  parse_error_paths_.emplace(path);
}

void Diagnostics::Error(absl::string_view path, absl::string_view message) {
  if (HasParseErrorAtOrAbove(path)) return;
  errors_.Add(path, message);
}

void Diagnostics::Warning(absl::string_view path, absl::string_view message) {
  warnings_.Add(path, message);
}

void Diagnostics::MarkIncomplete(absl::string_view list) { incomplete_lists_.emplace(list); }

bool Diagnostics::IsIncomplete(absl::string_view list) const {
  return incomplete_lists_.find(list) != incomplete_lists_.end();
}

bool Diagnostics::HasParseErrorAt(absl::string_view path) const {
  return parse_error_paths_.find(path) != parse_error_paths_.end();
}

bool Diagnostics::HasParseErrorAtOrAbove(absl::string_view path) const {
  for (size_t i = 0; i < path.size(); ++i) {
    if ((path[i] == '.' || path[i] == '[') && HasParseErrorAt(path.substr(0, i))) return true;
  }
  return HasParseErrorAt(path);
}

bool Diagnostics::HasParseErrorUnder(absl::string_view prefix) const {
  // Paths below `prefix` sort right after it: "p", "p.a", "p[0]"...
  for (auto it = parse_error_paths_.lower_bound(prefix);
       it != parse_error_paths_.end() && absl::StartsWith(*it, prefix); ++it) {
    absl::string_view rest = absl::string_view(*it).substr(prefix.size());
    if (rest.empty() || rest[0] == '.' || rest[0] == '[') return true;
  }
  return false;
}

CatalogCheck ToCheck(core::Catalog catalog, const Diagnostics& diagnostics) {
  return CatalogCheck{std::move(catalog), diagnostics.errors(), diagnostics.warnings()};
}

absl::Status CheckStatus(const CatalogCheck& check) {
  if (check.ok()) return absl::OkStatus();
  return core::InvalidFieldLinesError(check.errors);
}

}  // namespace wsched::catalog
