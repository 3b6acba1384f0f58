// Rules for what an agent may report about a node. Every broken rule is
// reported with its field path; nothing is stored unless all hold.
#ifndef WSCHED_SERVER_CORE_NODE_VALIDATION_H_
#define WSCHED_SERVER_CORE_NODE_VALIDATION_H_

#include "absl/status/status.h"
#include "server/core/node.h"

namespace wsched::core {

inline constexpr int kMaxGpusPerNode = 64;
inline constexpr int kMaxIommuGroupMembers = 64;
inline constexpr int kMaxControlDevices = 16;
inline constexpr int kMaxCdiExtraDevices = 16;
inline constexpr int kMaxCdiProblems = 16;

// INVALID_ARGUMENT listing every error as "node.gpus[2].uuid: ..." (the
// prefix names the request field), or OK.
absl::Status ValidateNodeInfo(const NodeInfo& node, absl::string_view prefix = "node");

}  // namespace wsched::core

#endif  // WSCHED_SERVER_CORE_NODE_VALIDATION_H_
