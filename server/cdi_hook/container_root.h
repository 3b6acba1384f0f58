// Where the container's root filesystem is, from what an OCI runtime hands
// a hook: the container's state on stdin names its bundle, and the bundle's
// config.json names the root (absolute, or relative to the bundle). runc and
// crun run createContainer hooks in the container's mount namespace before
// it pivots into that root, so the path shows the root with every mount of
// the spec in place.
#ifndef WSCHED_SERVER_CDI_HOOK_CONTAINER_ROOT_H_
#define WSCHED_SERVER_CDI_HOOK_CONTAINER_ROOT_H_

#include <functional>
#include <optional>
#include <string>

namespace wsched::cdi_hook {

// Reads a whole file; nullopt when it cannot.
using ReadFileFn = std::function<std::optional<std::string>(const std::string& path)>;

// The container's root directory; on failure an error in `error` and "".
// Refuses "/": a hook must never rebuild the host's own linker cache.
std::string ContainerRoot(const std::string& state_json, const ReadFileFn& read_file,
                          std::string& error);

}  // namespace wsched::cdi_hook

#endif  // WSCHED_SERVER_CDI_HOOK_CONTAINER_ROOT_H_
