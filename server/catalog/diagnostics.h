// How catalog errors are named and collected.
//
// Every message is "<path>: <what is wrong>", where the path names the place
// the way the admin wrote it: list name, index in the file, and the id when
// it is a valid one, then the field: `pools[1] (gpu-a100).max_size`. Catalogs
// loaded from a directory put the file name in front:
// `gpu.yaml: classes[0] (gpu-1x).gpu.count`.
#ifndef WSCHED_SERVER_CATALOG_DIAGNOSTICS_H_
#define WSCHED_SERVER_CATALOG_DIAGNOSTICS_H_

#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "server/core/catalog.h"
#include "server/core/validation.h"

namespace wsched::catalog {

// Where one element of a catalog list was written.
struct ElementSource {
  std::string file;  // Empty for a single text or file.
  int index = 0;     // Position in that file's list.
};

// Parallel to the lists of a core::Catalog: where each element came from.
struct CatalogSources {
  std::vector<ElementSource> classes;
  std::vector<ElementSource> pools;
  std::vector<ElementSource> driver_policy;

  // Sources for a catalog that came from no file (gRPC): index i is i.
  static CatalogSources Positional(const core::Catalog& catalog);
};

// "classes[2] (large)"; "gpu.yaml: pools[0] (gpu-a100)". The id is shown only
// when it is a DNS label, so a broken or huge id never garbles the path.
std::string ElementPath(absl::string_view list, const ElementSource& source, absl::string_view id);

// `parent.key`; a bare `key` under the top level of a text ("" or "file: ").
std::string FieldPath(absl::string_view parent, absl::string_view key);

// Errors and warnings of one catalog check.
//
// The parser and the validator both report here. A field the parser could not
// read is left at its zero value in the catalog, so the validator would
// complain about it again ("is required"); those repeats are dropped, and the
// validator asks HasParseErrorUnder() before cross-field checks whose answer
// a broken field would make meaningless.
class Diagnostics {
 public:
  // An error found while reading the YAML (types, formats, unknown keys).
  void ParseError(absl::string_view path, absl::string_view message);
  // A rule broken by the values; dropped when the parser already failed on
  // this path or on one above it (an unreadable `resources` map need not be
  // followed by "resources.cpu: is required").
  void Error(absl::string_view path, absl::string_view message);
  // Something legal but probably unintended; never makes a check fail.
  void Warning(absl::string_view path, absl::string_view message);

  // Notes that some elements of a top-level list ("classes", "pools",
  // "driver_policy") could not be read at all, so checks over the whole list
  // ("exactly one default", "no pool can hold") would judge a partial list.
  void MarkIncomplete(absl::string_view list);
  bool IsIncomplete(absl::string_view list) const;

  bool HasParseErrorAt(absl::string_view path) const;
  // True when the parser failed on `path` or on a path it lies under.
  bool HasParseErrorAtOrAbove(absl::string_view path) const;
  // True when the parser failed on `prefix` or on any field below it.
  bool HasParseErrorUnder(absl::string_view prefix) const;

  bool ok() const { return errors_.empty(); }
  const std::vector<std::string>& errors() const { return errors_.errors(); }
  const std::vector<std::string>& warnings() const { return warnings_.errors(); }

 private:
  core::ErrorList errors_;
  core::ErrorList warnings_;
  std::set<std::string, std::less<>> parse_error_paths_;
  std::set<std::string, std::less<>> incomplete_lists_;
};

// The rules an installation sets rather than the catalog format (server
// flags); the defaults are what `wschedctl catalog check` applies.
struct ValidationOptions {
  // The shortest idle `for` a class may give (--min_idle_for): a few
  // heartbeats (10 s apart by default) must decide, not one.
  absl::Duration min_idle_for = absl::Minutes(1);
};

// The outcome of checking a catalog input: the catalog, only meaningful when
// there are no errors, and every error and warning found.
struct CatalogCheck {
  core::Catalog catalog;
  std::vector<std::string> errors;    // "path: message", structure errors first.
  std::vector<std::string> warnings;  // Same shape; do not block an apply.
  // What it was checked with, for a later check of what it becomes
  // (an apply that keeps classes in use).
  ValidationOptions rules;

  bool ok() const { return errors.empty(); }
};

CatalogCheck ToCheck(core::Catalog catalog, const Diagnostics& diagnostics);

// InvalidArgument with every error on its own line, or OK.
absl::Status CheckStatus(const CatalogCheck& check);

}  // namespace wsched::catalog

#endif  // WSCHED_SERVER_CATALOG_DIAGNOSTICS_H_
