// The hook's two jobs, done inside the container's root: a child process
// chroots into it first, so every path (and every symlink an image may
// plant, e.g. /etc/ld.so.conf.d -> /host/etc) resolves within the container
// and never on the host. Nothing of the image runs: the linker cache is
// built by the host's own (static) ldconfig, opened before the chroot.
#ifndef WSCHED_SERVER_CDI_HOOK_IN_CONTAINER_H_
#define WSCHED_SERVER_CDI_HOOK_IN_CONTAINER_H_

#include <string>
#include <vector>

#include "server/cdi_hook/hook_command.h"

namespace wsched::cdi_hook {

// The file the hook owns in the container; "00-" sorts it before the
// image's own entries, so the node's driver wins over a stale copy.
inline constexpr char kLdsoConfFile[] = "/etc/ld.so.conf.d/00-wsched-driver.conf";

// ld.so.conf.d's content for `folders`: one per line, each once.
std::string LdsoConfContent(const std::vector<std::string>& folders);

// The system library directories of both glibc layouts (Debian's multiarch
// and RHEL's lib64) for the hook's architecture: passed to ldconfig where
// the container has them, because the host's ldconfig knows only its own
// distribution's defaults.
std::vector<std::string> SystemLibraryDirs();

// ldconfig's arguments: the container's configuration and cache, plus
// `present_system_dirs`.
std::vector<std::string> LdconfigArgs(const std::vector<std::string>& present_system_dirs);

// Each runs in a child chrooted to `root`; false with `error` on failure.
bool CreateSymlinksIn(const std::string& root, const CreateSymlinks& command, std::string& error);
bool UpdateLdcacheIn(const std::string& root, const UpdateLdcache& command, std::string& error);

}  // namespace wsched::cdi_hook

#endif  // WSCHED_SERVER_CDI_HOOK_IN_CONTAINER_H_
