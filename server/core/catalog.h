// The catalog an admin maintains: classes, pools and the driver policy.
#ifndef WSCHED_SERVER_CORE_CATALOG_H_
#define WSCHED_SERVER_CORE_CATALOG_H_

#include "absl/strings/string_view.h"
#include <vector>

#include "server/core/driver_policy.h"
#include "server/core/pool.h"
#include "server/core/workspace_class.h"

namespace wsched::core {

struct Catalog {
  std::vector<WorkspaceClass> classes;
  std::vector<NodePool> pools;
  std::vector<DriverPolicyEntry> driver_policy;

  const WorkspaceClass* FindClass(absl::string_view id) const {
    for (const auto& c : classes) {
      if (c.id == id) return &c;
    }
    return nullptr;
  }
  const NodePool* FindPool(absl::string_view id) const { return core::FindPool(pools, id); }
  const WorkspaceClass* DefaultClass() const {
    for (const auto& c : classes) {
      if (c.is_default) return &c;
    }
    return nullptr;
  }
};

}  // namespace wsched::core

#endif  // WSCHED_SERVER_CORE_CATALOG_H_
