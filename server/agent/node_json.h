// A discovered node as pretty JSON, for operators (`wsched-agent --print`).
#ifndef WSCHED_SERVER_AGENT_NODE_JSON_H_
#define WSCHED_SERVER_AGENT_NODE_JSON_H_

#include <string>
#include <vector>

#include "server/core/iommu.h"
#include "server/core/node.h"

namespace wsched::agent {

// core::ClassifyPassthrough for every GPU of the node, in the node's order.
std::vector<core::PassthroughSafety> ClassifyGpus(const core::NodeInfo& node);

// `safety[i]` belongs to `node.gpus[i]` and becomes that GPU's
// passthrough_safe / passthrough_unsafe_reason, so an operator sees why a GPU
// would be kept out of VM placements before the server ever does.
std::string NodeInfoToJson(const core::NodeInfo& node,
                           const std::vector<core::PassthroughSafety>& safety);

}  // namespace wsched::agent

#endif  // WSCHED_SERVER_AGENT_NODE_JSON_H_
