// The names stored documents give enum values (schema version 1: the names
// the wsched.v1 enums had when the store adopted them). Each list holds
// every value in number order, so a value stored by number reads too.
#ifndef WSCHED_SERVER_STORE_DOCUMENTS_ENUMS_H_
#define WSCHED_SERVER_STORE_DOCUMENTS_ENUMS_H_

#include <utility>
#include <vector>

#include "server/core/node.h"
#include "server/core/workspace_class.h"

namespace wsched::store::documents {

using EnumNames = std::vector<std::pair<const char*, int>>;

inline const EnumNames& IsolationNames() {
  static const EnumNames names = {{"ISOLATION_UNSPECIFIED", static_cast<int>(core::Isolation::kContainer)},
                                  {"ISOLATION_CONTAINER", static_cast<int>(core::Isolation::kContainer)},
                                  {"ISOLATION_VM", static_cast<int>(core::Isolation::kVm)}};
  return names;
}

inline const EnumNames& GpuLinksNames() {
  static const EnumNames names = {
      {"GPU_LINKS_UNSPECIFIED", static_cast<int>(core::GpuLinks::kAny)},
      {"GPU_LINKS_ANY", static_cast<int>(core::GpuLinks::kAny)},
      {"GPU_LINKS_NVLINK_PREFERRED", static_cast<int>(core::GpuLinks::kNvlinkPreferred)},
      {"GPU_LINKS_NVLINK_REQUIRED", static_cast<int>(core::GpuLinks::kNvlinkRequired)}};
  return names;
}

inline const EnumNames& CdiModeNames() {
  static const EnumNames names = {{"CDI_MODE_UNSPECIFIED", static_cast<int>(core::CdiMode::kInline)},
                                  {"CDI_MODE_WSCHED", static_cast<int>(core::CdiMode::kWsched)},
                                  {"CDI_MODE_NVIDIA", static_cast<int>(core::CdiMode::kNvidia)}};
  return names;
}

// The name written for a value: the first in the list that has it.
inline const char* NameOf(const EnumNames& names, int value, int skip = 0) {
  for (size_t i = skip; i < names.size(); ++i) {
    if (names[i].second == value) return names[i].first;
  }
  return names[0].first;
}

}  // namespace wsched::store::documents

#endif  // WSCHED_SERVER_STORE_DOCUMENTS_ENUMS_H_
