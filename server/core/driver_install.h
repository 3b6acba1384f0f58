// Who runs a GPU node's driver installer, and when a node's agent runs it
// itself (docs/operations.md "Driver installs").
#ifndef WSCHED_SERVER_CORE_DRIVER_INSTALL_H_
#define WSCHED_SERVER_CORE_DRIVER_INSTALL_H_

#include <optional>

#include "absl/strings/string_view.h"
#include "server/core/node.h"
#include "server/core/pool.h"

namespace wsched::core {

// Whether an installer found its build in the driver cache (keyed by
// driver, kernel and OS), as it reports it (docs/agent.md "The installer
// contract"): install times are kept apart by it.
enum class DriverCache { kUnknown, kHit, kMiss };

// "", "hit", "miss".
const char* DriverCacheName(DriverCache cache);
std::optional<DriverCache> ParseDriverCache(absl::string_view name);

// What an installer's output says of the cache: its last line
// `wsched-driver-cache: hit` or `... miss` (docs/agent.md "The installer
// contract"); kUnknown when it says neither. Read by both faces' runners.
DriverCache DriverCacheReportIn(absl::string_view output);

// "manual", "node", "cluster" (the catalog's driver_install values).
const char* DriverInstallName(DriverInstall face);
std::optional<DriverInstall> ParseDriverInstall(absl::string_view name);

// Whether the agent of a node in a pool with `face` is handed the install
// job in its registration and heartbeat answers: only in a `node` pool, and
// while the node lacks its driver. An installing node is handed it too, so
// that an agent restarted mid-install starts again instead of leaving the
// node installing for ever; a failed one too, the agent retrying with
// backoff.
bool AgentRunsDriverInstall(DriverInstall face, DriverState state);

}  // namespace wsched::core

#endif  // WSCHED_SERVER_CORE_DRIVER_INSTALL_H_
