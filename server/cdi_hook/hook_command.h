// What the runtime asked wsched-cdi-hook to do, from its arguments. The two
// subcommands and their flags are those of NVIDIA's nvidia-cdi-hook, so the
// agent's spec names either hook the same way (docs/agent.md):
//   wsched-cdi-hook create-symlinks --link TARGET::LINK ...
//   wsched-cdi-hook update-ldcache --folder DIR ... [--ldconfig-path PATH]
// Plain C++ without Abseil: the hook is linked statically so that it runs
// on any host distribution, and Debian ships Abseil for dynamic linking.
#ifndef WSCHED_SERVER_CDI_HOOK_HOOK_COMMAND_H_
#define WSCHED_SERVER_CDI_HOOK_HOOK_COMMAND_H_

#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace wsched::cdi_hook {

// A symbolic link to make inside the container: `link` (absolute, in the
// container) pointing at `target` (as given: "libcuda.so.550.54.15" is
// relative to the link's directory).
struct Symlink {
  std::string target;
  std::string link;
};

struct CreateSymlinks {
  std::vector<Symlink> links;
};

struct UpdateLdcache {
  std::vector<std::string> folders;            // Absolute, in the container.
  std::string ldconfig_path = "/sbin/ldconfig";  // The host's, run inside the container's root.
};

using HookCommand = std::variant<CreateSymlinks, UpdateLdcache>;

// The command of argv[1..]; on bad input an error naming the argument and
// the rule, in `error`.
bool ParseHookCommand(const std::vector<std::string>& args, HookCommand& command,
                      std::string& error);

}  // namespace wsched::cdi_hook

#endif  // WSCHED_SERVER_CDI_HOOK_HOOK_COMMAND_H_
