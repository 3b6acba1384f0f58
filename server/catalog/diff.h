// What applying one catalog over another would change: the --dry-run output
// and the audit record of an apply.
#ifndef WSCHED_SERVER_CATALOG_DIFF_H_
#define WSCHED_SERVER_CATALOG_DIFF_H_

#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "server/core/catalog.h"

namespace wsched::catalog {

enum class ChangeKind { kAdd, kUpdate, kRemove, kDeprecate };
enum class ObjectKind { kClass, kPool, kDriverPolicy };

struct CatalogChange {
  ChangeKind kind = ChangeKind::kAdd;
  ObjectKind object = ObjectKind::kClass;
  // The class or pool id; for a driver policy entry, which has none,
  // "<os_id>[-<os_version>]/<kernel>", the key it is matched by.
  std::string id;
  // Add: a one-line summary. Update: every changed field as
  // "field old -> new", joined by "; " (`resources.memory 8Gi -> 16Gi`).
  // Remove: empty. Deprecate: why it was kept.
  std::string detail;
  friend bool operator==(const CatalogChange&, const CatalogChange&) = default;
};

// "add", "update", "remove", "deprecate".
const char* ChangeKindName(ChangeKind kind);
// "class", "pool", "driver_policy".
const char* ObjectKindName(ObjectKind object);
// "update class large: resources.memory 8Gi -> 16Gi".
std::string DescribeChange(const CatalogChange& change);

inline std::ostream& operator<<(std::ostream& out, const CatalogChange& change) {
  return out << DescribeChange(change);
}

// Changes from `from` to `to`: classes, then pools, then driver policy;
// adds and updates in `to`'s order, removals in `from`'s. Classes compare
// by everything an admin sets (not `version`). Unchanged objects are left out.
std::vector<CatalogChange> DiffCatalogs(const core::Catalog& from, const core::Catalog& to);

// Removing a class that running workspaces use would strand them, so the
// caller (which knows what is running) turns those removals into kDeprecate.
std::vector<CatalogChange> DeprecateInsteadOfRemoving(
    std::vector<CatalogChange> changes, const std::set<std::string>& in_use_class_ids);

// The catalog to store for such an apply: `to`, plus every class of `from`
// that `to` drops but running workspaces use, kept as deprecated and not
// default. Validate the result again: a kept class still needs a pool.
core::Catalog KeepInUseClasses(const core::Catalog& from, const core::Catalog& to,
                               const std::set<std::string>& in_use_class_ids);

}  // namespace wsched::catalog

#endif  // WSCHED_SERVER_CATALOG_DIFF_H_
