// Rules for a GPU's reported MIG state and links (core/mig.h), part of
// ValidateNodeInfo: slices must sit at legal, non-overlapping placements of
// profiles the GPU reports, and a link must name another GPU of the node.
#ifndef WSCHED_SERVER_CORE_MIG_VALIDATION_H_
#define WSCHED_SERVER_CORE_MIG_VALIDATION_H_

#include <set>
#include <string>

#include "server/core/node.h"
#include "server/core/validation.h"

namespace wsched::core {

inline constexpr int kMaxMigProfiles = 32;
inline constexpr int kMaxMigInstances = kMigMemorySlots;

// `at` is the GPU's field path ("node.gpus[2]").
void CheckGpuMig(ErrorList& errors, const std::string& at, const GpuMig& mig);
// `indices`: every GPU index of the node; `self` this GPU's.
void CheckGpuLinks(ErrorList& errors, const std::string& at, const Gpu& gpu,
                   const std::set<int>& indices);

}  // namespace wsched::core

#endif  // WSCHED_SERVER_CORE_MIG_VALIDATION_H_
