// "Could this pool ever hold one workspace of this class?" — the static
// question behind "no pool can ever hold this class". Whether it fits now
// (free GPUs, ready nodes) is the placement engine's business.
#ifndef WSCHED_SERVER_CATALOG_FEASIBILITY_H_
#define WSCHED_SERVER_CATALOG_FEASIBILITY_H_

#include <optional>
#include <string>

#include "server/core/pool.h"
#include "server/core/workspace_class.h"

namespace wsched::catalog {

// Why no node of `pool` can ever hold one workspace of `cls`, or nullopt
// when one can. Checks, in order: the pool can grow at all (max_size > 0),
// the selector matches its labels, GPU model and count (a GPU class needs
// a GPU pool offering one of its models, empty = any, with at least
// gpu.count GPUs per node), that a CPU class only lands on a GPU pool when
// its selector asks for that pool (CPU work stays off GPU nodes by default),
// and that CPU, memory, ephemeral storage and disk of one node suffice.
// Storage is only compared when the pool states it.
std::optional<std::string> WhyPoolCannotHold(const core::WorkspaceClass& cls,
                                             const core::NodePool& pool);

}  // namespace wsched::catalog

#endif  // WSCHED_SERVER_CATALOG_FEASIBILITY_H_
